/// An immutable value kept behind one reference, so that copying a `Party` (into a pasteboard
/// item, a closure, an array) costs one retain instead of one per string and array inside.
@usableFromInline
final class Shared<Value: Sendable>: Sendable {
    @usableFromInline let value: Value
    init(_ value: Value) { self.value = value }
}

/// One side of a decision: an app, the identity it acts under, and what it has enrolled.
///
/// Build parties with `PolicyEngine.party(...)`, which resolves the targeted policy once so
/// that each decision is a handful of comparisons.
public struct Party: Sendable, Hashable, CustomStringConvertible {
    @usableFromInline let appRef: Shared<AppManifest>
    @usableFromInline let policyRef: Shared<Policy>?
    /// The effective identity the app acts under for this action (docs/SEMANTICS.md §1).
    public var identity: Identity
    /// The managed account enrolled in the app; at most one [doc].
    public let enrolled: Account?
    /// A multi-identity app that also has a personal account signed in.
    public var personalAccountSignedIn: Bool
    /// The app is managed by the device's MDM (matters for "OS sharing").
    public var isMDMManaged: Bool
    public let integratesSDK: Bool
    public let isMultiIdentity: Bool
    /// False for a multi-identity app that has set no identity yet (its launch state); it then
    /// acts as unmanaged, like `.personal`, without a personal account being implied.
    public var identityIsSet: Bool { !launchState || identity != .personal }
    @usableFromInline let launchState: Bool

    public init(app: AppManifest, identity: Identity, enrolled: Account?, policy: Policy?,
                personalAccountSignedIn: Bool = false, isMDMManaged: Bool = false, identityIsSet: Bool = true) {
        self.appRef = Shared(app)
        self.identity = identity
        self.enrolled = app.integratesSDK ? enrolled : nil
        self.policyRef = app.integratesSDK && enrolled != nil ? policy.map { Shared($0) } : nil
        self.personalAccountSignedIn = personalAccountSignedIn
        self.isMDMManaged = isMDMManaged
        self.integratesSDK = app.integratesSDK
        self.isMultiIdentity = app.isMultiIdentity
        self.launchState = !identityIsSet
    }

    public var app: AppManifest { appRef.value }
    /// The policy targeting (app, enrolled account); nil when none does.
    public var policy: Policy? { policyRef?.value }
    public var bundleID: String { appRef.value.bundleID }

    /// Managed: an SDK app acting under its enrolled account, which a policy targets (docs/SEMANTICS.md §1).
    @inlinable public var isManaged: Bool {
        guard policyRef != nil, let e = enrolled, case let .account(a) = identity else { return false }
        return a == e
    }

    /// The policy that governs what this party does now; nil means unrestricted.
    public var activePolicy: PolicySettings? { isManaged ? policyRef?.value.settings : nil }

    /// The same, without copying the settings out (for the engine's hot paths).
    @inlinable var activeRef: Shared<Policy>? { isManaged ? policyRef : nil }

    /// The managed account of the data this party owns now, if it is org data.
    @inlinable public var dataAccount: Account? { isManaged ? enrolled : nil }

    /// Policy-managed under `account`, whichever identity the app shows now (a push target).
    @inlinable public func isPolicyManaged(under account: Account) -> Bool {
        policyRef != nil && enrolled == account
    }

    /// Policy-managed under `account` and currently acting under it (an importer).
    @inlinable public func isActing(under account: Account) -> Bool {
        isManaged && enrolled == account
    }

    /// Whether the party acts under exactly this account now.
    @inlinable func acts(as account: Account) -> Bool {
        if case let .account(a) = identity { return a == account }
        return false
    }

    public static func == (a: Party, b: Party) -> Bool {
        (a.appRef === b.appRef || a.appRef.value == b.appRef.value) && a.identity == b.identity && a.enrolled == b.enrolled
            && a.policy == b.policy && a.personalAccountSignedIn == b.personalAccountSignedIn && a.isMDMManaged == b.isMDMManaged
            && a.identityIsSet == b.identityIsSet
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(bundleID)
        hasher.combine(identity)
        hasher.combine(enrolled)
    }

    public var description: String { "\(bundleID):\(identityDescription)" }

    /// The identity as `explain` shows it: an account, `personal`, or `no identity set`.
    public var identityDescription: String { identityIsSet ? identity.description : "no identity set" }
}
