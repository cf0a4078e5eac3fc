import MAMPolicy

/// Something that arrived unasked, in arrival order (`MAMApp.events`): the Swift form of the
/// SDK's notifications and delegate callbacks. The delegates are called as well.
public enum MAMEvent: Sendable {
    case url(URLDelivery)
    case document(ReceivedDocument)
    case enrollment(EnrollmentNotice)
    case restart(account: String)
    /// The user signed `account` in to this instance after launch (`mamlaunch signin`): it is
    /// now among the policy snapshot's signed-in accounts, and the app may enroll it (the
    /// counterpart of the SDK's account notifications, such as its allowed-accounts change).
    case signedIn(account: String)
    case wipe(account: String, completed: Bool)
    case appConfigChanged(account: String)
    case compliance(ComplianceResult)
    /// `IntuneMAMPolicyDidChangeNotification`: a new snapshot arrived.
    case policyChanged
    /// `IntuneMAMAllowedAccountsDidChangeNotification`: the admin changed the accounts that
    /// may sign in (seed 000 §Implement Allowed Accounts); nil means no restriction.
    case allowedAccountsChanged([String]?)
    /// A launch check of an account's policy warned, blocked, or passed again after a block
    /// (a wipe arrives as `.wipe`).
    case launchCheck(LaunchCheckNotice)
}

/// What a launch check told the app about an account (docs/SEMANTICS.md §9).
public struct LaunchCheckNotice: Sendable, Hashable {
    public enum Action: Int, Sendable { case passed = 0, warn, block }
    public var account: String
    public var action: Action
    /// The deciding rule's name (`launchOfflineAccess`); `launchAllowed` when it passed.
    public var rule: String
    /// What the user is shown; empty when it passed.
    public var message: String
    /// Each failed check: what the device or app is against what the policy asks.
    public var detail: String
}

/// `IntuneMAMBlockAccountReason`.
public enum BlockAccountReason: Int, Sendable, CaseIterable {
    case notBlocked = 0, conditionalLaunchBlocked, conditionalLaunchCanceled, clockedOut
}

/// A URL another app opened in this one.
public struct URLDelivery: Sendable, Hashable {
    /// As the broker delivered it (a `-intunemam` twin for a managed sender under a policy).
    public var delivered: String
    /// The URL the app opens: the twin unwrapped.
    public var url: String
    /// The sender's managed account, as the broker established it (never the URL's claim).
    public var sender: String?
    /// The UI identity after receiving (the kit may have switched to the sender's account).
    public var identity: Identity?
}

/// A document that arrived: pushed by another app (open-in), or the answer to an import.
public struct ReceivedDocument: Sendable, Hashable {
    public enum Via: String, Sendable { case openIn = "open-in", `import` }
    public var contentType: String
    public var name: String
    /// The managed account whose data it is; nil for personal data.
    public var owner: String?
    /// It arrived as ciphertext.
    public var encrypted: Bool
    /// The bytes as received.
    public var bytes: [UInt8]
    /// The plaintext, when the app could read it (plaintext delivered, or ciphertext opened
    /// with the key of an account this app is managed under).
    public var plaintext: [UInt8]?
    public var via: Via
    /// The UI identity after receiving.
    public var identity: Identity?

    public var isReadable: Bool { plaintext != nil }
}

/// One of the enrollment delegate's callbacks (`IntuneMAMEnrollmentStatus`).
public struct EnrollmentNotice: Sendable, Hashable {
    public enum Kind: Int, Sendable { case enrollment = 0, policy = 1, unenrollment = 2 }
    public var kind: Kind
    public var account: String
    /// The raw status code; `status` names it when the SDK has it.
    public var code: Int
    public var status: EnrollmentStatus? { EnrollmentStatus(rawValue: code) }
    public var didSucceed: Bool { code < 200 }
    /// The enrollment leaves the account registered: enrolled (100-103, 208 already), or failed
    /// in a way the service retries every 24 hours (200 not licensed, 225 not targeted).
    /// Registered and waiting for a retry, or enrolled: 200, 225 and 227 are retried every 24
    /// hours (227 once the app's other user is unenrolled); 211 asks the app to remove the account.
    var leavesAccountRegistered: Bool { kind == .enrollment && (didSucceed || code == 208 || code == 200 || code == 225 || code == 227) }
}

/// `IntuneMAMComplianceStatus`.
public enum ComplianceStatus: Int, Sendable, CaseIterable {
    case compliant = 0, notCompliant, serviceFailure, networkFailure, interactionRequired, userCancelled
}

/// The compliance delegate's callback: an account's status with the text to show.
public struct ComplianceResult: Sendable, Hashable {
    public var account: String
    public var status: ComplianceStatus
    public var title: String
    public var message: String
}

/// `IntuneMAMPolicyDelegate`. Every method has a default (the SDK's behaviour when the app does
/// not implement it).
public protocol PolicyDelegate: Sendable {
    /// The kit needs the UI to switch to `account` (a URL or document from it arrived, or the
    /// user cancelled conditional launch). `.success` allows, anything else refuses.
    func identitySwitchRequired(for account: String, reason: IdentitySwitchReason) async -> SwitchIdentityResult
    /// Conditional launch for a managed identity coming on screen: true when the user passed
    /// (entered the PIN, signed in). MAMLab has no UI: the default passes.
    func conditionalLaunch(for account: String, requirements: ConditionalLaunchRequirements) async -> Bool
    /// The service enrolled an account on its own; the app should add it.
    func addAccount(_ account: String) async -> Bool
    /// Delete the account's data; false when incomplete.
    func wipeData(for account: String) async -> Bool
    /// A restart is needed (a first policy). True: the app restarts itself.
    func restartApplication() async -> Bool
    /// `blockAccountId:reason:`: hide the account; false (the SDK's Failed) when the app cannot.
    func blockAccount(_ account: String, reason: BlockAccountReason) async -> Bool
}

extension PolicyDelegate {
    public func identitySwitchRequired(for account: String, reason: IdentitySwitchReason) async -> SwitchIdentityResult { .success }
    public func conditionalLaunch(for account: String, requirements: ConditionalLaunchRequirements) async -> Bool { true }
    public func addAccount(_ account: String) async -> Bool { true }
    public func wipeData(for account: String) async -> Bool { true }
    public func restartApplication() async -> Bool { false }
    public func blockAccount(_ account: String, reason: BlockAccountReason) async -> Bool { true }
}

/// `IntuneMAMEnrollmentDelegate`.
public protocol EnrollmentDelegate: Sendable {
    func enrollmentRequest(with notice: EnrollmentNotice) async
    func policyRequest(with notice: EnrollmentNotice) async
    func unenrollRequest(with notice: EnrollmentNotice) async
}

extension EnrollmentDelegate {
    public func enrollmentRequest(with notice: EnrollmentNotice) async {}
    public func policyRequest(with notice: EnrollmentNotice) async {}
    public func unenrollRequest(with notice: EnrollmentNotice) async {}
}

/// `IntuneMAMComplianceDelegate`.
public protocol ComplianceDelegate: Sendable {
    func account(_ account: String, hasComplianceStatus status: ComplianceStatus, message: String, title: String) async
}

/// `IntuneMAMAppConfigDidChangeNotification` as a delegate.
public protocol AppConfigDelegate: Sendable {
    func appConfigDidChange(for account: String) async
}
