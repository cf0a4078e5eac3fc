/// The decision engine: every decision of docs/SEMANTICS.md §4 as a function over value types.
///
/// Pure: no I/O, no clock, no globals. The broker, MAMKit and `mamlaunch` all ask it and never
/// decide themselves.
public struct PolicyEngine: Sendable {
    public var tenant: Tenant
    /// Known app manifests by bundle id (lower-cased).
    public var apps: [String: AppManifest]

    public init(tenant: Tenant, apps: [AppManifest] = []) {
        self.tenant = tenant
        self.apps = Dictionary(apps.map { ($0.bundleID.lowercased(), $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// The identity an app starts under when nobody says: the managed account enrolled in an SDK
    /// app, else personal.
    public func defaultIdentity(for app: AppManifest) -> Identity {
        guard app.integratesSDK, let a = launchEnrollment(app) else { return .personal }
        return .account(a)
    }

    /// The account an SDK app is enrolled with before it enrolls anyone itself: the device's
    /// entry for the app, else, for an app that enrolls on launch, the first targeted user. An
    /// app without `AutoEnrollOnLaunch` is unmanaged until it enrolls an account itself
    /// (registerAndEnroll or loginAndEnroll) [seed 001 §settings: AutoEnrollOnLaunch defaults to NO].
    public func launchEnrollment(_ app: AppManifest) -> Account? {
        guard app.integratesSDK else { return nil }
        if let e = tenant.device.enrollments[app.bundleID.lowercased()] { return e }
        return app.enrollsOnLaunch ? tenant.defaultEnrollment(app: app.bundleID) : nil
    }

    /// Builds a party.
    ///
    /// - Parameters:
    ///   - identity: the identity the app acts under now.
    ///   - enrolled: the managed account enrolled in the app; `nil` takes the tenant's: the
    ///     device's `enrollments` entry for the app when there is one, else, for an app that
    ///     enrolls on launch (`launchEnrollment`), the account acting when a policy targets it,
    ///     else (multi-identity) the first targeted user; else nothing. Another
    ///     account of the tenant acting in an app whose enrolled account is someone else is
    ///     not managed there: the policy follows the enrolled account only [seed 002
    ///     §Stage 5: once an account is enrolled, the app's other users are unmanaged].
    ///     A single-identity app acting as personal has nothing enrolled [doc: its process
    ///     identity is the enrolled account].
    ///   - personalAccountSignedIn: a multi-identity app with a personal account as well.
    public func party(_ app: AppManifest, identity: Identity, enrolled: Account? = nil,
                      personalAccountSignedIn: Bool = false) -> Party {
        party(app, identity: identity, enrollment: enrolled ?? defaultEnrollment(app, acting: identity),
              personalAccountSignedIn: personalAccountSignedIn)
    }

    /// The party of an app whose enrolled account is known (nil: the app has enrolled nobody),
    /// as the broker has it once the app's accounts signed in: the enrolled account is the first
    /// signed-in targeted account [SEMANTICS §1], never the tenant's default for an app that
    /// signed in only others (Mail run for dana alone has nobody enrolled).
    public func party(_ app: AppManifest, identity: Identity, enrollment: Account?, personalAccountSignedIn: Bool = false) -> Party {
        let policy = enrollment.flatMap { tenant.policy(app: app.bundleID, account: $0) }
        return Party(app: app, identity: identity, enrolled: enrollment, policy: policy,
                     personalAccountSignedIn: personalAccountSignedIn || (app.isMultiIdentity && identity == .personal),
                     isMDMManaged: tenant.device.mdmManagedApps.contains(app.bundleID.lowercased()))
    }

    /// A multi-identity app in its launch state: no identity set yet, so it is unmanaged and
    /// no policy applies [seed 000 §Switch identities: a multi-identity app starts under an
    /// unknown account that is not managed]. Unlike the personal identity (`""`), it does not
    /// mean a personal account is signed in.
    public func partyWithNoIdentitySet(_ app: AppManifest, enrolled: Account? = nil,
                                       personalAccountSignedIn: Bool = false) -> Party {
        let account = app.integratesSDK ? (enrolled ?? launchEnrollment(app)) : nil
        let policy = account.flatMap { tenant.policy(app: app.bundleID, account: $0) }
        return Party(app: app, identity: .personal, enrolled: account, policy: policy,
                     personalAccountSignedIn: personalAccountSignedIn,
                     isMDMManaged: tenant.device.mdmManagedApps.contains(app.bundleID.lowercased()),
                     identityIsSet: false)
    }

    private func defaultEnrollment(_ app: AppManifest, acting identity: Identity) -> Account? {
        guard app.integratesSDK else { return nil }
        if let e = tenant.device.enrollments[app.bundleID.lowercased()] { return e }
        switch identity {
        case let .account(a):
            // Only an app that enrolls on launch has enrolled the account it acts as.
            guard app.enrollsOnLaunch else { return nil }
            // A single-identity app's process identity is its enrolled account.
            let targeted = tenant.policy(app: app.bundleID, account: a) != nil
            return targeted || !app.isMultiIdentity ? a : launchEnrollment(app)
        case .personal:
            return app.isMultiIdentity ? launchEnrollment(app) : nil
        }
    }
}
