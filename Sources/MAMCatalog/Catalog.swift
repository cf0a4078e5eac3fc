import Foundation
import MAMPolicy

/// An app found under `Apps/`: its manifest and the name people call it by.
public struct CatalogApp: Sendable {
    /// The folder name under `Apps/` (e.g. `Mail`).
    public var name: String
    public var manifest: AppManifest
    public var file: String
    /// The catalog entry this app stands in for, when no `Apps/` folder provides it: it runs
    /// the entry's sample program under a manifest generated from the entry (docs/CATALOG.md).
    public var standIn: CatalogEntry?

    public init(name: String, manifest: AppManifest, file: String, standIn: CatalogEntry? = nil) {
        self.name = name
        self.manifest = manifest
        self.file = file
        self.standIn = standIn
    }

    /// The name of the program built for the app: `CFBundleExecutable`, else the folder name.
    public var executableName: String { manifest.executable ?? name }

    /// The program built for the app beside the tools. The name is the manifest author's: one
    /// that is not a single plain path component (a slash, `.` or `..`) names no built program,
    /// so a manifest cannot point the launcher or the broker at a file outside the tool folder.
    public func builtExecutable(in toolDirectory: String = Catalog.toolDirectory) -> String? {
        let n = executableName
        guard !n.isEmpty, !n.contains("/"), n != ".", n != "..", !n.contains("\0") else { return nil }
        return (toolDirectory as NSString).appendingPathComponent(n)
    }
}

/// Reads MAMLab's inputs from disk and hands them to the pure loaders of MAMPolicy.
public enum Catalog {
    /// The project root: `$MAMLAB_ROOT`, else the nearest folder at or above the running
    /// executable that holds both `Apps/` and `Policies/` (the checkout it was built in), else,
    /// for an installed MAMLab (`scripts/package`), `PREFIX/share/mamlab` beside the program's
    /// own `PREFIX/lib/mamlab`.
    ///
    /// Never found from the working folder: root runs these tools, and an `Apps/` and a
    /// `Policies/` another user left above a folder root works in (in /tmp, say) would supply
    /// the tenant, its credentials and the installed apps.
    public static func projectRoot() -> URL? {
        let fm = FileManager.default
        func isRoot(_ u: URL) -> Bool {
            fm.fileExists(atPath: u.appendingPathComponent("Apps").path)
                && fm.fileExists(atPath: u.appendingPathComponent("Policies").path)
        }
        if let env = ProcessInfo.processInfo.environment["MAMLAB_ROOT"], !env.isEmpty {
            return URL(fileURLWithPath: env)
        }
        guard let exe = try? fm.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        let toolFolder = URL(fileURLWithPath: exe).deletingLastPathComponent().standardizedFileURL
        var u = toolFolder
        while true {
            if isRoot(u) { return u }
            let parent = u.deletingLastPathComponent()
            if parent.path == u.path { break }
            u = parent
        }
        if let installed = installedData(toolFolder: toolFolder.path), isRoot(URL(fileURLWithPath: installed)) {
            return URL(fileURLWithPath: installed)
        }
        return nil
    }

    /// The data folder of an installed MAMLab whose programs are in `toolFolder`: programs in
    /// `PREFIX/lib/mamlab`, data (`Apps/`, `Policies/`, `docs/`) in `PREFIX/share/mamlab`, as
    /// the Debian package lays them out.
    public static func installedData(toolFolder: String) -> String? {
        let parts = toolFolder.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count >= 2, parts[parts.count - 1] == "mamlab", parts[parts.count - 2] == "lib" else { return nil }
        return "/" + (parts.dropLast(2) + ["share", "mamlab"]).joined(separator: "/")
    }

    /// Why no project was found, for the tools' refusals.
    public static var noProject: String {
        "no MAMLab project (Apps/ and Policies/) at or above \(toolDirectory), where this program is, nor an installed one's data beside it; set MAMLAB_ROOT to the project's folder"
    }

