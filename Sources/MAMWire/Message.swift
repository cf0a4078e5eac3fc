/// The messages apps and the broker exchange (docs/PROTOCOL.md, "Messages").
public enum Message: Sendable, Equatable {
    // Handshake
    case hello(minVersion: UInt8, maxVersion: UInt8, integratesSDK: Bool)
    case welcome(version: UInt8, bundleID: String, managedAccount: String?)
    case error(code: WireErrorCode, detail: String)
    case bye
    // Identity
    case setIdentity(account: String)
    /// A view that shows several accounts at once (`""` personal); answered like `setIdentity`.
    case setViewIdentities(accounts: [String])
    // URLs
    case canOpenURL(url: String)
    case canOpenURLResult(Bool)
    case openURL(url: String)
    case urlDelivery(url: String, senderAccount: String?)
    // Every decision the broker answers with
    case decision(DecisionRecord)
    // Pasteboard
    case copy(text: String, types: [String])
    case copied(changeCount: UInt32)
    case paste
    case pasteResult(decision: DecisionRecord, text: String)
    // Open-in and share
    case listTargets(contentType: String)
    case targets([ShareTarget])
    case share(target: String, contentType: String, name: String)            // + document descriptor
    case document(contentType: String, name: String, owner: String?, encrypted: Bool)  // + descriptor
    case importRequest(source: String, contentType: String)
    case exportRequest(contentType: String)
    case exportReply(contentType: String, name: String)                     // + descriptor
    // Storage locations
    case saveTo(location: UInt8, account: String?, name: String)            // + descriptor
    case openFrom(location: UInt8, account: String?, name: String)
    case file(name: String, owner: String?)                                 // + descriptor
    // Enrollment (the emulated MAM service)
    case enroll(account: String)
    case loginAndEnroll
    case unenroll(account: String, wipe: Bool)
    /// The enrollment delegate's callbacks: kind 0 enrollment, 1 policy request, 2 unenrollment.
    case enrollmentNotice(kind: UInt8, account: String, status: UInt16)
    case restartRequest(account: String)
    /// The user signed `account` in to this app instance after its launch (`mamlaunch signin`, or
    /// the launcher's `signIn`): unasked, id 0. The app may now enroll it.
    case signedIn(account: String)
    /// The restart delegate's answer: true, the app restarts itself; false, the SDK side (here
    /// the launcher, asked by the broker) restarts it.
    case restartReply(restartsItself: Bool)
    case wipeRequest(account: String)
    /// A launch check of the account's policy on this device (docs/SEMANTICS.md §9), unasked:
    /// action 0 passed (access open again), 1 warn (the text is shown, access stays open), 2 block
    /// (the account's data stays closed until the check passes). A wipe comes as `wipeRequest`.
    /// New in version 3.
    case conditionalLaunch(account: String, action: UInt8, rule: String, message: String, detail: String)
    /// The enrollment manager's `allowedAccounts`: the broker answers with `allowedAccounts`, and
    /// sends it unasked (id 0) when a tenant reload changes the list.
    case allowedAccountsRequest
    /// `restricted` false means anyone may sign in (the SDK's nil); the list is then empty.
    case allowedAccounts(restricted: Bool, accounts: [String])
    // App configuration
    case appConfigRequest(account: String)
    /// The full data: a JSON array of objects of name → value text (`__IsDefault` marks the tenant default).
    case appConfigData(account: String, json: String)
    case appConfigChanged(account: String)
    // App Protection conditional access
    case acquireToken(account: String)
    /// outcome 0 granted, 1 protection policy required (with the home account id), 2 refused.
    case token(outcome: UInt8, homeAccountID: String?, detail: String)
    case remediateCompliance(account: String, silent: Bool)
    /// outcome 0 started, 1 queued, 2 dropped (a repeat), 3 refused.
    case remediationAccepted(outcome: UInt8, detail: String)
    /// The SDK's compliance status (0 compliant … 5 user cancelled), with a title and message.
    case complianceStatus(account: String, status: UInt8, title: String, message: String)
    case remediationInProgress(account: String)
    /// state 0 none, 1 running, 2 queued (with its place).
    case remediationProgress(state: UInt8, position: UInt16)
    // The SDK's own policy queries and data protection (MAMKit)
    /// The app asks for its policy snapshot (it answers its own policy queries with the engine).
    case policyRequest
    /// A JSON `PolicySnapshot` (≤ 60,000 bytes): the app's manifest, enrolled account and policy.
    case policySnapshot(json: String)
    /// The key of a managed account the app is enrolled with, to protect and unprotect its data.
    case keyRequest(account: String)
    /// The account's 256-bit key (exactly 32 bytes).
    case accountKey(account: String, key: [UInt8])

    /// Whether the message carries exactly one descriptor.
    public var carriesDescriptor: Bool {
        switch self {
        case .share, .document, .exportReply, .saveTo, .file: return true
        default: return false
        }
    }
}

/// An outcome as it travels, a byte: the one table every client reads it with (MAMPolicy's
/// `Outcome` in the same order; the broker's core tests hold the two together).
public enum WireOutcome: UInt8, Sendable, CaseIterable {
    case allowed, blocked, encrypted, filtered, switched, rewritten

    /// The outcome's name, as docs/SCRIPTING.md and the audit spell it (looked up, not
    /// described: an interpolated case is found by reflection, at every decision).
    public var name: String { Self.names[Int(rawValue)] }
    private static let names = allCases.map { "\($0)" }

    /// The name of the outcome `byte` stands for; the decoder lets no other byte through.
    public static func name(of byte: UInt8) -> String { WireOutcome(rawValue: byte)?.name ?? "outcome \(byte)" }
}

/// A decision as it travels: SEMANTICS §4's answer in a form any language can read.
public struct DecisionRecord: Sendable, Equatable {
    public var allowed: Bool
    /// A `WireOutcome`: 0 allowed, 1 blocked, 2 encrypted, 3 filtered, 4 switched, 5 rewritten.
    public var outcome: UInt8
    public var rule: String
    /// 0 doc, 1 observed, 2 chosen.
    public var tag: UInt8
    public var message: String
    /// What the outcome changed: the rewritten URL, the receiving identity, the delivered type.
    public var detail: String
    /// The deciding rule itself (`sendOpenInEncrypted`), where `rule` is a section several share.
    public var ruleName: String
    /// The engine's file and line that chose the rule (`MAMPolicy/Transfer.swift:56`).
    public var decidedAt: String

    public init(allowed: Bool, outcome: UInt8, rule: String, tag: UInt8, message: String, detail: String = "",
                ruleName: String = "", decidedAt: String = "") {
        self.allowed = allowed
        self.outcome = outcome
        self.rule = rule
        self.tag = tag
        self.message = message
        self.detail = detail
        self.ruleName = ruleName
        self.decidedAt = decidedAt
    }

    public static let outcomes: ClosedRange<UInt8> = 0...UInt8(WireOutcome.allCases.count - 1)
    public static let tags: ClosedRange<UInt8> = 0...2
}

/// One entry of a share sheet.
public struct ShareTarget: Sendable, Equatable {
    public var bundleID: String
    /// As in `DecisionRecord.outcome`.
    public var outcome: UInt8
    public init(bundleID: String, outcome: UInt8) {
        self.bundleID = bundleID
        self.outcome = outcome
    }
}

/// One framed message: its request id (a reply carries the id of what it answers) and the message.
public struct Frame: Sendable, Equatable {
    public var id: UInt32
    public var message: Message
    public init(id: UInt32, _ message: Message) {
        self.id = id
        self.message = message
    }
}
