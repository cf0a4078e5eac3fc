/// A user of the tenant.
public struct TenantUser: Sendable, Hashable {
    public var upn: String
    public var oid: String?
    public var groups: [String]
    /// The user's credential at the emulated identity provider: `sha256:<salt hex>:<digest hex>`,
    /// the SHA-256 of the salt's bytes followed by the password's UTF-8 (never the password).
    /// nil: the user cannot sign in interactively (only through the launcher's `--user`).
    public var credential: String?
    public init(upn: String, oid: String? = nil, groups: [String] = [], credential: String? = nil) {
        self.upn = upn
        self.oid = oid
        self.groups = groups
        self.credential = credential
    }
}

/// The emulated device: MDM state and which managed account each SDK app has enrolled.
public struct Device: Sendable, Hashable {
    public var mdmEnrolled = false
    /// The MDM user; inbound unowned data is tagged with it under
    /// `protectInboundDataFromUnknownSources` [doc].
    public var mdmUser: Account?
    /// Bundle id (lower-cased) → the managed account enrolled in that app [chosen: the tenant
    /// file may say; otherwise the first targeted user is taken, see `Tenant.defaultEnrollment`].
    public var enrollments: [String: Account] = [:]
    /// Bundle ids (lower-cased) of apps the MDM manages; matters for "OS sharing" [doc].
    public var mdmManagedApps: Set<String> = []
    /// The accounts the admin lets people sign in with (the SDK's `allowedAccounts`); nil means
    /// no restriction [doc: seed 000 §Implement Allowed Accounts].
    public var allowedAccounts: [Account]?
    /// The phone itself, for a policy's launch checks.
    public var profile = DeviceProfile.standard
    public init() {}

    /// Whether `account` may sign in and enroll on this device.
    public func allows(_ account: Account) -> Bool {
        allowedAccounts.map { $0.contains(account) } ?? true
    }
}

/// An organisation: users, groups, device, and app-protection policies (SEMANTICS §3).
public struct Tenant: Sendable {
    public var name: String
    public var users: [TenantUser]
    public var groups: [String]
    /// Consumer accounts people sign in with; always unmanaged. Listed so tools can tell a
    /// personal account from a typo.
    public var personalAccounts: [String] = []
    public var device: Device
    public var policies: [Policy]
    /// App configurations (`targetedManagedAppConfiguration`), in file order.
    public var appConfigurations: [AppConfiguration] = []
    /// The tenant default app configuration, marked `isTenantDefault`.
    public var appConfigurationDefault: AppConfiguration?

    private var accountIndex: [String: Int] = [:]
    /// bundle id (lower-cased) → user index → policy index.
    private var targets: [String: [Int: Int]] = [:]

    public init(name: String, users: [TenantUser] = [], groups: [String] = [], device: Device = Device(), policies: [Policy] = []) {
        self.name = name
        self.users = users
        self.groups = groups
        self.device = device
        self.policies = policies
        reindex()
    }

    /// Rebuilds the lookup tables; returns the (app, user, first policy, second policy) conflicts found.
    @discardableResult
    public mutating func reindex() -> [(app: String, user: Int, first: Int, second: Int)] {
        accountIndex = [:]
        for (i, u) in users.enumerated() {
            accountIndex[u.upn.lowercased()] = i
            if let oid = u.oid { accountIndex[oid.lowercased()] = i }
        }
        targets = [:]
        var conflicts: [(String, Int, Int, Int)] = []
        for (p, policy) in policies.enumerated() {
            for (u, user) in users.enumerated() where policy.isAssigned(toGroups: user.groups) {
                for app in policy.targetedApps {
                    if let existing = targets[app]?[u] {
                        if existing != p { conflicts.append((app, u, existing, p)) }
                    } else {
                        targets[app, default: [:]][u] = p
                    }
                }
            }
        }
        return conflicts
    }

