import Foundation
import MAMPolicy
import MAMService
import MAMWire

// Conditional launch (docs/SEMANTICS.md §9), live: the broker holds the device, and checks an
// SDK app's managed account against its policy's launch requirements when the app starts under
// it, when the app shows it (`setIdentity`), when the device changes (`mamlaunch device set`),
// when the tenant is reloaded, and while the device is offline, as the broker's clock moves.
// What each check decides happens to the data: a warning is told, a block closes the account's
// data in that app (its requests are refused, its key withheld) until a check passes, and a wipe
// is the selective wipe `mamlaunch wipe` issues (the app removes the account's files; its key
// goes once no app holds the account).

/// What the latest launch check of an account on a connection decided.
struct LaunchState: Sendable, Equatable {
    var action: LaunchAction?
    var rule: Rule
}

/// What the broker tells and audits of a changed verdict.
enum LaunchTold {
    case passed, warned, blocked, wiped

    /// `conditionalLaunch`'s action byte; nil for a wipe, which travels as `wipeRequest`.
    var wireAction: UInt8? {
        switch self {
        case .passed: return 0
        case .warned: return 1
        case .blocked: return 2
        case .wiped: return nil
        }
    }

    /// The audit's outcome on channel `launch`.
    var outcome: String { self == .passed ? "allowed" : "\(self)" }
}

extension BrokerCore {
    /// The SDK release MAMKit mirrors: an SDK app's release for the SDK minimums (seed 004:
    /// `minimumRequiredSdkVersion` and its warning and wipe forms).
    static let sdkRelease = Version("21.7.1")!

    /// The broker's wall-clock time: the time it started, moved on by its clock (the real one,
    /// or a virtual one `mamlaunch clock advance` moves). Offline periods are measured on it.
    public var wallNow: Date { epoch.addingTimeInterval(clock.now().timeInterval) }

    /// Runs the launch checks of the account session `id` shows, and of every account a check
    /// blocked in it (switching away from a blocked account does not open it), and acts on each
    /// changed verdict.
    mutating func checkLaunch(_ id: SessionID, _ out: inout [BrokerEffect]) {
        guard let s = sessions[id], s.manifest.integratesSDK else { return }
        var accounts: [Account] = []
        if let shown = party(id).dataAccount { accounts.append(shown) }
        for name in s.blockedAccounts.sorted() {
            if let a = engine.tenant.identity(named: name).account, !accounts.contains(a) { accounts.append(a) }
        }
        for account in accounts { checkLaunch(id, account, &out) }
    }

    private mutating func checkLaunch(_ id: SessionID, _ account: Account, _ out: inout [BrokerEffect]) {
        guard let s = sessions[id] else { return }
        let name = Self.canonicalName(account)
        let verdict = engine.launchCheck(app: s.bundleID, account: account, device: device, sdkVersion: Self.sdkRelease, now: wallNow)
        let state = LaunchState(action: verdict.action, rule: verdict.rule)
        let previous = s.launches[name]
        guard state != previous else { return }
        sessions[id]!.launches[name] = state
        let wasBlocked = s.blockedAccounts.contains(name)
        switch verdict.action {
        case nil:
            // Blocked or warned about before: the app is told the account's data is open again.
            if wasBlocked || previous?.action == .warn { tellLaunch(id, account: name, .passed, verdict, &out) }
            unblock(id, name)
        case .warn?:
            unblock(id, name)
            tellLaunch(id, account: name, .warned, verdict, &out)
        case .block?:
            sessions[id]!.blockedAccounts.insert(name)
            launchBlocked.insert(id)
            tellLaunch(id, account: name, .blocked, verdict, &out)
        case .wipe?:
            unblock(id, name)
            tellLaunch(id, account: name, .wiped, verdict, &out)
            // The account's data leaves this app now, as an admin's selective wipe would take it.
            service.issueWipe(account: name, app: s.bundleID)
            tell(service.deliverWipes(app: s.bundleID, engine: engine, now: clock.now()), requester: nil, &out)
            out.append(persistEnrollments)
            // Signed out by the wipe: checked afresh if it is ever signed in again.
            sessions[id]?.launches[name] = nil
        }
    }

