import Foundation

/// What the developer guides ask of an SDK app's `Info.plist`, checked so that `check` can say
/// which step is missing and where the guide asks for it. Each finding is a warning: the app
/// still starts, but the SDK cannot do its part (a URL, a document or an extension the
/// policy should reach is missed).
public enum ManifestRequirements {
    /// Where each requirement is stated (docs/SEMANTICS.md §4.4, §4.5).
    public enum Source {
        public static let urlTwin = "seed 004 §Build the SDK into your mobile app, step 8: every URL scheme the app defines needs a twin with the -intunemam suffix"
        public static let queryTwin = "seed 001 §Build the SDK into your mobile app, step 5: every scheme in LSApplicationQueriesSchemes needs its -intunemam copy"
        public static let browserQueries = "seed 001 (2023 edition) §Build the SDK into your mobile app, step 5: the managed browser's twins and the threat-defence apps' schemes belong in LSApplicationQueriesSchemes"
        public static let mailto = "seed 001 (2023 edition) §Build the SDK into your mobile app, step 5: an app that uses mailto: lists ms-outlook-intunemam too"
        public static let adal = "seed 001 (2023 edition) §Configure settings for the Intune App SDK: ADALClientId, and ADALRedirectUri or ADALRedirectScheme, are required for all apps (the 2020 edition, seed 000, asked them of MSAL apps only)"
        public static let documentTwin = "seed 004 §Build the SDK into your mobile app, step 9: every document content type needs a duplicate with the com.microsoft.intune.mam. prefix"
        public static let extensionTwin = "seed 000 §Update existing Share and Action extensions: for each type the extension accepts, add the type with the com.microsoft.intune.mam. prefix"
        public static let extensionDictionary = "seed 000 §Update existing Share and Action extensions: the rule must also accept the com.microsoft.intune.mam. types, which the dictionary form cannot name"
        public static let appGroup = "seed 000 §'Copy To' actions, step 2: the app and its Open-in action extension must share an App Group listed in both IntuneMAMSettings.AppGroupIdentifiers"
        public static let faceID = "seed 000 and seed 001 §Build the SDK into your mobile app, step 6: an SDK app needs NSFaceIDUsageDescription with a default message, since the policy may let Face ID open the app"
        public static let openInName = "seed 000 §'Copy To' actions, step 4: the Open-in action extension is named \"Open in\" and the app's name"
        public static let openInTypes = "seed 000 §'Copy To' actions, step 7: the Open-in extension's rule accepts every document type of the app, each with the com.microsoft.intune.mam. prefix"
        public static let openInSingleFile = "seed 000 §'Copy To' actions, step 7: the Open-in extension's activation rule accepts exactly one item holding exactly one file (SUBQUERY(...).@count == 1 at both levels)"
        public static let autoEnroll = "seed 001 §Configure settings for the Intune App SDK: with MAMPolicyRequired set to YES, AutoEnrollOnLaunch should be YES too"
    }

    /// Schemes seed 001 asks every SDK app to query as they are, without a twin of their own
    /// (the managed browser's twins and the threat-defence apps).
    static let listedAsIs: Set<String> = [
        "http-intunemam", "https-intunemam", "microsoft-edge-http-intunemam", "microsoft-edge-https-intunemam",
        "smart-ns", "zips", "lacoonsecurity", "wandera", "lookoutwork-ase", "skycure", "betteractiveshield", "smsec",
        "mvisionmobile", "scmx", "ms-outlook-intunemam",
    ]

    /// The schemes seed 001 (2023) asks every SDK app to query, in its order: the browsers'
    /// twins and the mobile-threat-defence vendors' apps (`check` and the configurator).
    public static let requiredQueries = [
        "http-intunemam", "https-intunemam", "microsoft-edge-http-intunemam", "microsoft-edge-https-intunemam",
        "smart-ns", "zips", "lacoonsecurity", "wandera", "lookoutwork-ase", "skycure", "betteractiveshield", "smsec",
        "mvisionmobile", "scmx",
    ]

    static let twinSuffix = "-intunemam"

    /// The share and action extension points (seed 000 names both).
    static let shareOrAction: Set<String> = ["com.apple.share-services", "com.apple.ui-services"]

