import Foundation
import Glibc
import MAMBrokerCore
import MAMWire

/// The broker's audit folder (`DIR/audit`, root's alone: 0700, each file 0600): ordinary
/// decisions in `audit.jsonl`, security events in `security.jsonl`, each rotated on its own, so
/// no flood of ordinary decisions can push a key theft or an identity refusal out of the kept
/// logs (docs/PROTOCOL.md, "The audit log"). Each is also aged on its own: security events are
/// kept longer than ordinary decisions.
public final class AuditTrail: @unchecked Sendable {
    public let folder: String
    let decisions: AuditLog
    let security: AuditLog
    /// Each app's share of the kept decision logs: one log's worth, a ninth of what is kept.
    private var shares: AuditShares
    /// The logs of apps past their share, by app (AuditShares).
    private var overflow: [String: AuditLog] = [:]
    private let maximumBytes: Int
    private let maximumAge: Duration?
    private let now: @Sendable () -> timespec

    public init(folder: String, maximumBytes: Int, maximumAge: Duration? = nil, securityMaximumAge: Duration? = nil,
                now: @escaping @Sendable () -> timespec = AuditLog.realTime) throws {
        self.folder = folder
        self.maximumBytes = maximumBytes
        self.maximumAge = maximumAge
        self.now = now
        shares = AuditShares(share: maximumBytes)
        // One made by an older broker, or by hand: the folder is root's alone whatever it was,
        // and one of another user's is refused (TrustedPath).
        let made = try TrustedPath.folder(folder, mode: 0o700)
        fchmod(made.rawValue, 0o700)
        made.close()
        decisions = try AuditLog(path: folder + "/" + AuditFile.decisions, maximumBytes: maximumBytes, maximumAge: maximumAge, now: now)
        security = try AuditLog(path: folder + "/" + AuditFile.security, maximumBytes: maximumBytes, maximumAge: securityMaximumAge, now: now)
    }

    /// Sets aside a log whose first record has aged (each second, from the loop).
    /// Security records one app may have written one by one in a minute (Broker.withinSecurityBudget).
    public static let securityBudget = 120

    public func expire() {
        decisions.expire()
        security.expire()
        for log in overflow.values { log.expire() }
    }

    public func append(_ entry: AuditEntry, id: UInt64) {
        append(entry, id: id, security: Self.isSecurityEvent(entry))
    }

    /// `security`: `isSecurityEvent(entry)`, when the caller has asked already (once per decision).
    /// `requester`: the app whose request it decided, as its request budget names it; an
    /// ordinary decision counts against that app's share.
    func append(_ entry: AuditEntry, id: UInt64, security isSecurity: Bool, requester: String? = nil) {
        if isSecurity {
            security.append(entry, id: id)
            return
        }
        guard let requester else {
            noteRotations { decisions.append(entry, id: id) }
            return
        }
        let app = AuditShares.key(forBudget: requester)
        if shares.isOverShare(app), let own = overflowLog(app) {
            own.append(entry, id: id)
            return
        }
        let bytes = noteRotations { decisions.append(entry, id: id) }
        shares.add(app, bytes: bytes)
    }

    /// Runs an append to the decision log, telling the shares of any rotation it made.
    @discardableResult
    private func noteRotations(_ append: () -> Int) -> Int {
        let before = decisions.rotations
        let bytes = append()
        if decisions.rotations != before { shares.rotated(times: decisions.rotations - before) }
        return bytes
    }

    /// The log an app's decisions go to past its share: `apps/<app>.jsonl`, an eighth of the
    /// decision log's size a file; nil when it cannot be made (the record then goes to the
    /// shared log: a record is never dropped for want of a file).
    private func overflowLog(_ app: String) -> AuditLog? {
        if let log = overflow[app] { return log }
        // A bundle id is letters, digits, '-' and '.' (checked at hand-over); anything else is
        // spelled out in hex so that no name can leave the folder.
        let safe = app.utf8.allSatisfy { $0 == 0x2D || $0 == 0x2E || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
            && !app.hasPrefix(".") ? app : app.utf8.map { String($0, radix: 16) }.joined()
        do {
            try TrustedPath.folder(folder + "/" + Self.appsFolder, mode: 0o700).close()
            let log = try AuditLog(path: folder + "/" + Self.appsFolder + "/" + safe + ".jsonl", maximumBytes: max(4096, maximumBytes / 8),
                                   maximumAge: maximumAge, now: now)
            overflow[app] = log
            return log
        } catch {
            AuditLog.warn("mambroker: \(app)'s own audit log cannot be made (\(error)); its records stay in the shared log\n")
            return nil
        }
    }

    /// Where the logs of apps past their share are kept, inside the audit folder.
    public static let appsFolder = AuditFile.appsFolder

    /// What an attacker would want gone: a refused key, a refused identity or sign-in (an app
    /// acting for an account it was not given), a sandbox violation.
    static func isSecurityEvent(_ e: AuditEntry) -> Bool {
        switch e.channel {
        case "key", "identity", "signIn": return e.outcome != "allowed" && e.outcome != "signedIn"
        case "sandbox", "rate", "security": return true
        default: return e.outcome == "notSignedIn"
        }
    }
}

extension Broker {
    static let overBudget = "too many requests this second: refused unread, and counted in the audit"

