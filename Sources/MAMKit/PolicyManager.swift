import MAMPolicy
import MAMWire

/// `IntuneMAMPolicyManager`: identities and policy lookup.
///
/// Identities are written as the SDK takes them: an account's UPN or object id, `""` for
/// personal, nil for "not set".
public struct PolicyManager: Sendable {
    let kit: Kit

    // MARK: Delegate

    public func setDelegate(_ delegate: (any PolicyDelegate)?) { kit.state.withLock { $0.policyDelegate = delegate } }

    // MARK: UI identity

    /// `setUIPolicyAccountId(_:completionHandler:)`: switches the identity on screen, and runs
    /// conditional launch for a managed one. The broker decides whether the app may act under
    /// the account; the result says what happened (the decision is the broker's, when it gave one).
    public func setUIIdentity(_ account: String?) async -> (result: SwitchIdentityResult, decision: SharingDecision?) {
        // A scoped identity that differs must be cleared first [doc].
        if let scoped = IdentityScope.account, let account, kit.resolve(scoped) != kit.resolve(account) {
            return (.notAllowed, nil)
        }
        guard let account else {
            // The key window's identity, when the app names windows (SDK-API §3).
            kit.state.withLock { s in
                s.ui = nil
                s.uiView = nil
                if let key = s.keyWindow {
                    s.windows[key] = .some(nil)
                    s.views[key] = nil
                }
            }
            kit.screen.save(nil)
            kit.logger.info("UI identity cleared")
            return await brokerLeavesTheUIIdentity()
        }
        let wanted = kit.resolve(account)
        await kit.lane.acquire()
        let outcome = await switchUI(to: wanted, named: account)
        await kit.lane.release()
        return outcome
    }

    /// nil is "unset", not "no user" (SDK-API §2): UI work falls back to the process identity.
    /// The broker, which acts for the app, is told so at once (it decides what comes in, too,
    /// and an action with no identity set would leave it alone): the process identity, or with
    /// none (a multi-identity app's launch state) the personal one, as at launch
    /// (`MAMApp.start`). It kept the identity the UI left, a managed account's included.
    private func brokerLeavesTheUIIdentity() async -> (result: SwitchIdentityResult, decision: SharingDecision?) {
        guard kit.state.current.integratesSDK else { return (.success, nil) }
        await kit.lane.acquire()
        let outcome = await brokerFallsBack()
        await kit.lane.release()
        return outcome
    }

    private func brokerFallsBack() async -> (result: SwitchIdentityResult, decision: SharingDecision?) {
        let fallback = kit.state.current.process ?? .personal
        if kit.brokerShown == .one(fallback) { return (.success, nil) }
        do {
            var decision = try await kit.setBrokerIdentity(fallback)
            // A process identity the broker refuses: still not the account the UI left.
            if !decision.allowed, fallback != .personal { decision = try await kit.setBrokerIdentity(.personal) }
            return (decision.allowed ? .success : .failed, decision)
        } catch {
            kit.logger.warning("identity switch failed", metadata: ["error": "\(error)"])
            return (.failed, nil)
        }
    }

    /// The switch itself, on the kit's lane: the broker's decision, then conditional launch.
    /// `show`: the identity goes on screen (the key window); otherwise the broker's identity is
    /// put back once the checks are done, and the caller keeps the identity for its window.
    private func switchUI(to wanted: Identity, named account: String, show: Bool = true) async -> (result: SwitchIdentityResult, decision: SharingDecision?) {
        // What the broker had before (one identity or a view): restored when the user cancels.
        let previous = kit.brokerShown
        let decision: SharingDecision
        do {
            decision = try await kit.setBrokerIdentity(wanted)
        } catch {
            kit.logger.warning("identity switch failed", metadata: ["error": "\(error)"])
            return (.failed, nil)
        }
        guard decision.allowed else { return (.notAllowed, decision) }
        // Conditional launch: what the identity's policy requires before it shows.
        let policy = kit.policy(for: wanted)
        if policy.isManaged, policy.isPINRequired || policy.accessRecheckMinutes > 0 {
            let delegate = kit.state.current.policyDelegate
            let passed = await delegate?.conditionalLaunch(for: account, requirements: ConditionalLaunchRequirements(
                pin: policy.isPINRequired, recheckMinutes: policy.accessRecheckMinutes)) ?? true
            if !passed {
                // Back to what was on screen; the broker with it.
                await kit.restoreBroker(previous)
                return (.cancelled, decision)
            }
        }
        guard show else {
            if let previous, previous != .one(wanted) { await kit.restoreBroker(previous) }
            return (.success, decision)
        }
        kit.state.withLock { s in
            s.ui = wanted
            s.uiView = nil
            if let key = s.keyWindow {
                s.windows[key] = .some(wanted)
                s.views[key] = nil
            }
        }
        kit.screen.save(account)
        kit.logger.info("UI identity switched", metadata: ["identity": "\(wanted)", "managed": "\(policy.isManaged)"])
        return (.success, decision)
    }