    /// Checks one manifest (`root` is its top-level dictionary) and logs a warning per missing step.
    public static func check(_ root: Located, _ log: inout DiagnosticLog) {
        guard let settings = root.member("IntuneMAMSettings"), case .object = settings.node.value else { return }
        var scratch = DiagnosticLog()   // type errors were reported by the loader already
        let isExtension = root.member("NSExtension") != nil

        // URL schemes the app defines.
        for type in (root.member("CFBundleURLTypes")?.array(&scratch) ?? []) {
            guard let list = type.member("CFBundleURLSchemes") else { continue }
            let schemes = list.strings(&scratch) ?? []
            let present = Set(schemes.map { $0.lowercased() })
            for (j, s) in schemes.enumerated() where !s.lowercased().hasSuffix(twinSuffix) && !present.contains(s.lowercased() + twinSuffix) {
                let at = item(list, j)
                log.append(at.problem(.warning, "URL scheme \"\(s)\" has no twin \"\(s)\(twinSuffix)\" (\(Source.urlTwin))"))
            }
        }

        // Schemes the app queries.
        if !isExtension {
            let queries = root.member("LSApplicationQueriesSchemes")
            let schemes = queries?.strings(&scratch) ?? []
            let present = Set(schemes.map { $0.lowercased() })
            for (j, s) in schemes.enumerated() {
                let l = s.lowercased()
                guard !l.hasSuffix(twinSuffix), !listedAsIs.contains(l), !present.contains(l + twinSuffix) else { continue }
                let at = item(queries!, j)
                log.append(at.problem(.warning, "queried scheme \"\(s)\" has no twin \"\(s)\(twinSuffix)\" in the list (\(Source.queryTwin))"))
            }
            let missing = requiredQueries.filter { !present.contains($0) }
            if !missing.isEmpty {
                let at = queries ?? root
                let what = queries == nil ? "there is no LSApplicationQueriesSchemes" : "LSApplicationQueriesSchemes lacks"
                log.append(at.problem(.warning, "\(what) \(missing.joined(separator: ", ")) (\(Source.browserQueries))"))
            }
            if present.contains("mailto"), !present.contains("ms-outlook-intunemam"), let queries {
                log.append(queries.problem(.warning, "the app queries mailto but LSApplicationQueriesSchemes lacks ms-outlook-intunemam (\(Source.mailto))"))
            }
            // The app's Microsoft Entra registration.
            var missingKeys: [String] = []
            if settings.member("ADALClientId") == nil { missingKeys.append("ADALClientId") }
            if settings.member("ADALRedirectUri") == nil && settings.member("ADALRedirectScheme") == nil {
                missingKeys.append("ADALRedirectUri or ADALRedirectScheme")
            }
            if !missingKeys.isEmpty {
                log.append(settings.problem(.warning, "IntuneMAMSettings lacks \(missingKeys.joined(separator: " and ")) (\(Source.adal))"))
            }
        }

        // Document types.
        for type in (root.member("CFBundleDocumentTypes")?.array(&scratch) ?? []) {
            guard let list = type.member("LSItemContentTypes") else { continue }
            let types = list.strings(&scratch) ?? []
            let present = Set(types.map { $0.lowercased() })
            for (j, t) in types.enumerated() where !ContentType.isTwin(t) && !present.contains(ContentType.twin(of: t).lowercased()) {
                let at = item(list, j)
                log.append(at.problem(.warning, "document type \"\(t)\" has no twin \"\(ContentType.twin(of: t))\" (\(Source.documentTwin))"))
            }
        }

        // Face ID may unlock the app when the policy allows it; iOS asks why first.
        if !isExtension {
            let text = root.member("NSFaceIDUsageDescription")
            var message = ""
            if case let .string(m)? = text?.node.value { message = m.trimmingCharacters(in: .whitespacesAndNewlines) }
            if message.isEmpty {
                log.append((text ?? root).problem(.warning, "\(text == nil ? "there is no" : "an empty") NSFaceIDUsageDescription (\(Source.faceID))"))
            }
        }

        // An Open-in action extension is "Open in" and its app's name: the prefix is checked
        // here, alone; the app's name when the app is checked too (checkOpenInNames).
        if case .bool(true)? = settings.node["OpenInActionExtension"]?.value {
            let name = root.member("CFBundleDisplayName")
            var text = ""
            if case let .string(s)? = name?.node.value { text = s }
            if !text.hasPrefix("Open in ") {
                log.append((name ?? root).problem(.warning, "the Open-in extension is named \"\(text)\", not \"Open in\" and its app's name (\(Source.openInName))"))
            }
        }

        // An Open-in action extension takes one file at a time.
        if case .bool(true)? = settings.node["OpenInActionExtension"]?.value,
           let rule = root.member("NSExtension")?.member("NSExtensionAttributes")?.member("NSExtensionActivationRule"),
           case let .string(predicate) = rule.node.value, let problem = singleFileProblem(predicate) {
            log.append(rule.problem(.warning, "\(problem) (\(Source.openInSingleFile))"))
        }

        // Share and action extensions.
        if let ext = root.member("NSExtension"), case let .string(point)? = ext.node["NSExtensionPointIdentifier"]?.value,
           shareOrAction.contains(point), let rule = ext.member("NSExtensionAttributes")?.member("NSExtensionActivationRule") {
            switch rule.node.value {
            case let .string(predicate):
                let types = conformsToTypes(in: predicate)
                let present = Set(types.map { $0.lowercased() })
                var reported = Set<String>()
                for t in types where !ContentType.isTwin(t) {
                    let twin = ContentType.twin(of: t)
                    guard !present.contains(twin.lowercased()), reported.insert(twin.lowercased()).inserted else { continue }
                    log.append(rule.problem(.warning, "the rule accepts \"\(t)\" but not \"\(twin)\" (\(Source.extensionTwin))"))
                }
            case .object:
                log.append(rule.problem(.warning, "a dictionary rule cannot accept the com.microsoft.intune.mam. types; write it as a predicate with the twin types (\(Source.extensionDictionary))"))
            default:
                break
            }
        }

        // MAMPolicyRequired wants AutoEnrollOnLaunch.
        if case .bool(true)? = settings.node["MAMPolicyRequired"]?.value,
           settings.node["AutoEnrollOnLaunch"]?.value != .bool(true) {
            let at = settings.member("MAMPolicyRequired") ?? settings
            log.append(at.problem(.warning, "MAMPolicyRequired is YES but AutoEnrollOnLaunch is not (\(Source.autoEnroll))"))
        }
    }

