import MAMPolicy
import MAMService
import MAMWire

// App Protection conditional access (seed 003) through the broker: the token endpoint, and
// compliance remediation that finishes on the broker's clock and, when compliant, enrolls.
extension BrokerCore {
    /// What the service knows of an app for conditional access.
    func facts(_ bundle: String) -> AppComplianceFacts {
        let manifest = manifest(for: bundle)
        let enrolled = service.enrolledAccount(in: bundle).flatMap { engine.tenant.identity(named: $0).account }
        return AppComplianceFacts(bundleID: manifest.bundleID, integratesSDK: manifest.integratesSDK, enrolledAccount: enrolled)
    }

    /// An app's request (`actor`: the app as it acts, under its own identity or none) names the
    /// account in `target`; a result with no request behind it (`ca.compliance`) is the account's.
    func caAudit(_ id: SessionID?, _ request: UInt32, channel: String, app: String, account: String, outcome: String, reason: ConditionalAccessReason,
                 detail: String, actor: AuditEntry.Party? = nil) -> BrokerEffect {
        let named = AuditEntry.Party(app: app, identity: account, managed: false)
        return .audit(AuditEntry(session: id ?? SessionID(0), request: request, channel: channel,
                                 source: actor ?? named, target: actor == nil ? nil : named, dataType: nil, size: nil,
                                 outcome: outcome, rule: reason.id, tag: reason.tag.rawValue, detail: Self.fitting(detail), revision: revision))
    }

    /// Who asks, as the audit says it: an unmanaged app acts under no account (`personal`),
    /// whoever the user signed in to it, and whatever account it names.
    mutating func actingParty(_ id: SessionID) -> AuditEntry.Party {
        let p = auditParty(id)
        return p.managed ? p : AuditEntry.Party(app: p.app, identity: "personal", managed: false)
    }

    mutating func acquireToken(_ id: SessionID, _ frameID: UInt32, account: String, _ out: inout [BrokerEffect]) -> Result<Void, WireError> {
        if let e = NameRules.check(account, field: "account") { return .failure(WireError(.invalidName, e.detail)) }
        let bundle = sessions[id]!.bundleID
        // A token is for the user who signed in here: naming an account must not tell an app its
        // object id and tenant.
        // (An empty name is no account: the endpoint refuses it as it always did.)
        guard engine.tenant.identity(named: account) == .personal || signedInAccount(account, for: id) != nil else {
            return .failure(notSignedIn(id, frameID, channel: "ca.token", account: account, &out))
        }
        guard let manager = compliance else {
            out.append(.send(id, Frame(id: frameID, .token(outcome: 0, homeAccountID: nil, detail: "the tenant has no conditional access"))))
            return .success(())
        }
        let d = manager.access.token(for: manager.access.account(named: account), app: facts(bundle))
        let code: UInt8 = d.outcome == .granted ? 0 : d.outcome == .protectionPolicyRequired ? 1 : 2
        // Not "acting under" the account it named: an unmanaged app acts under none.
        out.append(caAudit(id, frameID, channel: "ca.token", app: bundle, account: account, outcome: d.outcome.rawValue, reason: d.reason, detail: d.detail,
                           actor: actingParty(id)))
        out.append(.send(id, Frame(id: frameID, .token(outcome: code, homeAccountID: d.homeAccountId, detail: Self.fitting(d.detail)))))
        return .success(())
    }

    mutating func remediate(_ id: SessionID, _ frameID: UInt32, account: String, silent: Bool, _ out: inout [BrokerEffect]) -> Result<Void, WireError> {
        if let e = NameRules.check(account, field: "account") { return .failure(WireError(.invalidName, e.detail)) }
        guard compliance != nil else { return .failure(WireError(.notAllowed, "the tenant has no conditional access")) }
        // A compliant remediation enrolls the account: only one the user signed in here.
        // (An empty name is no account: the manager refuses it as it always did.)
        guard engine.tenant.identity(named: account) == .personal || signedInAccount(account, for: id) != nil else {
            return .failure(notSignedIn(id, frameID, channel: "ca.remediate", account: account, &out))
        }
        let bundle = sessions[id]!.bundleID
        let d = compliance!.request(app: bundle, accountId: account, silent: silent, now: clock.now())
        let code: UInt8 = [.started: 0, .queued: 1, .dropped: 2, .refused: 3][d.outcome] ?? 3
        out.append(caAudit(id, frameID, channel: "ca.remediate", app: bundle, account: account, outcome: d.outcome.rawValue, reason: d.reason, detail: d.detail,
                           actor: actingParty(id)))
        out.append(.send(id, Frame(id: frameID, .remediationAccepted(outcome: code, detail: Self.fitting(d.detail)))))
        return .success(())
    }

    /// `remediationInProgressForAccountId:`.
    mutating func remediationProgress(_ id: SessionID, _ frameID: UInt32, account: String, _ out: inout [BrokerEffect]) -> Result<Void, WireError> {
        if let e = NameRules.check(account, field: "account") { return .failure(WireError(.invalidName, e.detail)) }
        let progress = compliance?.progress(app: sessions[id]!.bundleID, accountId: account) ?? RemediationProgress.none
        let answer: Message
        switch progress {
        case .none: answer = .remediationProgress(state: 0, position: 0)
        case .running: answer = .remediationProgress(state: 1, position: 0)
        case let .queued(position): answer = .remediationProgress(state: 2, position: UInt16(clamping: position))
        }
        out.append(.send(id, Frame(id: frameID, answer)))
        return .success(())
    }

    /// Remediations whose time has come: their status goes to the app's running instances; a
    /// compliant one enrolls the account (a first policy, then a restart request).
    mutating func complianceTick(_ out: inout [BrokerEffect]) {
        guard let deadline = compliance?.nextDeadline, clock.now() >= deadline else { return }
        // The facts as they stand now, worked out before the manager changes.
        var known: [String: AppComplianceFacts] = [:]
        for b in Set(catalog.map(\.bundleID) + sessions.values.map(\.bundleID)) { known[b.lowercased()] = facts(b) }
        var manager = compliance!
        let results = manager.advance(now: clock.now()) { known[$0.lowercased()] ?? AppComplianceFacts(bundleID: $0) }
        compliance = manager
        for r in results {
            out.append(caAudit(nil, 0, channel: "ca.compliance", app: r.app, account: r.accountId, outcome: "\(r.status)",
                               reason: r.outcome.reason, detail: r.outcome.detail))
            // Only to the instances the account is signed in to (not another user's instance).
            for s in sessions.values where s.conversation.greeted && s.bundleID.lowercased() == r.app.lowercased()
                && s.signedIn.contains(where: { Self.canonicalName($0).lowercased() == Self.canonicalName(r.account).lowercased() }) {
                out.append(.send(s.id, Frame(id: brokerFrameID(), .complianceStatus(account: r.accountId, status: UInt8(r.status.rawValue),
                                                                                   title: Self.fitting(r.outcome.title),
                                                                                   message: Self.fitting(r.outcome.message)))))
            }
            // Not once the user signed the account out of the app (an unenrollment, a wipe) while
            // it ran: only the user's sign-in brings it back.
            if r.outcome.enrolls, !service.isSignedOut(app: r.app, account: Self.canonicalName(r.account)) {
                let name = r.account.upn ?? r.account.name
                tell(service.registerAndEnroll(app: manifest(for: r.app), accountName: name, engine: engine, now: clock.now()), requester: nil, &out)
            }
        }
    }
}
