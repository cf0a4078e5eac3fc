import Foundation
import MAMPolicy
import MAMWire

/// One app of an app catalog (docs/CATALOG.md): what a stand-in for it declares when no `Apps/`
/// folder provides it.
public struct CatalogEntry: Sendable, Hashable {
    public var name: String
    public var bundleID: String
    public var sdk: Bool
    public var multiIdentity: Bool
    /// Schemes it handles and asks about, lower-cased, without the SDK's `-intunemam` twins
    /// (the stand-in's manifest adds them for an SDK app, as the SDK's build step does).
    public var urlSchemes: [String]
    public var queriedSchemes: [String]
    /// Document types it opens (its `CFBundleDocumentTypes`) and hands out on import.
    public var opens: [String]
    public var serves: [String]
    /// Handles web links (http, https): a browser.
    public var browser: Bool
    /// The managed browser a policy's link rewrite sends to (`microsoft-edge-http(s)`).
    public var managedBrowser: Bool
    /// Handles phone links (`tel`, `telprompt`).
    public var dialer: Bool
    /// Where each fact comes from.
    public var sources: [String]
    /// A Microsoft app, and whether it is one of the core Microsoft apps: what a policy's
    /// `appGroupType` of `allMicrosoftApps` or `allCoreMicrosoftApps` targets.
    public var microsoftApp: MicrosoftApp?

    public enum MicrosoftApp: String, Sendable, Hashable, CaseIterable { case core, other }

    /// What people call the app: its name without what the parentheses add ("Gmail" for
    /// "Gmail (personal mail)").
    public var shortName: String {
        guard let open = name.firstIndex(of: "("), open > name.startIndex else { return name }
        return name[..<open].trimmingCharacters(in: .whitespaces)
    }

    /// `name` names this app: its bundle id, its name or its short name, in any case.
    public func isNamed(_ name: String) -> Bool {
        let n = name.lowercased()
        return bundleID.lowercased() == n || self.name.lowercased() == n || shortName.lowercased() == n
    }

    public init(name: String, bundleID: String, sdk: Bool = true, multiIdentity: Bool = false, urlSchemes: [String] = [],
                queriedSchemes: [String] = [], opens: [String] = [], serves: [String] = [], browser: Bool = false,
                managedBrowser: Bool = false, dialer: Bool = false, sources: [String] = []) {
        self.name = name
        self.bundleID = bundleID
        self.sdk = sdk
        self.multiIdentity = multiIdentity
        self.urlSchemes = urlSchemes.map { $0.lowercased() }
        self.queriedSchemes = queriedSchemes.map { $0.lowercased() }
        self.opens = opens
        self.serves = serves
        self.browser = browser
        self.managedBrowser = managedBrowser
        self.dialer = dialer
        self.sources = sources
    }

    /// Whether a policy that targets `group` targets this app (an app without the SDK is
    /// targeted by none: nothing in it could obey the policy).
    public func belongs(to group: AppGroup) -> Bool {
        guard sdk else { return false }
        switch group {
        case .selectedPublicApps: return false
        case .allCoreMicrosoftApps: return microsoftApp == .core
        case .allMicrosoftApps: return microsoftApp != nil
        case .allApps: return true
        }
    }

    /// The sample program a stand-in runs: the scripted multi-identity SDK app, the
    /// single-identity one, or the app without the SDK. Never a program of the catalog's choosing.
    public var program: String { sdk ? (multiIdentity ? "Mail" : "Docs") : "Notes" }

    /// The schemes the stand-in handles: its own, plus what its roles imply.
    var handledSchemes: [String] {
        var s = urlSchemes
        if browser { s += ["http", "https"] }
        if managedBrowser { s += ["microsoft-edge-http", "microsoft-edge-https"] }
        if dialer { s += ["tel", "telprompt"] }
        var seen = Set<String>()
        return s.filter { seen.insert($0).inserted }
    }

