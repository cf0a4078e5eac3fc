/// One side of a decision: an app, the identity it acts under, and what it has enrolled.
///
/// Build parties with `PolicyEngine.party(...)`, which resolves the targeted policy once so
/// that each decision is a handful of comparisons.
public struct Party: Sendable, Hashable {
    public var app: AppManifest
    /// The effective identity the app acts under for this action (SEMANTICS §1).
    public var identity: Identity
    /// The managed account enrolled in the app; at most one [doc].
    public var enrolled: Account?
    /// The policy targeting (app, enrolled account); nil when none does.
    public var policy: Policy?
    /// A multi-identity app that also has a personal account signed in.
    public var personalAccountSignedIn: Bool
    /// The app is managed by the device's MDM (matters for "OS sharing").
    public var isMDMManaged: Bool

    public init(app: AppManifest, identity: Identity, enrolled: Account?, policy: Policy?,
                personalAccountSignedIn: Bool = false, isMDMManaged: Bool = false) {
        self.app = app
        self.identity = identity
        self.enrolled = app.integratesSDK ? enrolled : nil
        self.policy = app.integratesSDK && enrolled != nil ? policy : nil
        self.personalAccountSignedIn = personalAccountSignedIn
        self.isMDMManaged = isMDMManaged
    }

    /// Managed: an SDK app acting under its enrolled account, which a policy targets (SEMANTICS §1).
    @inlinable public var isManaged: Bool {
        guard policy != nil, let e = enrolled, case let .account(a) = identity else { return false }
        return a == e
    }

    /// The policy that governs what this party does now; nil means unrestricted.
    @inlinable public var activePolicy: PolicySettings? { isManaged ? policy?.settings : nil }

    /// The managed account of the data this party owns now, if it is org data.
    @inlinable public var dataAccount: Account? { isManaged ? enrolled : nil }

    /// Policy-managed under `account`, whichever identity the app shows now (a push target).
    @inlinable public func isPolicyManaged(under account: Account) -> Bool {
        policy != nil && enrolled == account
    }

    /// Policy-managed under `account` and currently acting under it (an importer).
    @inlinable public func isActing(under account: Account) -> Bool {
        isManaged && enrolled == account
    }

    public var description: String { "\(app.bundleID):\(identity)" }
}