    /// The tenant with each policy's apps cut to those it decides for some user it is assigned
    /// to. Where two policies target one user and app, the first decides (`policy(app:account:)`);
    /// an app group resolved through the catalog can make that happen in a tenant that loaded
    /// clean. Written as a file, the cut tenant loads without the conflict, into the same
    /// decisions; what remains a conflict (a policy that decides an app for one of its users and
    /// not for another) is returned, and has no file form.
    public func withEffectiveTargets() -> (tenant: Tenant, conflicts: [(app: String, user: Int, first: Int, second: Int)]) {
        var winner: [String: [Int: Int]] = [:]
        var assigned: [[Int]] = []
        for (p, policy) in policies.enumerated() {
            let users = users.indices.filter { policy.isAssigned(toGroups: self.users[$0].groups) }
            assigned.append(users)
            for app in policy.targetedApps { for u in users where winner[app]?[u] == nil { winner[app, default: [:]][u] = p } }
        }
        var cut = self
        for p in cut.policies.indices where !assigned[p].isEmpty {
            let policy = cut.policies[p]
            let keep = policy.targetedApps.indices.filter { i in assigned[p].contains { winner[policy.targetedApps[i]]?[$0] == p } }
            cut.policies[p].targetedApps = keep.map { policy.targetedApps[$0] }
            if policy.appOrigins.count == policy.targetedApps.count { cut.policies[p].appOrigins = keep.map { policy.appOrigins[$0] } }
        }
        let conflicts = cut.reindex()
        return (cut, conflicts)
    }

    /// The domains of the tenant's own users' UPNs (lower-cased): an account in one of them that
    /// the tenant does not know is a typo or a user who was never added, not an outsider.
    public var ownDomains: Set<String> {
        Set(users.compactMap { u in u.upn.split(separator: "@").last.map { $0.lowercased() } })
    }

    /// Whether `name` is an address in one of the tenant's own domains that no user of the tenant has.
    public func isUnknownInOwnDomain(_ name: String) -> Bool {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard knownAccount(named: trimmed) == nil, let at = trimmed.lastIndex(of: "@") else { return false }
        return ownDomains.contains(trimmed[trimmed.index(after: at)...].lowercased())
    }

    /// " (did you mean \"UPN\"?)" with the tenant's user nearest to a name it does not know,
    /// or "" when it has no user.
    public func nearestUser(to name: String) -> String {
        NearestName.nearest(to: name.trimmingCharacters(in: .whitespaces), in: users.map(\.upn)).map { " (did you mean \"\($0)\"?)" } ?? ""
    }

    /// The tenant's account for a UPN or OID (case-insensitive), or nil when the tenant has no such user.
    public func knownAccount(named name: String) -> Account? {
        guard let i = accountIndex[name.lowercased()] else { return nil }
        return Account(userIndex: i, upn: users[i].upn, oid: users[i].oid)
    }

    /// An identity from its written form: `personal` or `""` is the personal identity; anything
    /// else is an account, known to the tenant or not.
    public func identity(named name: String) -> Identity {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty || trimmed.lowercased() == "personal" { return .personal }
        return .account(knownAccount(named: trimmed) ?? Account(unknown: trimmed))
    }

    /// The policy that targets this app for this account, if any.
    public func policyIndex(app bundleID: String, account: Account) -> Int? {
        guard let u = account.userIndex else { return nil }
        return targets[bundleID.lowercased()]?[u]
    }

    public func policy(app bundleID: String, account: Account) -> Policy? {
        policyIndex(app: bundleID, account: account).map { policies[$0] }
    }

    /// Whether any policy targets this app at all.
    public func isTargeted(app bundleID: String) -> Bool { targets[bundleID.lowercased()] != nil }

    /// The managed account an SDK app has enrolled when nobody said otherwise: the device's
    /// entry for the app, else the first user (in file order) that a policy targets for it.
    public func defaultEnrollment(app bundleID: String) -> Account? {
        if let a = device.enrollments[bundleID.lowercased()] { return a }
        guard let byUser = targets[bundleID.lowercased()], let u = byUser.keys.min() else { return nil }
        return Account(userIndex: u, upn: users[u].upn, oid: users[u].oid)
    }
}

import Foundation
