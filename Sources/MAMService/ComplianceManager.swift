import Foundation
import MAMPolicy

/// Compliance remediations of every app, as the SDK's `IntuneMAMComplianceManager` runs them
/// [headers: IntuneMAMComplianceManager.h]: requests for other accounts queue behind the running
/// one (one at a time per app [chosen]), and a repeat for an account running or queued is dropped. Each takes `duration` on the
/// caller's clock; the result is decided when it finishes, from the facts of that moment.
///
/// A value: the broker holds it, passes `now` (its clock's, as a `Duration` since its start) and
/// the facts it keeps, delivers the results to the apps and audits every decision.
public struct ComplianceManager: Sendable {
    /// How long a remediation takes [chosen: the service answers in a second].
    public static let defaultDuration: Duration = .seconds(1)
    /// Remediations one app may have waiting behind the running one [chosen: the broker bounds every queue].
    public static let maximumQueued = 16
    /// The longest account id taken, in UTF-8 bytes [chosen: a UPN is at most 113 characters, an OID 36].
    public static let maximumAccountIdLength = 256

    public var access: ConditionalAccess
    public var duration: Duration
    /// Lower-cased bundle id → that app's remediations, the running one first.
    private var lanes: [String: [Remediation]] = [:]

    public init(access: ConditionalAccess, duration: Duration = Self.defaultDuration) {
        self.access = access
        self.duration = duration
    }

    /// A remediation asked for and not finished yet.
    public struct Remediation: Sendable, Hashable {
        public var app: String
        public var account: Account
        /// The name the app passed, echoed back in the result.
        public var accountId: String
        public var silent: Bool
        public var requestedAt: Duration
        /// Set once it runs; it finishes at `startedAt + duration`.
        public var startedAt: Duration?
    }

    /// A new tenant: remediations under way finish under it. Their accounts are named again in
    /// it, since an account is the tenant's user index and users may have moved or gone.
    public mutating func reload(_ access: ConditionalAccess) {
        self.access = access
        for key in lanes.keys {
            lanes[key] = lanes[key]?.map { r in
                var r = r
                r.account = access.account(named: r.accountId)
                return r
            }
        }
    }

    /// `remediateComplianceForAccountId:silent:`.
    public mutating func request(app: String, accountId: String, silent: Bool, now: Duration) -> RemediationRequestDecision {
        let trimmed = accountId.trimmingCharacters(in: .whitespaces)
        let account = access.account(named: trimmed)
        func decide(_ o: RemediationRequestDecision.Outcome, _ r: ConditionalAccessReason, _ d: String, position: Int? = nil) -> RemediationRequestDecision {
            RemediationRequestDecision(outcome: o, app: app, account: account, silent: silent, position: position, reason: r, detail: d)
        }
        guard !trimmed.isEmpty else { return decide(.refused, .invalidAccountId, "a remediation needs an account id") }
        guard trimmed.utf8.count <= Self.maximumAccountIdLength else {
            return decide(.refused, .invalidAccountId, "an account id is at most \(Self.maximumAccountIdLength) bytes; this one has \(trimmed.utf8.count)")
        }
        let key = app.lowercased()
        var lane = lanes[key, default: []]
        if let i = lane.firstIndex(where: { $0.account == account }) {
            let state = i == 0 ? "running" : "queued at position \(i)"
            return decide(.dropped, .duplicate, "a remediation for \(account) in \(app) is already \(state); the repeat is dropped", position: i)
        }
        guard lane.count <= Self.maximumQueued else {
            return decide(.refused, .queueFull, "\(app) already has \(Self.maximumQueued) remediations waiting")
        }
        let starts = lane.isEmpty
        lane.append(Remediation(app: app, account: account, accountId: trimmed, silent: silent, requestedAt: now, startedAt: starts ? now : nil))
        lanes[key] = lane
        if starts {
            return decide(.started, .started, "the \(silent ? "silent" : "interactive") remediation for \(account) in \(app) runs now", position: 0)
        }
        return decide(.queued, .queued, "\(lane[0].account) is being remediated in \(app); \(account) waits at position \(lane.count - 1)",
                      position: lane.count - 1)
    }

