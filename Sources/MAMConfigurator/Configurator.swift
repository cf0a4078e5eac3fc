import MAMPolicy

/// One edit the configurator made (or, with `--check`, would make).
public struct Change: Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var path: String
    public var text: String
    public var description: String { "\(file): \(path): \(text)" }
}

/// Makes an app's Info.plist and entitlements what the SDK needs (seed 001 stage 3, steps 3-7;
/// seed 000 on document types and extensions). Pure: trees in, trees out.
public struct Configurator {
    /// Schemes every SDK app must be able to query [doc: seed 001 step 5]: the browsers' twins
    /// and the mobile-threat-defence vendors' apps.
    public static let fixedQueries = ManifestRequirements.requiredQueries
    static let vendorSchemes = Set(fixedQueries.filter { !$0.hasSuffix(URLText.twinSuffix) })
    public static let keychainPrefix = "$(AppIdentifierPrefix)"
    static let sharingExtensionPoints: Set<String> = ["com.apple.share-services", "com.apple.ui-services"]

    public var info: Node
    public var entitlements: Node?
    public let infoFile: String
    public let entitlementsFile: String
    public private(set) var changes: [Change] = []
    public private(set) var diagnostics = DiagnosticLog()

    public init(info: Node, infoFile: String, entitlements: Node?, entitlementsFile: String) {
        self.info = info
        self.infoFile = infoFile
        self.entitlements = entitlements
        self.entitlementsFile = entitlementsFile
    }

    /// Runs every step; `changes` says what changed, `diagnostics` what is wrong.
    public mutating func run() {
        guard info.pairs != nil else {
            diagnostics.append(Diagnostic(.error, file: infoFile, path: "", message: "the root of an Info.plist must be a dictionary"))
            return
        }
        if let e = entitlements, e.pairs == nil {
            diagnostics.append(Diagnostic(.error, file: entitlementsFile, path: "", message: "the root of an entitlements file must be a dictionary"))
            return
        }
        twinURLSchemes()
        twinQueriedSchemes()
        twinDocumentTypes()
        extendActivationRule()
        configureEntitlements()
        validateSettings()
    }

    private mutating func note(_ path: String, _ text: String, file: String? = nil) {
        changes.append(Change(file: file ?? infoFile, path: path, text: text))
    }

    /// Appends the twins `twin(s)` of the listed values that lack one; returns what it added.
    private static func addTwins(_ list: [String], twin: (String) -> String?, skip: (String) -> Bool = { _ in false }) -> [String] {
        var present = Set(list.map { $0.lowercased() })
        var added: [String] = []
        for s in list where !skip(s) {
            guard let t = twin(s), !present.contains(t.lowercased()) else { continue }
            present.insert(t.lowercased())
            added.append(t)
        }
        return added
    }

    private static func isSchemeTwin(_ s: String) -> Bool { s.lowercased().hasSuffix(URLText.twinSuffix) }

    // Step: every registered scheme gets its -intunemam twin [doc].
    private mutating func twinURLSchemes() {
        var added: [(String, [String])] = []
        info.update("CFBundleURLTypes") { types in
            types.updateEach { i, type in
                type.update("CFBundleURLSchemes") { schemes in
                    guard let list = schemes.strings else { return }
                    let twins = Self.addTwins(list, twin: { Self.isSchemeTwin($0) ? nil : $0 + URLText.twinSuffix })
                    if !twins.isEmpty {
                        schemes = .strings(list + twins)
                        added.append(("CFBundleURLTypes[\(i)].CFBundleURLSchemes", twins))
                    }
                }
            }
        }
        for (path, twins) in added { note(path, "added \(twins.joined(separator: ", "))") }
    }

    // Step: queried schemes get twins; the fixed entries and, for mailto, Outlook's twin [doc].
    private mutating func twinQueriedSchemes() {
        let existing = info["LSApplicationQueriesSchemes"]
        if let existing, existing.strings == nil {
            diagnostics.append(Diagnostic(.error, file: infoFile, path: "LSApplicationQueriesSchemes", message: "expected an array of strings"))
            return
        }
        let list = existing?.strings ?? []
        var additions = Self.addTwins(list, twin: { Self.isSchemeTwin($0) ? nil : $0 + URLText.twinSuffix },
                                      skip: { Self.vendorSchemes.contains($0.lowercased()) })
        var wanted = Self.fixedQueries
        if list.contains(where: { $0.lowercased() == "mailto" }) { wanted.append("ms-outlook-intunemam") }
        let present = Set((list + additions).map { $0.lowercased() })
        additions += wanted.filter { !present.contains($0) }
        guard !additions.isEmpty else { return }
        info.set("LSApplicationQueriesSchemes", .strings(list + additions))
        note("LSApplicationQueriesSchemes", "added \(additions.joined(separator: ", "))")
    }

    // Step: every document content type gets its com.microsoft.intune.mam. twin [doc].
    private mutating func twinDocumentTypes() {
        var added: [(String, [String])] = []
        info.update("CFBundleDocumentTypes") { types in
            types.updateEach { i, type in
                type.update("LSItemContentTypes") { uti in
                    guard let list = uti.strings else { return }
                    let twins = Self.addTwins(list, twin: { ContentType.isTwin($0) ? nil : ContentType.twin(of: $0) })
                    if !twins.isEmpty {
                        uti = .strings(list + twins)
                        added.append(("CFBundleDocumentTypes[\(i)].LSItemContentTypes", twins))
                    }
                }
            }
        }
        for (path, twins) in added { note(path, "added \(twins.joined(separator: ", "))") }
    }

