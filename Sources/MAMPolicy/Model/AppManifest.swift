import Foundation

/// What the engine and the broker need to know about an app, read from its `Info.plist`.
public struct AppManifest: Sendable, Hashable {
    public struct DocumentType: Sendable, Hashable, Codable {
        public var name: String?
        public var contentTypes: [String]
        public init(name: String? = nil, contentTypes: [String]) {
            self.name = name
            self.contentTypes = contentTypes
        }
    }

    /// A share or action extension's activation rule: a predicate string or the dictionary form.
    public enum ActivationRule: Sendable, Hashable {
        case predicate(String)
        case dictionary(Node)

        public static func == (a: Self, b: Self) -> Bool {
            switch (a, b) {
            case let (.predicate(x), .predicate(y)): return x == y
            case let (.dictionary(x), .dictionary(y)): return x == y
            default: return false
            }
        }
        public func hash(into h: inout Hasher) {
            if case let .predicate(p) = self { h.combine(p) } else { h.combine(1) }
        }
    }

    public var bundleID: String
    public var displayName: String

    /// Why `id` is not a reverse-DNS identifier (ASCII letters, digits, `-`, and `.` between
    /// non-empty labels), or nil when it is one. The launcher names files after bundle ids, so
    /// anything else (`/`, `..`, a NUL) must never get that far.
    public static func bundleIDProblem(_ id: String) -> String? {
        if id.utf8.count > 255 { return "is longer than 255 characters" }
        for c in id.utf8 where !(c == UInt8(ascii: "-") || c == UInt8(ascii: ".") || (c >= 0x30 && c <= 0x39)
                                 || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)) {
            return "is not a reverse-DNS identifier: only letters, digits, '-' and '.' are allowed"
        }
        if id.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty) {
            return "is not a reverse-DNS identifier: a label between dots is empty"
        }
        return nil
    }
    public var executable: String?
    /// URL schemes the app handles (`CFBundleURLTypes`), lower-cased.
    public var urlSchemes: [String]
    /// Schemes the app may ask about (`LSApplicationQueriesSchemes`), lower-cased.
    public var queriedSchemes: [String]
    public var documentTypes: [DocumentType]
    public var extensionPoint: String?
    public var activationRule: ActivationRule?
    /// The `IntuneMAMSettings` dictionary; its presence means the app integrates the SDK.
    public var mamSettings: Node?

    public init(bundleID: String, displayName: String? = nil, executable: String? = nil, urlSchemes: [String] = [],
                queriedSchemes: [String] = [], documentTypes: [DocumentType] = [], extensionPoint: String? = nil,
                activationRule: ActivationRule? = nil, mamSettings: Node? = nil) {
        self.bundleID = bundleID
        self.displayName = displayName ?? bundleID
        self.executable = executable
        self.urlSchemes = urlSchemes.map { $0.lowercased() }
        self.queriedSchemes = queriedSchemes.map { $0.lowercased() }
        self.documentTypes = documentTypes
        self.extensionPoint = extensionPoint
        self.activationRule = activationRule
        self.mamSettings = mamSettings
        self.contentTypeSet = Set(documentTypes.flatMap(\.contentTypes).map { $0.lowercased() })
        self.acceptsAnyDocument = !contentTypeSet.isDisjoint(with: ["public.item", "public.data", "public.content"])
        var declarations: [String: TypeDeclaration] = [:]
        for t in contentTypeSet {
            let plain = ContentType.stripped(t)
            declarations[plain, default: []].insert(plain == t ? .plain : .twin)
        }
        self.typeDeclarations = declarations
    }

    /// How a plain type `T` is declared: as `T`, as its twin, or both.
    public struct TypeDeclaration: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let plain = TypeDeclaration(rawValue: 1)
        public static let twin = TypeDeclaration(rawValue: 2)
    }

    public var integratesSDK: Bool { mamSettings != nil }

    /// A yes/no key of the app's `IntuneMAMSettings` (absent or not a boolean: no) [seed 001
    /// §Configure settings for the Intune App SDK].
    public func sdkFlag(_ key: String) -> Bool {
        if case .bool(true)? = mamSettings?[key]?.value { return true }
        return false
    }

    /// `AutoEnrollOnLaunch`: the SDK enrolls the signed-in managed account at launch; without
    /// it the app enrolls an account itself, and is unmanaged until then.
    public var enrollsOnLaunch: Bool { sdkFlag("AutoEnrollOnLaunch") }

    public var isMultiIdentity: Bool {
        if case let .bool(b)? = mamSettings?["MultiIdentity"]?.value { return b }
        return false
    }

    /// All declared content types, lower-cased, for quick share-target checks.
    public private(set) var contentTypeSet: Set<String>
    /// Declares a generic supertype that takes any document [chosen: `public.item`,
    /// `public.data`, `public.content`].
    public private(set) var acceptsAnyDocument: Bool
    /// Plain type (lower-cased) → how it is declared; one lookup answers both questions of §4.5.
    public private(set) var typeDeclarations: [String: TypeDeclaration]

    public func handles(scheme: String) -> Bool { urlSchemes.contains(scheme.lowercased()) }
    public func queries(scheme: String) -> Bool { queriedSchemes.contains(scheme.lowercased()) }
}