    // MARK: Windows and scenes

    /// `setUIPolicyAccountId(_:forWindow:completionHandler:)`: the identity of one window or
    /// scene (SDK-API §2: the UI identity is per window). The broker decides and conditional
    /// launch runs as for the app's UI identity. The first window named becomes the key window;
    /// the key window's identity is the app's UI identity, which UI work (copy, paste, share,
    /// open URL) acts under. Another window keeps its identity until it becomes key (`makeKey`).
    public func setUIIdentity(_ account: String?, for window: UIWindowID) async -> (result: SwitchIdentityResult, decision: SharingDecision?) {
        let isKey = kit.state.withLock { s -> Bool in
            if s.keyWindow == nil { s.keyWindow = window }
            return s.keyWindow == window
        }
        if isKey { return await setUIIdentity(account) }
        if let scoped = IdentityScope.account, let account, kit.resolve(scoped) != kit.resolve(account) { return (.notAllowed, nil) }
        guard let account else {
            kit.state.withLock { s in
                s.windows[window] = .some(nil)
                s.views[window] = nil
            }
            return (.success, nil)
        }
        let wanted = kit.resolve(account)
        await kit.lane.acquire()
        let outcome = await switchUI(to: wanted, named: account, show: false)
        await kit.lane.release()
        if outcome.result == .success {
            kit.state.withLock { s in
                s.windows[window] = .some(wanted)
                s.views[window] = nil
            }
        }
        return outcome
    }

    // MARK: Views of several accounts

    /// `setUIPolicyAccountIds(_:forWindow:completionHandler:)`: the window shows several
    /// accounts' data at once (a unified inbox). The broker decides (only a multi-identity app,
    /// only accounts it has signed in); then conditional launch runs for each managed account
    /// [doc: headers], and a user who cancels one leaves the window as it was (`.cancelled`).
    /// With one of the accounts managed, the window is under the lock-down policy, not a merge
    /// (`policy(for:)`), and UI work in it acts for the whole view: org data leaves it for no
    /// app (docs/SEMANTICS.md §1.view). nil, an empty list or one
    /// account is the one-identity form (`""` for nil and empty: no user).
    public func setUIIdentities(_ accounts: [String]?, for window: UIWindowID) async -> (result: SwitchIdentityResult, decision: SharingDecision?) {
        let names = accounts ?? []
        let wanted = Party.distinct(names.map { kit.resolve($0) })
        guard wanted.count > 1 else {
            return await setUIIdentity(wanted.first.map(Kit.wire) ?? "", for: window)
        }
        // A scoped identity is one account; the view is several, so it always differs [doc].
        if IdentityScope.account != nil { return (.notAllowed, nil) }
        let isKey = kit.state.withLock { s -> Bool in
            if s.keyWindow == nil { s.keyWindow = window }
            return s.keyWindow == window
        }
        await kit.lane.acquire()
        let outcome = await switchView(to: wanted, for: window, isKey: isKey)
        await kit.lane.release()
        return outcome
    }

    /// The view switch itself, on the kit's lane: the broker's decision, then conditional launch.
    private func switchView(to wanted: [Identity], for window: UIWindowID, isKey: Bool) async -> (result: SwitchIdentityResult, decision: SharingDecision?) {
        let previous = kit.brokerShown
        let decision: SharingDecision
        do {
            decision = try await kit.setBrokerView(wanted)
        } catch {
            kit.logger.warning("view switch failed", metadata: ["error": "\(error)"])
            return (.failed, nil)
        }
        guard decision.allowed else { return (.notAllowed, decision) }
        // Conditional launch for each managed account the view shows.
        let delegate = kit.state.current.policyDelegate
        for identity in wanted {
            let policy = kit.policy(for: identity)
            guard policy.isManaged, policy.isPINRequired || policy.accessRecheckMinutes > 0 else { continue }
            let passed = await delegate?.conditionalLaunch(for: Kit.wire(identity), requirements: ConditionalLaunchRequirements(
                pin: policy.isPINRequired, recheckMinutes: policy.accessRecheckMinutes)) ?? true
            if !passed {
                await kit.restoreBroker(previous)
                return (.cancelled, decision)
            }
        }
        if !isKey, previous != .view(wanted) { await kit.restoreBroker(previous) }
        kit.state.withLock { s in
            s.views[window] = wanted
            s.windows[window] = .some(nil)
            if isKey {
                s.uiView = wanted
                s.ui = nil
            }
        }
        kit.logger.info("UI view switched", metadata: ["window": "\(window)", "identities": "\(wanted)",
                                                        "managed": "\(kit.policy(showing: wanted).isManaged)"])
        return (.success, decision)
    }