    /// The stand-in's `Info.plist`, as a property list: what the broker and the engine read.
    /// Every string in it passed `AppCatalogFile`'s checks (or is MAMLab's own).
    public var manifestPropertyList: [String: Any] {
        let twin = "-intunemam"
        func withTwins(_ schemes: [String]) -> [String] { sdk ? schemes.flatMap { [$0, $0 + twin] } : schemes }
        var plist: [String: Any] = [
            "CFBundleIdentifier": bundleID,
            "CFBundleName": name,
            "CFBundleDisplayName": "\(name) (stand-in)",
            "CFBundleExecutable": program,
            "CFBundleVersion": "1.0",
            "CFBundlePackageType": "APPL",
            "LSApplicationQueriesSchemes": withTwins(queriedSchemes),
        ]
        let handled = handledSchemes
        if !handled.isEmpty {
            plist["CFBundleURLTypes"] = [["CFBundleURLName": bundleID, "CFBundleURLSchemes": withTwins(handled)]]
        }
        if !opens.isEmpty {
            let types = sdk ? opens.flatMap { [$0, ContentType.twinPrefix + $0] } : opens
            plist["CFBundleDocumentTypes"] = [["CFBundleTypeName": "Documents", "LSItemContentTypes": types]]
        }
        if sdk {
            plist["IntuneMAMSettings"] = ["MultiIdentity": multiIdentity, "AutoEnrollOnLaunch": true] as [String: Any]
        }
        return plist
    }

    /// The stand-in's manifest file: an XML property list.
    public func manifestData() throws -> Data {
        try PropertyListSerialization.data(fromPropertyList: manifestPropertyList, format: .xml, options: 0)
    }
}

/// Reads an app catalog file (docs/CATALOG.md): `{"apps": [entry, ...]}`. Pure: handed bytes;
/// every problem is a diagnostic with file, line, column and key path, all reported at once.
/// The file is an admin's or a stranger's: every string that ends up in a manifest, a file name
/// or a report is checked here.
public enum AppCatalogFile {
    static let entryKeys: Set<String> = ["name", "bundleId", "sdk", "multiIdentity", "urlSchemes", "queriedSchemes", "opens",
                                         "serves", "browser", "managedBrowser", "dialer", "sources", "microsoftApp"]
    public static let maximumEntries = 1000

    public static func load(_ data: Data, file: String) throws(LoadFailure) -> [CatalogEntry] {
        try loadWithWarnings(data, file: file).entries
    }

    /// The entries and the warnings (an entry with no sources); throws on any error.
    public static func loadWithWarnings(_ data: Data, file: String) throws(LoadFailure) -> (entries: [CatalogEntry], warnings: [Diagnostic]) {
        let root = try JSONParser.document(data, file: file)
        var log = DiagnosticLog()
        var entries: [CatalogEntry] = []
        if let members = root.object(&log) {
            for (key, value) in members where key != "apps" && key != "$comment" {
                log.append(value.problem("unknown key \"\(key.prefix(60))\"; a catalog has \"apps\" (and \"$comment\")"))
            }
            if let list = root.member("apps") {
                let items = list.array(&log) ?? []
                if items.count > maximumEntries { log.append(list.problem("\(items.count) apps; a catalog holds at most \(maximumEntries)")) }
                for item in items.prefix(maximumEntries) {
                    guard let e = entry(item, &log) else { continue }
                    if entries.contains(where: { $0.bundleID.lowercased() == e.bundleID.lowercased() }) {
                        log.append(item.member("bundleId")!.problem("a second entry for \(e.bundleID); bundle ids are unique"))
                    }
                    entries.append(e)
                }
            } else {
                log.append(root.problem("missing \"apps\": the list of catalog entries"))
            }
        }
        if log.hasErrors { throw LoadFailure(log.items) }
        return (entries, log.items)
    }

