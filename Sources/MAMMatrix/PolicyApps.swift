import MAMPolicy

/// `parties: policy-apps` (docs/MATRIX.md): the parties come from what the policies target
/// instead of being written out: one per targeted app, signed in as a user of the tenant the
/// policy is assigned to, plus the unmanaged apps an admin's users also have.
public enum PolicyApps {
    /// An app a party can be made of: its bundle id, how reports name it, and whether it
    /// integrates the SDK.
    public struct App: Sendable, Hashable {
        public var bundleID: String
        public var name: String
        public var sdk: Bool
        public init(bundleID: String, name: String, sdk: Bool) {
            self.bundleID = bundleID
            self.name = name
            self.sdk = sdk
        }
    }

    /// The bundle ids the tenants' policies target, in order of first appearance.
    public static func targetedApps(_ tenants: [Tenant]) -> [String] {
        var seen = Set<String>()
        return tenants.flatMap { $0.policies.flatMap(\.targetedApps) }.filter { seen.insert($0.lowercased()).inserted }
    }

    /// A party per targeted app (`apps` names them) and per policy of the app that reaches a
    /// tenant user, acting as the first user it reaches (users under the same policy answer
    /// alike; two users of one app are two devices in a live run); then a party per app of
    /// `unmanaged`, with no account.
    /// A targeted app no user of the tenant gets a policy for still appears, signed in with no
    /// account (the notes say so): its cells show what an unmanaged copy of it may do.
    public static func parties(tenant: Tenant, targeted: [String], apps: [String: App], unmanaged: [App])
        -> (parties: [PartySpec], notes: [String]) {
        var parties: [PartySpec] = []
        var notes: [String] = []
        var names = Set<String>()
        func unique(_ base: String) -> String {
            var name = base, n = 2
            while !names.insert(name).inserted { name = "\(base) #\(n)"; n += 1 }
            return name
        }
        for id in targeted {
            guard let app = apps[id.lowercased()] else { continue }
            // The policy that decides for the user in this app, as the engine finds it; users
            // whose policies hold the same settings answer alike (a `--policy` override gives
            // every tenant policy the same ones), so the first of them stands for the others.
            var seenSettings = Set<PolicySettings>()
            let users = tenant.users.enumerated().filter { i, u in
                let decides = tenant.policyIndex(app: id, account: Account(userIndex: i, upn: u.upn, oid: u.oid))
                return decides.map { seenSettings.insert(tenant.policies[$0].settings).inserted } ?? false
            }.map(\.element)
            if !users.isEmpty, app.sdk {
                for user in users {
                    let short = user.upn.split(separator: "@").first.map(String.init) ?? user.upn
                    parties.append(PartySpec(name: unique("\(app.name) (\(short))"), app: app.bundleID, accounts: [user.upn]))
                }
            } else {
                if app.sdk { notes.append("no user of the tenant is assigned a policy that targets \(id): its party has no account") }
                parties.append(PartySpec(name: unique(app.name), app: app.bundleID))
            }
        }
        for app in unmanaged where !parties.contains(where: { $0.app.lowercased() == app.bundleID.lowercased() }) {
            parties.append(PartySpec(name: unique(app.name), app: app.bundleID))
        }
        return (parties, notes)
    }
}