    /// One record per app that was refused since the last: channel `rate`, the count in `size`.
    func auditRefusals() {
        var live = Set<ObjectIdentifier>()
        for b in budgets.values { live.insert(ObjectIdentifier(b)) }
        for (app, budget) in appBudgets {
            let n = budget.takeRefused()
            if n > 0 {
                audit.append(AuditEntry(session: SessionID(0), request: 0, channel: "rate", source: .init(app: app, identity: "", managed: false),
                                        target: nil, dataType: nil, size: n, outcome: "refused", rule: "limit.requests", tag: "chosen",
                                        detail: "\(configuration.requestsPerSecond) requests a second", revision: core.revision),
                             id: (try? store.nextDecisionID()) ?? 0)
            }
            // An app with no connection left starts afresh when it comes back.
            if !live.contains(ObjectIdentifier(budget)) { appBudgets[app] = nil }
        }
    }

    /// An app's own security records (its refused keys, identities, requests for accounts not
    /// signed in) are written one by one up to `AuditTrail.securityBudget` a minute; past that
    /// they are counted, and the count audited when the minute ends (channel `security`, outcome
    /// `suppressed`, the count in `size`). Otherwise one app asking for another's key at its
    /// request budget rotated every other app's security events out of the kept logs within
    /// minutes.
    func withinSecurityBudget(_ entry: AuditEntry, security: Bool? = nil) -> Bool {
        guard security ?? AuditTrail.isSecurityEvent(entry), entry.channel != "sandbox", entry.channel != "rate", entry.channel != "security" else { return true }
        // Every process that connected by itself is one app here too (AuditShares.key): each is
        // `unknown.pid<N>`, and a local user can start as many as they like.
        let app = AuditShares.key(forBudget: entry.source.app), minute = Self.minute()
        var b = securityRecords[app] ?? SecurityBudget(minute: minute)
        if b.minute != minute {
            // Here the core's effects are being carried out, and the interpreter holds `core`:
            // reading it (its revision) would be an exclusivity violation, which ended the broker.
            auditSecurityOverflow(endingBefore: minute, revision: entry.revision)
            b = securityRecords[app] ?? SecurityBudget(minute: minute)
        }
        defer { securityRecords[app] = b }
        if b.written < AuditTrail.securityBudget { b.written += 1; return true }
        b.suppressed += 1
        return false
    }

    /// Audits the counts of the minutes before `minute` and forgets them; the records say the
    /// policy `revision` (the caller's: the core may be in use).
    func auditSecurityOverflow(endingBefore minute: Int, revision: Int) {
        for (app, b) in securityRecords where b.minute < minute {
            securityRecords[app] = nil
            guard b.suppressed > 0 else { continue }
            audit.append(AuditEntry(session: SessionID(0), request: 0, channel: "security", source: .init(app: app, identity: "", managed: false),
                                    target: nil, dataType: nil, size: b.suppressed, outcome: "suppressed", rule: "limit.security", tag: "chosen",
                                    detail: "security events past \(AuditTrail.securityBudget) a minute from this app, counted only", revision: revision),
                         id: (try? store.nextDecisionID()) ?? 0)
        }
    }

    static func minute() -> Int { Int(MonotonicClock().now().components.seconds / 60) }

    /// A sandbox violation is a security event: audited at an app's first ten and then at every
    /// tenfold count (the count in `size`), so a looping app cannot fill the security log.
    func auditViolation(_ v: SandboxViolation) {
        let n = (violations[v.bundleID] ?? 0) + 1
        violations[v.bundleID] = n
        guard n <= 10 || BrokerCore.isPowerOfTen(n) else { return }
        audit.append(AuditEntry(session: SessionID(0), request: 0, channel: "sandbox", source: .init(app: v.bundleID, identity: "", managed: false),
                                target: nil, dataType: nil, size: n, outcome: v.action == .killed ? "killed" : "denied", rule: "sandbox",
                                tag: "chosen", detail: v.detail.map { "\(v.syscall): \($0)" } ?? v.syscall, revision: core.revision),
                     id: (try? store.nextDecisionID()) ?? 0)
    }
}

/// One app's security records in one minute.
struct SecurityBudget {
    var minute: Int
    var written = 0
    var suppressed = 0
}