    /// The `j`th element of an array, located (for its line in an XML plist and its key path).
    static func item(_ list: Located, _ j: Int) -> Located {
        guard case let .array(items) = list.node.value, j < items.count else { return list }
        return list.element(j, items[j])
    }

    /// The quoted types of every `UTI-CONFORMS-TO "T"` clause.
    static func conformsToTypes(in predicate: String) -> [String] {
        let regex = try! NSRegularExpression(pattern: #"UTI-CONFORMS-TO\s+"([^"]*)""#)
        let ns = predicate as NSString
        return regex.matches(in: predicate, range: NSRange(location: 0, length: ns.length)).map { ns.substring(with: $0.range(at: 1)) }
    }

    /// Why an activation predicate may accept more than one file, or nil. Seed 000's rule
    /// counts the extension items and each item's attachments with `@count == 1`; any other
    /// count (`>= 1`, `< 3`, `== 2`) or none at all lets several files through.
    static func singleFileProblem(_ predicate: String) -> String? {
        let regex = try! NSRegularExpression(pattern: #"@count\s*(==|=|>=|<=|>|<|!=)\s*(\d+)"#)
        let ns = predicate as NSString
        let counts = regex.matches(in: predicate, range: NSRange(location: 0, length: ns.length)).map {
            (ns.substring(with: $0.range(at: 1)), ns.substring(with: $0.range(at: 2)))
        }
        if let (op, n) = counts.first(where: { !(["==", "="].contains($0.0) && Int($0.1) == 1) }) {
            return "the Open-in extension's rule counts \"@count \(op) \(n)\", which accepts more than one file or none"
        }
        if counts.count < 2 {
            return "the Open-in extension's rule does not limit both the items and their attachments to one (@count == 1)"
        }
        return nil
    }

    /// Each Open-in action extension (`OpenInActionExtension` = YES) with its file and the app it
    /// names in `ContainingAppBundleId`, where that app is among `manifests`.
    static func openInExtensions(_ manifests: [(manifest: AppManifest, file: String)])
        -> [(ext: AppManifest, file: String, app: (manifest: AppManifest, file: String))] {
        manifests.compactMap { ext, file in
            guard case .bool(true)? = ext.mamSettings?["OpenInActionExtension"]?.value,
                  case let .string(containing)? = ext.mamSettings?["ContainingAppBundleId"]?.value,
                  let app = manifests.first(where: { $0.manifest.bundleID.lowercased() == containing.lowercased() })
            else { return nil }
            return (ext, file, app)
        }
    }

    /// An Open-in extension whose name is not "Open in " and its app's name. The name is
    /// `CFBundleDisplayName`, else `CFBundleName` (what iOS shows under the action).
    public static func checkOpenInNames(_ manifests: [(manifest: AppManifest, file: String)]) -> [Diagnostic] {
        var out: [Diagnostic] = []
        for (ext, file, app) in openInExtensions(manifests) {
            let wanted = "Open in \(app.manifest.displayName)"
            if ext.displayName != wanted {
                out.append(Diagnostic(.warning, file: file, path: "CFBundleDisplayName",
                                      message: "the Open-in extension \(ext.bundleID) is named \"\(ext.displayName)\", not \"\(wanted)\" (\(Source.openInName))"))
            }
        }
        return out
    }

    /// An Open-in extension whose activation predicate leaves out the twin of one of its app's
    /// document types: iOS would not offer it for that type.
    public static func checkOpenInTypes(_ manifests: [(manifest: AppManifest, file: String)]) -> [Diagnostic] {
        var out: [Diagnostic] = []
        for (ext, file, app) in openInExtensions(manifests) {
            guard case let .predicate(predicate)? = ext.activationRule else { continue }
            let accepted = Set(conformsToTypes(in: predicate).map { $0.lowercased() })
            var missing: [String] = []
            for type in app.manifest.documentTypes.flatMap(\.contentTypes) {
                let twin = ContentType.twin(of: type)
                if !accepted.contains(twin.lowercased()), !missing.contains(twin) { missing.append(twin) }
            }
            if !missing.isEmpty {
                out.append(Diagnostic(.warning, file: file, path: "NSExtension.NSExtensionAttributes.NSExtensionActivationRule",
                                      message: "the Open-in extension \(ext.bundleID) does not accept \(missing.joined(separator: ", ")) of \(app.manifest.bundleID) (\(Source.openInTypes))"))
            }
        }
        return out
    }

    /// An app whose Open-in action extension (`OpenInActionExtension` = YES, naming the app in
    /// `ContainingAppBundleId`) shares no App Group with it. `manifests` pairs each manifest
    /// with the file it came from.
    public static func checkAppGroups(_ manifests: [(manifest: AppManifest, file: String)]) -> [Diagnostic] {
        var out: [Diagnostic] = []
        for (ext, file, app) in openInExtensions(manifests) {
            let shared = Set(ext.appGroups).intersection(app.manifest.appGroups)
            if shared.isEmpty {
                let groups = { (m: AppManifest) in m.appGroups.isEmpty ? "none" : m.appGroups.joined(separator: ", ") }
                out.append(Diagnostic(.warning, file: file, path: "IntuneMAMSettings.AppGroupIdentifiers",
                                      message: "the Open-in extension \(ext.bundleID) shares no App Group with \(app.manifest.bundleID) (extension: \(groups(ext)); app: \(groups(app.manifest))) (\(Source.appGroup))"))
            }
        }
        return out
    }
}

extension AppManifest {
    /// `IntuneMAMSettings.AppGroupIdentifiers`.
    public var appGroups: [String] {
        guard case let .array(items)? = mamSettings?["AppGroupIdentifiers"]?.value else { return [] }
        return items.compactMap { if case let .string(s) = $0.value { return s } else { return nil } }
    }
}