    static func entry(_ item: Located, _ log: inout DiagnosticLog) -> CatalogEntry? {
        guard let members = item.object(&log) else { return nil }
        for (key, value) in members where !entryKeys.contains(key) {
            log.append(value.problem("unknown key \"\(key.prefix(60))\"; known: \(entryKeys.sorted().joined(separator: ", "))"))
        }
        let before = log.items.count
        guard let nameNode = item.member("name"), let name = nameNode.string(&log) else {
            if item.member("name") == nil { log.append(item.problem("missing \"name\": how reports call the app")) }
            return nil
        }
        if name.isEmpty || name.count > 64 || name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == "/" }) {
            log.append(nameNode.problem("a name is 1 to 64 characters, no control characters and no '/'"))
        }
        guard let idNode = item.member("bundleId"), let id = idNode.string(&log) else {
            if item.member("bundleId") == nil { log.append(item.problem("missing \"bundleId\"")) }
            return nil
        }
        if let problem = AppManifest.bundleIDProblem(id) { log.append(idNode.problem("bundle id \"\(id.prefix(80))\" \(problem)")) }
        else if id.hasPrefix("unknown.") { log.append(idNode.problem("bundle ids beginning with \"unknown.\" are the broker's own")) }
        func flag(_ key: String, _ fallback: Bool) -> Bool { item.member(key)?.bool(&log) ?? fallback }
        func list(_ key: String, _ check: (String) -> String?) -> [String] {
            guard let node = item.member(key), let items = node.array(&log) else { return [] }
            if items.count > 64 { log.append(node.problem("at most 64 items")); return [] }
            var out: [String] = []
            for i in items {
                guard let s = i.string(&log) else { continue }
                if let problem = check(s) { log.append(i.problem("\"\(s.prefix(80))\" \(problem)")) } else { out.append(s) }
            }
            return out
        }
        let sdk = flag("sdk", true)
        var entry = CatalogEntry(
            name: name, bundleID: id, sdk: sdk, multiIdentity: flag("multiIdentity", false),
            urlSchemes: list("urlSchemes", schemeProblem), queriedSchemes: list("queriedSchemes", schemeProblem),
            opens: list("opens", typeProblem), serves: list("serves", typeProblem),
            browser: flag("browser", false), managedBrowser: flag("managedBrowser", false), dialer: flag("dialer", false),
            sources: list("sources") { $0.isEmpty || $0.count > 500 ? "is not 1 to 500 characters" : nil })
        if let node = item.member("microsoftApp") { entry.microsoftApp = node.enumeration(CatalogEntry.MicrosoftApp.self, &log) }
        if !sdk && entry.multiIdentity, let node = item.member("multiIdentity") {
            log.append(node.problem("an app without the SDK has no identities: multiIdentity needs sdk"))
        }
        if entry.sources.isEmpty { log.append(item.problem(.warning, "\(name): no \"sources\"; say where the bundle id and schemes come from")) }
        return log.items[before...].contains(where: { $0.severity == .error }) ? nil : entry
    }

    /// RFC 3986 scheme syntax (a letter, then letters, digits, `+`, `-`, `.`), at most 64 bytes;
    /// not a twin (the stand-in adds those).
    static func schemeProblem(_ s: String) -> String? {
        let bytes = Array(s.utf8)
        guard let first = bytes.first, bytes.count <= 64 else { return "is not a URL scheme: 1 to 64 characters" }
        func letter(_ c: UInt8) -> Bool { (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) }
        guard letter(first), bytes.allSatisfy({ letter($0) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2b || $0 == 0x2d || $0 == 0x2e }) else {
            return "is not a URL scheme: a letter, then letters, digits, '+', '-' or '.'"
        }
        if s.lowercased().hasSuffix("-intunemam") { return "is an SDK twin scheme; list the plain one (a stand-in with the SDK declares both)" }
        return nil
    }

    /// A uniform type identifier: reverse-DNS characters, at most 128 bytes; not a twin.
    static func typeProblem(_ s: String) -> String? {
        if s.utf8.count > 128 || AppManifest.bundleIDProblem(s) != nil { return "is not a document type: letters, digits, '-' and '.' between non-empty labels, at most 128 characters" }
        if s.lowercased().hasPrefix(ContentType.twinPrefix) { return "is an SDK twin type; list the plain one" }
        return nil
    }
}

extension Catalog {
    /// The built-in catalog, `Policies/catalog/apps.json` under the project root.
    public static func builtInCatalogPath(root: URL) -> String {
        root.appendingPathComponent("Policies/catalog/apps.json").path
    }

    public static func loadCatalog(_ path: String) throws(LoadFailure) -> [CatalogEntry] {
        try AppCatalogFile.load(try read(path), file: relative(path))
    }

    /// Stand-ins for `bundleIDs` that no installed app has: from the catalog entry when there is
    /// one, else a plain SDK app (named by its bundle id) with a note saying so. An installed
    /// app is never stood in for: its identity belongs to the program built for it.
    public static func standIns(for bundleIDs: [String], installed: [CatalogApp], catalog: [CatalogEntry])
        -> (apps: [CatalogApp], notes: [String]) {
        var apps: [CatalogApp] = []
        var notes: [String] = []
        var seen = Set(installed.map { $0.manifest.bundleID.lowercased() })
        for id in bundleIDs where AppManifest.bundleIDProblem(id) == nil && seen.insert(id.lowercased()).inserted {
            var entry = catalog.first { $0.bundleID.lowercased() == id.lowercased() }
            if entry == nil {
                let like = NearestName.nearest(to: id, in: catalog.map(\.bundleID) + installed.map(\.manifest.bundleID), maximumDistance: 3)
                notes.append("\(id) is in no app catalog\(like.map { " (did you mean \($0)?)" } ?? ""): it runs as a plain single-identity SDK stand-in with no URL schemes")
                entry = CatalogEntry(name: id, bundleID: id, sdk: true, opens: ["com.adobe.pdf", "public.plain-text"])
            }
            guard let e = entry, let data = try? e.manifestData(),
                  let loaded = try? AppManifest.load(data, file: "stand-in \(e.bundleID)") else { continue }
            apps.append(CatalogApp(name: e.name, manifest: loaded.manifest, file: "stand-in", standIn: e))
        }
        return (apps, notes)
    }
}