    /// The folder of the running executable: MAMLab's tools and apps are built side by side.
    public static var toolDirectory: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return (exe as NSString).deletingLastPathComponent
    }

    /// Reads a file, turning a failure into a diagnostic that names it.
    public static func read(_ path: String) throws(LoadFailure) -> Data {
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw LoadFailure([Diagnostic(.error, file: path, path: "", message: Self.whyUnreadable(path))])
        }
    }

    /// Why a file cannot be read, from the system's own answer: a file the user may not reach
    /// (a folder of mode 0700 on its path) is not "no such file".
    public static func whyUnreadable(_ path: String) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd >= 0 { close(fd); return "cannot read the file" }
        switch errno {
        case ENOENT, ENOTDIR: return "no such file"
        case EACCES, EPERM: return "permission denied (this user may not read it, or may not enter a folder on its path)"
        case let code: return "cannot read the file: \(String(cString: strerror(code)))"
        }
    }

    /// Loads a tenant file; `$ref` policy files resolve relative to the tenant file's folder.
    public static func loadTenant(_ path: String) throws(LoadFailure) -> TenantFile.Loaded {
        let data = try read(path)
        let base = URL(fileURLWithPath: path).deletingLastPathComponent()
        return try TenantFile.load(data, file: path) { reference in
            let url = reference.hasPrefix("/") ? URL(fileURLWithPath: reference) : base.appendingPathComponent(reference)
            let shown = reference.hasPrefix("/") ? reference : (path as NSString).deletingLastPathComponent.isEmpty
                ? reference : (path as NSString).deletingLastPathComponent + "/" + reference
            do {
                return (shown, try Data(contentsOf: url))
            } catch {
                throw LoadFailure([Diagnostic(.error, file: shown, path: "", message: Self.whyUnreadable(url.path))])
            }
        }
    }

    public static func loadPolicyFile(_ path: String) throws(LoadFailure) -> [PolicyFile.Loaded] {
        try PolicyFile.load(try read(path), file: path)
    }

    public static func loadManifest(_ path: String) throws(LoadFailure) -> (manifest: AppManifest, warnings: [Diagnostic]) {
        try AppManifest.load(try read(path), file: path)
    }

    /// Every `Apps/NAME/Info.plist` under `root`, with the problems found on the way.
    public static func loadApps(in appsDir: URL) -> (apps: [CatalogApp], diagnostics: [Diagnostic]) {
        let fm = FileManager.default
        guard let names = try? fm.contentsOfDirectory(atPath: appsDir.path) else { return ([], []) }
        var apps: [CatalogApp] = []
        var diagnostics: [Diagnostic] = []
        for name in names.sorted() {
            let plist = appsDir.appendingPathComponent(name).appendingPathComponent("Info.plist")
            guard fm.fileExists(atPath: plist.path) else { continue }
            let shown = relative(plist.path)
            do {
                let loaded = try AppManifest.load(try read(plist.path), file: shown)
                apps.append(CatalogApp(name: name, manifest: loaded.manifest, file: shown))
                diagnostics += loaded.warnings
            } catch {
                diagnostics += error.diagnostics
            }
        }
        // A bundle id is an app's identity (iOS keeps it unique by signing): two folders that
        // give one id, in any case, would let the one that sorts first take the other's
        // installed identity, policy and keys. Neither is installed.
        let byID = Dictionary(grouping: apps) { $0.manifest.bundleID.lowercased() }
        for (_, same) in byID.sorted(by: { $0.key < $1.key }) where same.count > 1 {
            for app in same {
                let others = same.filter { $0.file != app.file }.map { "\($0.name) (\($0.file))" }.joined(separator: ", ")
                diagnostics.append(Diagnostic(.error, file: app.file, path: "CFBundleIdentifier",
                                              message: "bundle id \(app.manifest.bundleID) is also given by \(others); neither app is installed until each has an id of its own"))
            }
        }
        // A folder named as another app's bundle id would answer to that id wherever an app is
        // named by folder or id (run, a share's target, wipe --app): it is not installed.
        var shadowing: Set<String> = []
        for app in apps {
            if let owner = byID[app.name.lowercased()]?.first, owner.file != app.file {
                shadowing.insert(app.file)
                diagnostics.append(Diagnostic(.error, file: app.file, path: "CFBundleIdentifier",
                                              message: "the folder \(app.name) is named as the bundle id of \(owner.name) (\(owner.file)); the app in it is not installed until its folder has another name"))
            }
        }
        // Folder names are matched in any case: two that differ only in case (an author's `DOCS`
        // beside `Docs`) would let the one that sorts first answer to the other's name.
        let byName = Dictionary(grouping: apps) { $0.name.lowercased() }
        for (_, same) in byName.sorted(by: { $0.key < $1.key }) where same.count > 1 {
            for app in same {
                shadowing.insert(app.file)
                let others = same.filter { $0.file != app.file }.map(\.name).joined(separator: ", ")
                diagnostics.append(Diagnostic(.error, file: app.file, path: "CFBundleIdentifier",
                                              message: "the folder \(app.name) differs from \(others) only in case; neither app is installed until each folder has a name of its own"))
            }
        }
        return (apps.filter { byID[$0.manifest.bundleID.lowercased()]?.count == 1 && !shadowing.contains($0.file) }, diagnostics)
    }

    /// A path as a person would like to read it: relative to the working directory when inside it.
    /// Each top-level setting of the policy a JSON policy file holds (the object itself, or the
    /// first of a Graph list's `value`), as written and where its value starts: what a finding
    /// points at. Empty for a property list or a file that does not parse (its load says why).
    public static func settingNodes(ofPolicyIn path: String) -> [String: Node] {
        guard let data = try? read(path), let root = try? JSONParser.parse(data), case let .object(pairs) = root.value else { return [:] }
        var policy = pairs
        if let list = pairs.first(where: { $0.key == "value" })?.value, case let .array(items) = list.value,
           let first = items.first, case let .object(inner) = first.value {
            policy = inner
        }
        return Dictionary(policy.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a })
    }

    public static func relative(_ path: String) -> String {
        let cwd = FileManager.default.currentDirectoryPath
        let standardized = URL(fileURLWithPath: path).standardizedFileURL.path
        if standardized.hasPrefix(cwd + "/") { return String(standardized.dropFirst(cwd.count + 1)) }
        return path
    }

    /// Finds an app by `Apps/` folder name or bundle id, case-insensitively.
    public static func find(_ name: String, in apps: [CatalogApp]) -> CatalogApp? {
        let n = name.lowercased()
        // A bundle id first: it is the app's identity; a folder name, or a stand-in's catalog
        // name or short name, is only what people call it.
        return apps.first { $0.manifest.bundleID.lowercased() == n } ?? apps.first { $0.name.lowercased() == n }
            ?? apps.first { $0.standIn?.isNamed(name) == true }
    }

    /// The catalog entry `name` names (bundle id first, then name and short name).
    public static func entry(named name: String, in entries: [CatalogEntry]) -> CatalogEntry? {
        entries.first { $0.bundleID.lowercased() == name.lowercased() } ?? entries.first { $0.isNamed(name) }
    }

    /// Every name an app goes by: an installed app's folder and bundle id, a catalog app's short
    /// name and bundle id (the names a misspelled one is matched against).
    public static func appNames(installed: [CatalogApp], entries: [CatalogEntry]) -> [String] {
        let stood = entries.filter { e in !installed.contains { $0.manifest.bundleID.lowercased() == e.bundleID.lowercased() } }
        return installed.flatMap { [$0.name, $0.manifest.bundleID] + ($0.standIn.map { [$0.shortName] } ?? []) }
            + stood.flatMap { [$0.shortName, $0.bundleID] }
    }

    /// "unknown app …" with the nearest name an app goes by (a folder, a bundle id, a catalog
    /// name or short name) and the names to choose from.
    public static func unknownApp(_ name: String, installed: [CatalogApp], entries: [CatalogEntry] = []) -> String {
        let nearest = NearestName.nearest(to: name, in: appNames(installed: installed, entries: entries)).map { " (did you mean \"\($0)\"?)" } ?? ""
        let stood = entries.filter { e in !installed.contains { $0.manifest.bundleID.lowercased() == e.bundleID.lowercased() } }
        let known = installed.map { "\($0.name) (\($0.manifest.bundleID))" } + stood.map { "\($0.shortName) (\($0.bundleID), catalog)" }
        return "unknown app \"\(name)\"\(nearest); known apps: \(known.joined(separator: ", "))"
    }

    /// Problems a tenant has only when set beside the known apps: a policy targeting an app
    /// no manifest describes.
    public static func unknownApps(_ tenant: Tenant, known: [AppManifest]) -> [Diagnostic] {
        let ids = Set(known.map { $0.bundleID.lowercased() })
        var out: [Diagnostic] = []
        for policy in tenant.policies {
            for (i, app) in policy.targetedApps.enumerated() where !ids.contains(app) {
                let origin = i < policy.appOrigins.count ? policy.appOrigins[i] : policy.origin
                let like = NearestName.nearest(to: app, in: ids.sorted(), maximumDistance: 3).map { " (did you mean \($0)?)" } ?? ""
                out.append(origin.problem("policy \"\(policy.displayName)\" targets unknown app \(app)\(like); no manifest has this bundle id (known: \(ids.sorted().joined(separator: ", ")))"))
            }
        }
        return out
    }
}