    private mutating func unblock(_ id: SessionID, _ name: String) {
        sessions[id]!.blockedAccounts.remove(name)
        if sessions[id]!.blockedAccounts.isEmpty { launchBlocked.remove(id) }
    }

    /// Checks every running SDK app again (the device, the tenant or the time changed).
    mutating func checkLaunches(_ out: inout [BrokerEffect]) {
        for id in sessions.keys.sorted() { checkLaunch(id, &out) }
    }

    /// On the clock's tick: an offline device's time away grows, and a grace period may end.
    mutating func launchTick(_ out: inout [BrokerEffect]) {
        guard device.offlineSince != nil else { return }
        checkLaunches(&out)
    }

    /// The refusal of a request that would move a blocked account's data: one made while the
    /// app shows it, or one naming it (its key, its configuration, a token for it). The app's
    /// other identities are not blocked.
    mutating func launchRefusal(_ id: SessionID, _ message: Message) -> WireError? {
        guard !launchBlocked.isEmpty, launchBlocked.contains(id), let s = sessions[id] else { return nil }
        let named: String?
        switch message {
        case .hello, .setIdentity, .setViewIdentities, .policyRequest, .enroll, .loginAndEnroll, .unenroll, .restartReply,
             .allowedAccountsRequest, .remediationInProgress, .bye:
            return nil
        case let .keyRequest(account), let .appConfigRequest(account), let .acquireToken(account), let .remediateCompliance(account, _):
            named = engine.tenant.identity(named: account).account.map { Self.canonicalName($0) } ?? account
        default:
            named = party(id).dataAccount.map { Self.canonicalName($0) }
        }
        guard let named, s.blockedAccounts.contains(named), let rule = s.launches[named]?.rule else { return nil }
        return WireError(.notAllowed, "\(named)'s data is closed in \(s.bundleID) by a launch check (rule \(rule.id) \(rule.rawValue)); "
                         + "it opens when the check passes")
    }

    private mutating func tellLaunch(_ id: SessionID, account: String, _ told: LaunchTold, _ verdict: LaunchVerdict, _ out: inout [BrokerEffect]) {
        let passed = told == .passed
        let rule = passed ? Rule.launchAllowed : verdict.rule
        let detail = verdict.findings.map(\.detail).joined(separator: "; ")
        out.append(.audit(AuditEntry(session: id, request: 0, channel: "launch", source: auditParty(id), target: nil, dataType: nil, size: nil,
                                     outcome: told.outcome, rule: rule.id, tag: rule.tag.rawValue,
                                     detail: "\(account): " + (detail.isEmpty ? rule.summary : detail), revision: revision,
                                     ruleName: rule.rawValue, decidedAt: passed ? nil : verdict.site.description)))
        // A wipe reaches the app as the wipe request itself; a client of an older version learns
        // of a block from its refused requests.
        guard let action = told.wireAction, sessions[id]!.conversation.version >= 3 else { return }
        out.append(.send(id, Frame(id: brokerFrameID(), .conditionalLaunch(account: account, action: action, rule: rule.rawValue,
                                                                      message: passed ? "" : rule.message, detail: Self.fitting(detail)))))
    }

    /// `mamlaunch device set`: the profile with `change` applied (DeviceChange), and every
    /// running app checked again on it. A change with a problem changes nothing.
    public mutating func changeDevice(_ change: String) -> (ok: Bool, detail: String, effects: [BrokerEffect]) {
        switch DeviceChange.apply(change, to: device, now: wallNow) {
        case let .failure(problems):
            return (false, "device unchanged: \(problems)", [])
        case let .success(profile):
            var out: [BrokerEffect] = []
            let changed = profile != device
            device = profile
            if changed { checkLaunches(&out) }
            let acted = out.compactMap { effect -> String? in
                guard case let .audit(e) = effect, e.channel == "launch" else { return nil }
                return "\(e.source.app) \(e.outcome) (\(e.ruleName ?? e.rule))"
            }
            let now = wallNow
            let offline = profile.offlineSince == nil ? "" : "; offline \(PolicyEngine.duration(profile.minutesOffline(at: now)))"
            let summary = "device: \(profile.summary)\(offline)" + (acted.isEmpty ? "" : "; launch checks: " + acted.joined(separator: ", "))
            return (true, summary, out)
        }
    }
}