    /// `setUIPolicyAccountIds(_:completionHandler:)`: the key window's accounts.
    public func setUIIdentities(_ accounts: [String]?) async -> (result: SwitchIdentityResult, decision: SharingDecision?) {
        let key = kit.state.withLock { s -> UIWindowID in
            if s.keyWindow == nil { s.keyWindow = UIWindowID("main") }
            return s.keyWindow!
        }
        return await setUIIdentities(accounts, for: key)
    }

    /// `getUIPolicyAccountIdsForWindow(_:)`: the accounts the window shows (one for a window
    /// of one identity); nil when none is set.
    public func uiIdentities(for window: UIWindowID) -> [String]? {
        let (view, one) = kit.state.withLock { ($0.views[window], $0.windows[window] ?? nil) }
        if let view { return view.map(Kit.wire) }
        return one.map { [Kit.wire($0)] }
    }

    /// The window comes to the front: its identity becomes the UI identity (the broker's with
    /// it). A window never named has no identity.
    public func makeKey(_ window: UIWindowID) async -> SwitchIdentityResult {
        let (identity, view) = kit.state.withLock { s -> (Identity?, [Identity]?) in
            s.keyWindow = window
            return (s.windows[window] ?? nil, s.views[window])
        }
        if let view {
            await kit.lane.acquire()
            let allowed = (try? await kit.setBrokerView(view))?.allowed == true
            await kit.lane.release()
            guard allowed else { return .failed }
            kit.state.withLock { s in
                s.uiView = view
                s.ui = nil
            }
            return .success
        }
        guard let identity else {
            kit.state.withLock { s in
                s.ui = nil
                s.uiView = nil
            }
            kit.screen.save(nil)
            return await brokerLeavesTheUIIdentity().result
        }
        await kit.lane.acquire()
        let allowed = (try? await kit.setBrokerIdentity(identity))?.allowed == true
        await kit.lane.release()
        guard allowed else { return .failed }
        kit.state.withLock { s in
            s.ui = identity
            s.uiView = nil
        }
        kit.screen.save(Kit.wire(identity))
        return .success
    }

    /// `getUIPolicyAccountIdForWindow(_:)`: nil when none is set, or when the window shows
    /// several accounts (`uiIdentities(for:)`).
    public func uiIdentity(for window: UIWindowID) -> String? {
        kit.state.withLock { $0.windows[window] ?? nil }.map(Kit.wire)
    }

    /// `policyForWindow(_:)`: the policy of the window's identity, or of the accounts it shows
    /// together (the lock-down policy when one of them is managed).
    public func policy(for window: UIWindowID) -> AppPolicy {
        let (view, one) = kit.state.withLock { ($0.views[window], $0.windows[window] ?? nil) }
        if let view { return kit.policy(showing: view) }
        return kit.policy(for: one)
    }

    /// The key window (nil before the app names one).
    public var keyWindow: UIWindowID? { kit.state.current.keyWindow }

    // MARK: Pause and resume

    /// The app went to the background. Its UI identity stays: a paused app is the same app on
    /// the same screen (seed 002 §Exit criteria, "Managed pause" and "Unmanaged pause").
    public func pause() {
        kit.state.withLock { $0.paused = true }
        kit.logger.info("paused", metadata: ["identity": "\(kit.state.current.ui.map { "\($0)" } ?? "none")"])
    }

    /// The app came back to the foreground: the identity it showed is on screen again, its
    /// policy still applied, or still not (seed 002, the pause rows). A managed identity whose
    /// policy asks for a PIN or an access recheck runs conditional launch again. A user who
    /// cancels it is the delegate's to handle (`identitySwitchRequired`, reason
    /// `.cancelConditionalLaunch`: the SDK asks it when the PIN or sign-in is cancelled on
    /// resume): answered `.success`, the app leaves the account and shows no identity
    /// (`.cancelled`); answered otherwise the account stays locked behind its checks and the
    /// app must not show it (`.failed`, the identity kept so that the next resume asks again).
    /// Not paused: nothing to do, `.success`.
    @discardableResult
    public func resume() async -> SwitchIdentityResult {
        let (wasPaused, shown) = kit.state.withLock { s -> (Bool, Identity?) in
            defer { s.paused = false }
            return (s.paused, s.ui)
        }
        guard wasPaused, let shown, case .account = shown else { return .success }
        let policy = kit.policy(for: shown)
        guard policy.isManaged, policy.isPINRequired || policy.accessRecheckMinutes > 0 else { return .success }
        let account = Kit.wire(shown)
        let delegate = kit.state.current.policyDelegate
        let passed = await delegate?.conditionalLaunch(for: account, requirements: ConditionalLaunchRequirements(
            pin: policy.isPINRequired, recheckMinutes: policy.accessRecheckMinutes)) ?? true
        if passed { return .success }
        let answer = await delegate?.identitySwitchRequired(for: account, reason: .cancelConditionalLaunch) ?? .failed
        kit.logger.notice("conditional launch cancelled on resume", metadata: ["account": "\(account)", "delegate": "\(answer.name)"])
        guard answer == .success else { return .failed }
        _ = await setUIIdentity(nil)
        return .cancelled
    }