extension Catalog {
    /// The apps an app group holds: the catalog's entries in it, and for `allApps` every
    /// installed app with the SDK as well.
    public static func members(of group: AppGroup, entries: [CatalogEntry], installed: [CatalogApp]) -> [String] {
        var out = entries.filter { $0.belongs(to: group) }.map(\.bundleID)
        if group == .allApps { out += installed.filter { $0.manifest.integratesSDK }.map(\.manifest.bundleID) }
        var seen = Set<String>()
        return out.filter { seen.insert($0.lowercased()).inserted }
    }

    /// Gives every policy of `tenant` that targets an app group the group's members; returns a
    /// line per policy saying how its group was resolved (`check` and the matrix print them).
    public static func resolveAppGroups(_ tenant: inout Tenant, entries: [CatalogEntry], installed: [CatalogApp]) -> [String] {
        let notes = tenant.policies.indices.compactMap { resolveAppGroup(&tenant.policies[$0], entries: entries, installed: installed) }
        guard !notes.isEmpty else { return notes }
        return notes + appGroupConflicts(&tenant)
    }

    /// A group's members may be apps another policy already targets for the same users: a
    /// conflict the file did not show. The first policy decides (Tenant.policy(app:account:)).
    /// A note per pair of policies; the tenant is reindexed.
    public static func appGroupConflicts(_ tenant: inout Tenant) -> [String] {
        var notes: [String] = []
        var pairs: [String: (first: Int, second: Int, apps: Set<String>, users: Set<Int>)] = [:]
        var order: [String] = []
        for c in tenant.reindex() {
            let key = "\(c.first) \(c.second)"
            if pairs[key] == nil { order.append(key) }
            pairs[key, default: (c.first, c.second, [], [])].apps.insert(c.app)
            pairs[key]?.users.insert(c.user)
        }
        for key in order {
            let c = pairs[key]!
            let first = tenant.policies[c.first].displayName, second = tenant.policies[c.second].displayName
            notes.append("policies \"\(LogText.escaped(first))\" and \"\(LogText.escaped(second))\" both target \(c.users.count) user\(c.users.count == 1 ? "" : "s") for \(c.apps.sorted().joined(separator: ", ")) once app groups are resolved; \"\(LogText.escaped(first))\" decides (the first in the file)")
        }
        return notes
    }

    /// Gives one policy that targets an app group the group's members; returns how the group
    /// was resolved, nil for a policy without one.
    public static func resolveAppGroup(_ policy: inout Policy, entries: [CatalogEntry], installed: [CatalogApp]) -> String? {
        guard let group = policy.appGroup else { return nil }
        let added = policy.resolveAppGroup { members(of: $0, entries: entries, installed: installed) }
        return groupNote(policy, group: group, added: added)
    }

    static func groupNote(_ p: Policy, group: AppGroup, added: [String]) -> String {
        let at = p.appGroupOrigin.map { o in "\(Origin(file: relative(o.file), path: o.path, position: o.position)): " } ?? ""
        let all = p.targetedApps.count, listed = all - added.count
        func apps(_ n: Int) -> String { "\(n) app\(n == 1 ? "" : "s")" }
        let detail = listed == 0 ? (added.isEmpty ? "no app the catalog knows" : "\(apps(all)): \(added.joined(separator: ", "))")
            : "\(apps(all)): the \(listed) it lists" + (added.isEmpty ? ", the catalog adding none" : " and \(added.joined(separator: ", "))")
        // The name is an author's: no control character of it reaches a terminal or a log.
        return "\(at)policy \"\(LogText.escaped(p.displayName))\" targets appGroupType \(group.rawValue), resolved through the app catalog to \(detail)"
    }
}
