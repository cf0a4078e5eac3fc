/// The decision engine: every decision of SEMANTICS §4 as a function over value types.
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
        guard app.integratesSDK, let a = tenant.defaultEnrollment(app: app.bundleID) else { return .personal }
        return .account(a)
    }

    /// Builds a party.
    ///
    /// - Parameters:
    ///   - identity: the identity the app acts under now.
    ///   - enrolled: the managed account enrolled in the app; `nil` takes the tenant's default
    ///     for an SDK app (the device's enrollment entry, else the first targeted user).
    ///     A single-identity app acting as personal has nothing enrolled [doc: its process
    ///     identity is the enrolled account].
    ///   - personalAccountSignedIn: a multi-identity app with a personal account as well.
    public func party(_ app: AppManifest, identity: Identity, enrolled: Account? = nil,
                      personalAccountSignedIn: Bool = false) -> Party {
        var account = enrolled
        if account == nil, app.integratesSDK {
            switch identity {
            case let .account(a):
                // A single-identity app's process identity is its enrolled account.
                let targeted = tenant.policy(app: app.bundleID, account: a) != nil
                account = targeted || !app.isMultiIdentity ? a : tenant.defaultEnrollment(app: app.bundleID)
            case .personal:
                account = app.isMultiIdentity ? tenant.defaultEnrollment(app: app.bundleID) : nil
            }
        }
        let policy = account.flatMap { tenant.policy(app: app.bundleID, account: $0) }
        return Party(app: app, identity: identity, enrolled: account, policy: policy,
                     personalAccountSignedIn: personalAccountSignedIn || (app.isMultiIdentity && identity == .personal),
                     isMDMManaged: tenant.device.mdmManagedApps.contains(app.bundleID.lowercased()))
    }
}
