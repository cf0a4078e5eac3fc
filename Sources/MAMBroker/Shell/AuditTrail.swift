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

    public init(folder: String, maximumBytes: Int, maximumAge: Duration? = nil, securityMaximumAge: Duration? = nil,
                now: @escaping @Sendable () -> timespec = AuditLog.realTime) throws {
        self.folder = folder
        if mkdir(folder, 0o700) != 0 && errno != EEXIST {
            throw BrokerError("cannot make the audit folder \(folder): \(String(cString: strerror(errno)))")
        }
        var st = stat()
        guard lstat(folder, &st) == 0, st.st_mode & S_IFMT == S_IFDIR else { throw BrokerError("the audit folder \(folder) is not a folder") }
        // One made by an older broker, or by hand: the folder is root's alone whatever it was.
        chmod(folder, 0o700)
        decisions = try AuditLog(path: folder + "/" + AuditFile.decisions, maximumBytes: maximumBytes, maximumAge: maximumAge, now: now)
        security = try AuditLog(path: folder + "/" + AuditFile.security, maximumBytes: maximumBytes, maximumAge: securityMaximumAge, now: now)
    }

    /// Sets aside a log whose first record has aged (each second, from the loop).
    public func expire() {
        decisions.expire()
        security.expire()
    }

    public func append(_ entry: AuditEntry, id: UInt64) {
        (Self.isSecurityEvent(entry) ? security : decisions).append(entry, id: id)
    }

    /// What an attacker would want gone: a refused key, a refused identity or sign-in (an app
    /// acting for an account it was not given), a sandbox violation.
    static func isSecurityEvent(_ e: AuditEntry) -> Bool {
        switch e.channel {
        case "key", "identity", "signIn": return e.outcome != "allowed" && e.outcome != "signedIn"
        case "sandbox", "rate": return true
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
