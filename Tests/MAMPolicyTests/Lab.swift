import Foundation
import MAMPolicy

/// A small tenant built in code: two managed users and the sample apps' shapes, with one
/// policy (whose settings each test chooses) targeting every SDK app for the `sales` group.
struct Lab {
    static let adele = "adele@contoso.com"
    static let adeleOID = "5F1C7A2E-3B4D-4E6F-8A9B-0C1D2E3F4A5B"
    static let ben = "ben@contoso.com"

    var engine: PolicyEngine

    static func sdk(multiIdentity: Bool = false) -> Node {
        // The sample apps enroll on launch; an app that does not is tested on its own.
        Node(.object([("MultiIdentity", Node(.bool(multiIdentity))), ("AutoEnrollOnLaunch", Node(.bool(true)))]))
    }

    static func twins(_ schemes: [String]) -> [String] { schemes.flatMap { [$0, $0 + "-intunemam"] } }
    static func typeTwins(_ types: [String]) -> [String] { types.flatMap { [$0, "com.microsoft.intune.mam." + $0] } }
    static let fixedQueries = ["http-intunemam", "https-intunemam", "microsoft-edge-http-intunemam", "microsoft-edge-https-intunemam"]

    static let apps: [AppManifest] = [
        AppManifest(bundleID: "com.contoso.mail", urlSchemes: twins(["contosomail"]),
                    queriedSchemes: twins(["contosodocs", "tel", "skype", "notes"]) + fixedQueries,
                    documentTypes: [.init(contentTypes: typeTwins(["com.adobe.pdf", "public.plain-text"]))],
                    mamSettings: sdk(multiIdentity: true)),
        AppManifest(bundleID: "com.contoso.docs", urlSchemes: twins(["contosodocs"]),
                    queriedSchemes: twins(["contosomail"]) + fixedQueries,
                    documentTypes: [.init(contentTypes: typeTwins(["com.adobe.pdf", "public.plain-text"]))],
                    mamSettings: sdk()),
        // An SDK app that declares only the plain types (not configured for filtering).
        AppManifest(bundleID: "com.contoso.legacy", urlSchemes: ["legacy"],
                    documentTypes: [.init(contentTypes: ["com.adobe.pdf"])], mamSettings: sdk()),
        AppManifest(bundleID: "com.microsoft.msedge",
                    urlSchemes: twins(["microsoft-edge-http", "microsoft-edge-https", "http", "https"]),
                    mamSettings: sdk(multiIdentity: true)),
        AppManifest(bundleID: "com.contoso.dialer", urlSchemes: twins(["tel", "telprompt", "contosodial"]), mamSettings: sdk()),
        AppManifest(bundleID: "com.example.notes", urlSchemes: ["notes"], queriedSchemes: ["contosodocs"],
                    documentTypes: [.init(contentTypes: ["com.adobe.pdf", "public.plain-text"])]),
        AppManifest(bundleID: "com.example.chat", urlSchemes: ["skype", "chat", "tel", "contosobrowser", "contosobrowsers"],
                    documentTypes: [.init(contentTypes: ["public.image"])]),
        AppManifest(bundleID: "com.example.files", documentTypes: [.init(contentTypes: ["public.item"])]),
    ]

    static let sdkApps = apps.filter(\.integratesSDK).map(\.bundleID)

    /// - Parameters:
    ///   - settings: the policy every SDK app gets for `sales` (adele).
    ///   - benSettings: the policy for `finance` (ben), if any.
    init(_ configure: (inout PolicySettings) -> Void = { _ in }, ben benSettings: PolicySettings? = nil,
         device: Device = Device()) {
        var settings = PolicySettings()
        configure(&settings)
        self.init(settings: settings, ben: benSettings, device: device)
    }

    init(settings: PolicySettings, ben benSettings: PolicySettings? = nil, device: Device = Device()) {
        var policies = [Policy(id: "p-sales", displayName: "Sales", settings: settings,
                               targetedApps: Self.sdkApps, includedGroups: ["sales"])]
        if let benSettings {
            policies.append(Policy(id: "p-finance", displayName: "Finance", settings: benSettings,
                                   targetedApps: Self.sdkApps, includedGroups: ["finance"]))
        }
        let tenant = Tenant(name: "contoso.com",
                            users: [TenantUser(upn: Self.adele, oid: Self.adeleOID, groups: ["sales"]),
                                    TenantUser(upn: Self.ben, oid: "9A8B7C6D-0000-4000-8000-000000000001", groups: ["finance"])],
                            device: device, policies: policies)
        engine = PolicyEngine(tenant: tenant, apps: Self.apps)
    }

    static func manifest(_ short: String) -> AppManifest {
        apps.first { $0.bundleID.hasSuffix("." + short) }!
    }

    /// A party: `identity` nil means the app's default (its enrolled account, or personal for
    /// a non-SDK app); `"personal"` the personal identity; `alsoPersonal` a multi-identity app
    /// that has a personal account signed in too.
    func party(_ app: String, _ identity: String? = nil, alsoPersonal: Bool = false) -> Party {
        let m = Self.manifest(app)
        let id: Identity
        if let identity {
            id = engine.tenant.identity(named: identity)
        } else {
            id = engine.defaultIdentity(for: m)
        }
        return engine.party(m, identity: id, personalAccountSignedIn: alsoPersonal)
    }
}

extension PolicySettings {
    static func with(_ configure: (inout PolicySettings) -> Void) -> PolicySettings {
        var s = PolicySettings()
        configure(&s)
        return s
    }

    /// Send = Receive = managedApps, the seed 002 exit-criteria set-up.
    static let managedOnly = PolicySettings.with { $0.send = .managedApps; $0.receive = .managedApps }
}