    /// `getUIPolicyAccountId`: nil when none is set.
    public var uiIdentity: String? { kit.state.current.ui.map(Kit.wire) }

    // MARK: Process identity

    /// `setProcessAccountId`: the identity background work falls back to.
    public func setProcessIdentity(_ account: String?) {
        let identity = account.map { kit.resolve($0) }
        kit.state.withLock { $0.process = identity }
    }

    public var processIdentity: String? { kit.state.current.process.map(Kit.wire) }

    // MARK: Scoped identity and the current activity

    /// The scoped identity (`getCurrentThreadAccountId`).
    public var scopedIdentity: String? { IdentityScope.scopedAccount }

    /// `getAccountIdForCurrentActivity`: inside a URL handler, the sender's account.
    public var accountForCurrentActivity: String? { IdentityScope.activitySender }

    /// The identity actions take now: scoped, else UI (the one a key window's view of several
    /// accounts acts under), else process; nil when none is set.
    public var effectiveIdentity: Identity? {
        if IdentityScope.account == nil, let view = kit.state.current.uiView { return kit.policy(showing: view).identity }
        return kit.effectiveIdentity(forUIWork: true)
    }

    // MARK: Management

    /// `isManagementEnabled`: a policy applies to (or is required by) this app.
    public var isManagementEnabled: Bool {
        guard let s = kit.snapshot else { return false }
        return s.enrolled != nil && s.policy != nil
    }

    /// `isAccountIdManaged(_:)`.
    public func isManaged(_ account: String?) -> Bool {
        guard let account, !account.isEmpty else { return false }
        return kit.policy(for: kit.resolve(account)).isManaged
    }

    /// `isIdentity(_:equalTo:)`: case-insensitively, and a tenant user's UPN equals its object id.
    public func isIdentity(_ a: String?, equalTo b: String?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case let (x?, y?): return kit.resolve(x) == kit.resolve(y)
        default: return false
        }
    }

    // MARK: Policy

    /// `policy`: for the effective identity (the scoped one inside a scope), or the key
    /// window's view of several accounts.
    public var policy: AppPolicy {
        if IdentityScope.account == nil, let view = kit.state.current.uiView { return kit.policy(showing: view) }
        return kit.policy(for: kit.effectiveIdentity(forUIWork: true))
    }

    /// `policy(forAccountId:)`.
    public func policy(for account: String?) -> AppPolicy {
        guard let account else { return kit.policy(for: nil) }
        return kit.policy(forName: account)
    }

    /// `policy(forAccountIds:)`: several accounts with at least one managed give the
    /// lock-down policy.
    public func policy(forAccounts accounts: [String]) -> AppPolicy {
        kit.policy(showing: accounts.map { kit.resolve($0) })
    }

    /// `primaryAccountId`: the enrolled account of a single-identity app.
    public var primaryAccount: String? {
        guard let s = kit.snapshot, !s.app.isMultiIdentity else { return nil }
        return s.enrolled.map { $0.upn ?? $0.name }
    }

    /// `managedAccountIds`.
    public var managedAccounts: [String] {
        guard let s = kit.snapshot, let e = s.enrolled, s.policy != nil else { return [] }
        return [e.upn ?? e.name]
    }

    /// `blockedAccountIds`: accounts a launch check of their policy blocked on this device (an
    /// OS or SDK too old, a jailbroken device, a threat level, too long offline). The app hides
    /// them; the broker refuses their data until a check passes.
    public var blockedAccounts: [String] { kit.state.current.blocked.keys.sorted() }

    /// `blockedReasonForAccountId:`: why an account is blocked, `.notBlocked` when it is not.
    public func blockedReason(for account: String) -> BlockAccountReason {
        kit.state.current.blocked[account.lowercased()]?.reason ?? .notBlocked
    }

    /// The last launch check the broker told of for an account (nil: none failed since launch).
    public func launchCheck(for account: String) -> LaunchCheckNotice? {
        kit.state.current.launchChecks[account.lowercased()]
    }

    /// The accounts the app has signed in, as the broker knows them.
    public var signedInAccounts: [String] { (kit.snapshot?.signedIn ?? []).map { $0.upn ?? $0.name } }

    /// Asks the broker for the policy again (the kit does after every service notice); returns
    /// the broker's tenant revision the new snapshot was made for (nil: an app without the SDK).
    @discardableResult
    public func refresh() async throws -> Int? { try await kit.refreshPolicy()?.revision }
}