    // Step: a share or action extension's activation rule also accepts the twins [doc].
    private mutating func extendActivationRule() {
        guard let ext = info["NSExtension"], let point = ext["NSExtensionPointIdentifier"]?.string,
              Self.sharingExtensionPoints.contains(point),
              let rule = ext["NSExtensionAttributes"]?["NSExtensionActivationRule"] else { return }
        let path = "NSExtension.NSExtensionAttributes.NSExtensionActivationRule"
        var newRule: String?
        switch rule.value {
        case let .string(predicate):
            newRule = ActivationRuleEditor.extend(predicate)
            if newRule == nil && !predicate.contains("UTI-CONFORMS-TO") {
                diagnostics.append(Diagnostic(.warning, file: infoFile, path: path,
                                              message: "the predicate tests no UTI-CONFORMS-TO type, so no twin types were added"))
            }
            if newRule != nil { note(path, "added the com.microsoft.intune.mam. twins of its types") }
        case .object:
            let converted = ActivationRuleEditor.predicate(fromDictionary: rule)
            for key in converted.unknownKeys {
                diagnostics.append(Diagnostic(.warning, file: infoFile, path: "\(path).\(key)", message: "unknown activation key; it was dropped from the predicate"))
            }
            newRule = converted.predicate
            note(path, "converted the dictionary form to a predicate that also accepts the twins")
        default:
            diagnostics.append(Diagnostic(.error, file: infoFile, path: path, message: "expected a predicate string or a dictionary, found \(rule.typeName)"))
        }
        guard let newRule else { return }
        info.update("NSExtension") { e in
            e.update("NSExtensionAttributes") { a in a.set("NSExtensionActivationRule", Node(.string(newRule))) }
        }
    }

    // Steps: keychain groups [doc: seed 001 step 4] and app groups mirrored into the settings.
    private mutating func configureEntitlements() {
        guard var ent = entitlements else { return }
        let bundle = info["CFBundleIdentifier"]?.string ?? ""
        let settings = info["IntuneMAMSettings"]
        let cache = settings?["ADALCacheKeychainGroupOverride"]?.string ?? "com.microsoft.adalcache"
        let key = "keychain-access-groups"
        let groups = ent[key]?.strings ?? []
        if ent[key] != nil && ent[key]?.strings == nil {
            diagnostics.append(Diagnostic(.error, file: entitlementsFile, path: key, message: "expected an array of strings"))
            return
        }
        /// A group without its team or placeholder prefix.
        func bare(_ g: String) -> String {
            if g.hasPrefix(Self.keychainPrefix) { return String(g.dropFirst(Self.keychainPrefix.count)) }
            if let dot = g.firstIndex(of: "."), g.distance(from: g.startIndex, to: dot) == 10,
               g[..<dot].allSatisfy({ $0.isUppercase || $0.isNumber }) { return String(g[g.index(after: dot)...]) }
            return g
        }
        let present = Set(groups.map(bare))
        var wanted: [String] = []
        if groups.isEmpty && !bundle.isEmpty { wanted.append(bundle) }
        wanted += ["com.microsoft.intune.mam", cache]
        let additions = wanted.filter { !present.contains($0) }.map { Self.keychainPrefix + $0 }
        if !additions.isEmpty {
            ent.set(key, .strings(groups + additions))
            note(key, "added \(additions.joined(separator: ", "))", file: entitlementsFile)
        }
        if let first = groups.first, !bundle.isEmpty, bare(first) != bundle {
            diagnostics.append(Diagnostic(.warning, file: entitlementsFile, path: "\(key)[0]",
                                          message: "the first keychain group is the app's default; the SDK expects the app's bundle id (\(bundle)) there"))
        }
        entitlements = ent

        let appGroups = ent["com.apple.security.application-groups"]?.strings ?? []
        guard !appGroups.isEmpty else { return }
        let mirrored = settings?["AppGroupIdentifiers"]?.strings ?? []
        let missing = appGroups.filter { !mirrored.contains($0) }
        guard !missing.isEmpty else { return }
        if settings == nil { info.set("IntuneMAMSettings", Node(.object([]))) }
        info.update("IntuneMAMSettings") { s in s.set("AppGroupIdentifiers", .strings(mirrored + missing)) }
        note("IntuneMAMSettings.AppGroupIdentifiers", "added \(missing.joined(separator: ", "))")
    }

    // The settings table of seed 001: types and the combinations it names.
    private mutating func validateSettings() {
        guard let settings = info["IntuneMAMSettings"] else {
            diagnostics.append(Diagnostic(.warning, file: infoFile, path: "IntuneMAMSettings",
                                          message: "missing: without it the app does not integrate the SDK (add ADALClientId and ADALRedirectUri)"))
            return
        }
        let located = Located(settings, path: "IntuneMAMSettings", file: infoFile)
        guard let pairs = located.object(&diagnostics) else { return }
        for (key, value) in pairs { MAMSettingsSchema.check(key, value, &diagnostics) }
        func flag(_ k: String) -> Bool { settings[k]?.bool ?? false }
        if flag("MAMPolicyRequired") && !flag("AutoEnrollOnLaunch") {
            diagnostics.append(located.problem(.warning, "MAMPolicyRequired is YES but AutoEnrollOnLaunch is not; the SDK expects both"))
        }
        if settings["ADALClientId"] != nil && settings["ADALRedirectUri"] == nil && settings["ADALRedirectScheme"] == nil {
            diagnostics.append(located.problem("ADALClientId needs ADALRedirectUri or ADALRedirectScheme"))
        }
        if settings["ADALClientId"] == nil && info["NSExtension"] == nil {
            diagnostics.append(located.problem(.warning, "ADALClientId is required for all apps"))
        }
        if info["NSExtension"] != nil && settings["ContainingAppBundleId"] == nil {
            diagnostics.append(located.problem("an extension must name its app in ContainingAppBundleId"))
        }
    }
}