extension AppManifest {
    /// Reads an `Info.plist` (XML or binary). Problems name the key path; a wrong type is an
    /// error and an unknown `IntuneMAMSettings` key a warning.
    public static func load(_ data: Data, file: String) throws(LoadFailure) -> (manifest: AppManifest, warnings: [Diagnostic]) {
        if let problem = BinaryPropertyList.problem(data) {
            throw LoadFailure([Diagnostic(.error, file: file, path: "", message: "not a valid property list: \(problem)")])
        }
        let object: Any
        do {
            object = try PropertyListSerialization.propertyList(from: data, format: nil)
        } catch {
            throw LoadFailure([Diagnostic(.error, file: file, path: "", message: "not a valid property list: \(PropertyListText.reason(error))")])
        }
        var log = DiagnosticLog()
        let root = Located(Node(propertyList: object), path: "", file: file)
        guard root.object(&log) != nil else { throw LoadFailure(log.items) }

        guard let idNode = root.member("CFBundleIdentifier") else {
            throw LoadFailure([root.problem("missing CFBundleIdentifier")])
        }
        let bundleID = idNode.string(&log) ?? ""
        if bundleID.isEmpty && !log.hasErrors { log.append(idNode.problem("CFBundleIdentifier is empty")) }
        if !bundleID.isEmpty, let reason = AppManifest.bundleIDProblem(bundleID) {
            // Shown escaped: the value is the app author's, and may hold terminal escapes.
            let shown = String(bundleID.prefix(80).unicodeScalars.map { $0.isASCII && $0.value >= 0x20 && $0.value != 0x7f ? Character($0) : "?" })
            log.append(idNode.problem("CFBundleIdentifier \"\(shown)\" \(reason)"))
        }
        let name = root.member("CFBundleDisplayName")?.string(&log) ?? root.member("CFBundleName")?.string(&log)
        let executable = root.member("CFBundleExecutable")?.string(&log)

        var schemes: [String] = []
        for type in root.member("CFBundleURLTypes")?.array(&log) ?? [] {
            guard type.object(&log) != nil else { continue }
            schemes += type.member("CFBundleURLSchemes")?.strings(&log) ?? []
        }
        let queried = root.member("LSApplicationQueriesSchemes")?.strings(&log) ?? []

        var documents: [DocumentType] = []
        for type in root.member("CFBundleDocumentTypes")?.array(&log) ?? [] {
            guard type.object(&log) != nil else { continue }
            let types = type.member("LSItemContentTypes")?.strings(&log) ?? []
            documents.append(DocumentType(name: type.member("CFBundleTypeName")?.string(&log), contentTypes: types))
        }

        var point: String?
        var rule: ActivationRule?
        if let ext = root.member("NSExtension"), ext.object(&log) != nil {
            point = ext.member("NSExtensionPointIdentifier")?.string(&log)
            if let r = ext.member("NSExtensionAttributes")?.member("NSExtensionActivationRule") {
                switch r.node.value {
                case let .string(s): rule = .predicate(s)
                case .object: rule = .dictionary(r.node)
                default: log.append(r.wrongType("a predicate string or a dictionary"))
                }
            }
        }

        var settings: Node?
        if let mam = root.member("IntuneMAMSettings") {
            if let pairs = mam.object(&log) {
                for (key, value) in pairs { MAMSettingsSchema.check(key, value, &log) }
                settings = mam.node
            }
            if point != nil, mam.member("ContainingAppBundleId") == nil {
                log.append(mam.problem("an extension must name its app in ContainingAppBundleId"))
            }
        }

        ManifestRequirements.check(root, &log)
        if log.hasErrors { throw LoadFailure(log.items) }
        let manifest = AppManifest(bundleID: bundleID, displayName: name, executable: executable, urlSchemes: schemes,
                                   queriedSchemes: queried, documentTypes: documents, extensionPoint: point,
                                   activationRule: rule, mamSettings: settings)
        return (manifest, log.items)
    }
}