    /// `remediationInProgressForAccountId:`: running or waiting in that app.
    public func progress(app: String, accountId: String) -> RemediationProgress {
        let account = access.account(named: accountId.trimmingCharacters(in: .whitespaces))
        guard let lane = lanes[app.lowercased()], let i = lane.firstIndex(where: { $0.account == account }) else { return .none }
        if i == 0, let started = lane[0].startedAt { return .running(since: started) }
        return .queued(position: i)
    }

    public func isRemediationInProgress(app: String, accountId: String) -> Bool {
        progress(app: app, accountId: accountId).isInProgress
    }

    /// The remediations of an app, the running one first.
    public func remediations(app: String) -> [Remediation] { lanes[app.lowercased()] ?? [] }

    /// When the next remediation finishes; the broker sets its timer for it.
    public var nextDeadline: Duration? {
        lanes.values.compactMap { $0.first?.startedAt.map { $0 + duration } }.min()
    }

    /// Finishes every remediation due by `now`, in the order they fall due, starting each
    /// waiting one when the one before it finishes. `facts` gives what the broker knows of an
    /// app; an account a result enrolls counts as that app's enrolled account for the ones after.
    public mutating func advance(now: Duration, facts: (_ bundleID: String) -> AppComplianceFacts) -> [RemediationResult] {
        var results: [RemediationResult] = []
        var enrolled: [String: Account] = [:]
        while true {
            let due = lanes.compactMap { key, lane -> (key: String, at: Duration)? in
                guard let s = lane.first?.startedAt, s + duration <= now else { return nil }
                return (key, s + duration)
            }.min { ($0.at, $0.key) < ($1.at, $1.key) }
            guard let (key, at) = due, var lane = lanes[key] else { break }
            let r = lane.removeFirst()
            var f = facts(r.app)
            if let e = enrolled[key] { f.enrolledAccount = e }
            let outcome = access.remediationOutcome(for: r.account, silent: r.silent, app: f)
            if outcome.enrolls { enrolled[key] = r.account }
            results.append(RemediationResult(remediation: r, finishedAt: at, outcome: outcome))
            if lane.isEmpty { lanes[key] = nil } else { lane[0].startedAt = at; lanes[key] = lane }
        }
        return results
    }

    /// The app ended: its remediations are dropped unanswered, and returned for the audit.
    public mutating func appEnded(_ app: String) -> [Remediation] {
        lanes.removeValue(forKey: app.lowercased()) ?? []
    }
}

/// The answer to a remediation request; the result itself comes later, from `advance`.
public struct RemediationRequestDecision: Sendable, Hashable, CustomStringConvertible {
    public enum Outcome: String, Sendable, Hashable, CaseIterable {
        case started, queued
        /// A repeat for an account already running or waiting [headers: IntuneMAMComplianceManager.h].
        case dropped
        /// No account, or the app's queue is full.
        case refused
    }

    public var outcome: Outcome
    public var app: String
    public var account: Account
    public var silent: Bool
    /// 0 running, 1… waiting; for `dropped`, where the earlier request stands.
    public var position: Int?
    public var reason: ConditionalAccessReason
    public var detail: String

    public var description: String { "\(outcome.rawValue) (\(reason.id) [\(reason.tag.rawValue)]): \(detail)" }
}

/// What `remediationInProgressForAccountId:` looks at.
public enum RemediationProgress: Sendable, Hashable {
    case none
    case running(since: Duration)
    case queued(position: Int)

    public var isInProgress: Bool { self != .none }
}

/// A finished remediation: what the compliance delegate tells the app.
public struct RemediationResult: Sendable, Hashable, CustomStringConvertible {
    public var remediation: ComplianceManager.Remediation
    public var finishedAt: Duration
    public var outcome: RemediationOutcome

    public var app: String { remediation.app }
    public var account: Account { remediation.account }
    /// The account id as the app passed it (the delegate's first argument).
    public var accountId: String { remediation.accountId }
    public var status: ComplianceStatus { outcome.status }

    public var description: String {
        "\(app) \(accountId): \(outcome.status) (\(outcome.reason.id) [\(outcome.reason.tag.rawValue)]): \(outcome.detail)"
    }
}
