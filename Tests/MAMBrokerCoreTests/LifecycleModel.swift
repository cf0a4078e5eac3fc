import MAMPolicy
import MAMWire

/// The identity lifecycle of docs/SEMANTICS.md §1 kept beside a broker, from what the user did
/// (launch with or without `--user`, sign in, quit) and what the apps were told (enrollment,
/// unenrollment and wipe notices, decisions). It holds state only: every decision about that
/// state is the engine's (`party`, `setIdentity`, `openIn`, `enrollment(of:signedIn:)`), so a
/// broker that disagrees with it has either lost track of who is signed in or decided by
/// itself.
struct LifecycleModel {
    let engine: PolicyEngine

    struct Instance {
        var app: AppManifest
        /// The accounts the user signed in to this instance and has not signed out, in order.
        var signedIn: [Account]
        var identity: Identity
        /// The account the tenant enrolls in the app at launch (before the service enrolls one).
        var launchEnrolled: Account?
        /// A personal account (a consumer one, or an account the tenant does not know) signed in.
        var personal: Bool
    }

    var instances: [Int: Instance] = [:]
    /// The managed account the service enrolled in each app (by lower-cased bundle id), as the
    /// app's instances were told.
    var appEnrolled: [String: Account] = [:]
    /// (app, account) pairs the user signed out of the app (an unenrollment, a wipe).
    var signedOut: Set<String> = []

    init(engine: PolicyEngine) { self.engine = engine }

    static func key(_ app: AppManifest, _ a: Account) -> String { app.bundleID.lowercased() + "|" + a.description.lowercased() }

    func account(_ name: String) -> Account? { engine.tenant.identity(named: name).account }

    /// A user launches `app`, naming an account with `--user` or not.
    mutating func launch(_ id: Int, _ app: AppManifest, user: String?) {
        let acct = user.flatMap(account)
        let identity = acct.map(Identity.account) ?? engine.defaultIdentity(for: app)
        let probe = engine.party(app, identity: identity).enrolled
        var signedIn: [Account] = []
        if let acct {
            signedIn = [acct]
            if app.integratesSDK { signedOut.remove(Self.key(app, acct)) }
        } else if let probe, !signedOut.contains(Self.key(app, probe)) {
            signedIn = [probe]
        }
        let personal = user != nil && (acct == nil || acct!.userIndex == nil)
        // The app's enrollment when it has one, else the tenant's for this launch.
        let atLaunch = app.integratesSDK ? appEnrolled[app.bundleID.lowercased()] ?? probe : probe
        instances[id] = Instance(app: app, signedIn: signedIn, identity: identity,
                                 launchEnrolled: atLaunch.flatMap { signedIn.contains($0) ? $0 : nil }, personal: personal)
    }

    /// The user signs `account` in to an instance (the sign-in was accepted).
    mutating func signIn(_ id: Int, _ a: Account) {
        guard var i = instances[id] else { return }
        if !i.signedIn.contains(a) { i.signedIn.append(a) }
        if a.userIndex == nil { i.personal = true }
        if i.app.integratesSDK { signedOut.remove(Self.key(i.app, a)) }
        instances[id] = i
    }

    /// The managed account enrolled in an instance: the service's for its app, else the
    /// tenant's launch enrollment, and only while the user has it signed in there.
    func enrolled(_ id: Int) -> Account? {
        guard let i = instances[id], i.app.integratesSDK else { return nil }
        guard let e = appEnrolled[i.app.bundleID.lowercased()] ?? i.launchEnrolled,
              i.signedIn.contains(e), !signedOut.contains(Self.key(i.app, e)) else { return nil }
        return e
    }

    /// The party an instance is, built by the engine from the model's state.
    func party(_ id: Int) -> Party {
        let i = instances[id]!
        let e = enrolled(id)
        return Party(app: i.app, identity: i.identity, enrolled: e, policy: e.flatMap { engine.tenant.policy(app: i.app.bundleID, account: $0) },
                     personalAccountSignedIn: i.app.isMultiIdentity && (i.personal || i.identity == .personal),
                     isMDMManaged: engine.tenant.device.mdmManagedApps.contains(i.app.bundleID.lowercased()))
    }

    /// Whether the engine's state lets `account`'s key go to this instance: the account is a
    /// tenant user the device allows, signed in here, the instance's enrolled account (the
    /// app's, when the service enrolled one) and a policy targets it there.
    func mayHoldKey(_ id: Int, _ a: Account) -> Bool {
        guard let i = instances[id], a.userIndex != nil, enrolled(id) == a else { return false }
        if let e = appEnrolled[i.app.bundleID.lowercased()], e != a { return false }
        return i.signedIn.contains(a) && engine.tenant.device.allows(a) && engine.tenant.policy(app: i.app.bundleID, account: a) != nil
    }

    /// What an instance was told by the service.
    mutating func told(_ id: Int, _ m: Message) {
        guard let app = instances[id]?.app else { return }
        let bundle = app.bundleID.lowercased()
        switch m {
        case let .enrollmentNotice(kind, name, status) where kind < 2:
            guard let a = account(name), let s = EnrollmentStatus(rawValue: Int(status)) else { return }
            switch s {
            case .newPoliciesReceived, .policiesHaveNotChanged, .alreadyEnrolled:
                guard a.userIndex != nil, engine.tenant.policy(app: app.bundleID, account: a) != nil else { return }
                let before = Dictionary(uniqueKeysWithValues: instances.keys.map { ($0, enrolled($0)) })
                appEnrolled[bundle] = a
                // An instance with the account signed in acts under it once it is newly enrolled there.
                for (other, i) in instances where i.app.bundleID.lowercased() == bundle && i.signedIn.contains(a) {
                    if s == .newPoliciesReceived, before[other]! != a { instances[other]!.identity = .account(a) }
                    instances[other]!.launchEnrolled = a
                }
            case .noPolicyReceived, .licensedNotTargeted:
                if appEnrolled[bundle] == a { appEnrolled[bundle] = nil }
            default:
                break
            }
            // One managed account per app: an instance without it signed in has none of its own.
            let answered: Set<EnrollmentStatus> = [.newPoliciesReceived, .policiesHaveNotChanged, .alreadyEnrolled, .noPolicyReceived, .licensedNotTargeted]
            if answered.contains(s), let m = appEnrolled[bundle] {
                for (other, i) in instances where i.app.bundleID.lowercased() == bundle && !i.signedIn.contains(m) { instances[other]!.launchEnrolled = nil }
            }
        case let .enrollmentNotice(2, name, status) where status == 104 || status == 102:
            guard let a = account(name) else { return }
            signOut(app, a)
        case let .wipeRequest(name):
            guard let a = account(name) else { return }
            signOut(app, a)
        default:
            break
        }
    }

    mutating func signOut(_ app: AppManifest, _ a: Account) {
        let bundle = app.bundleID.lowercased()
        let before = Dictionary(uniqueKeysWithValues: instances.keys.map { ($0, enrolled($0)) })
        signedOut.insert(Self.key(app, a))
        if appEnrolled[bundle] == a { appEnrolled[bundle] = nil }
        for (id, var i) in instances where i.app.bundleID.lowercased() == bundle {
            i.signedIn.removeAll { $0 == a }
            // An instance that was enrolled with the account has no identity of its own left.
            if before[id]! == a || i.launchEnrolled == a { i.identity = .personal }
            if i.launchEnrolled == a { i.launchEnrolled = nil }
            instances[id] = i
        }
    }
}
