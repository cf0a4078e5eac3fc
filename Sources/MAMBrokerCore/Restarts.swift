import MAMPolicy
import MAMService
import MAMWire

// The restart delegate's answer and the enrollment manager's allowed accounts.
extension BrokerCore {
    /// `restartApplication` answered: an app that restarts itself is left alone; one that
    /// declines is restarted by the SDK side [doc: SDK-API §5, false = the SDK restarts the app],
    /// here by the launcher that started it, which the shell asks.
    mutating func restartReply(_ id: SessionID, _ frameID: UInt32, restartsItself: Bool, _ out: inout [BrokerEffect]) -> Result<Void, WireError> {
        guard sessions[id]!.restartAsked else { return .failure(WireError(.outOfOrder, "no restart was asked of this app")) }
        sessions[id]!.restartAsked = false
        let peer = sessions[id]!.peer
        out.append(.audit(AuditEntry(session: id, request: frameID, channel: "enrollment.restart", source: auditParty(id), target: nil,
                                     dataType: nil, size: nil, outcome: restartsItself ? "restarts-itself" : "restarted-by-launcher",
                                     rule: "7", tag: "doc", detail: nil, revision: revision)))
        guard !restartsItself else { return .success(()) }
        guard peer.fromLauncher else {
            // Nobody started it who could start it again: say so rather than pretend.
            out.append(.send(id, Frame(id: frameID, .error(code: .notAllowed, detail: "this app was not started by a launcher; restart it yourself"))))
            return .success(())
        }
        out.append(.restartApp(id, pid: peer.pid))
        return .success(())
    }

    mutating func allowedAccountsRequest(_ id: SessionID, _ frameID: UInt32, _ out: inout [BrokerEffect]) -> Result<Void, WireError> {
        guard sessions[id]!.manifest.integratesSDK else { return .failure(WireError(.notAllowed, "an app without the SDK has no enrollment manager")) }
        out.append(.send(id, Frame(id: frameID, allowedAccountsMessage(engine.tenant.device))))
        return .success(())
    }

    func allowedAccountsMessage(_ device: Device) -> Message {
        guard let list = device.allowedAccounts else { return .allowedAccounts(restricted: false, accounts: []) }
        return .allowedAccounts(restricted: true, accounts: list.map { $0.upn ?? $0.name })
    }

    /// After a reload: SDK apps hear of a changed list (the SDK's allowed-accounts notification).
    mutating func allowedAccountsChanges(from old: Tenant, _ out: inout [BrokerEffect]) {
        let before = allowedAccountsMessage(old.device), after = allowedAccountsMessage(engine.tenant.device)
        guard before != after else { return }
        for s in sessions.values.sorted(by: { $0.id < $1.id }) where s.conversation.greeted && s.manifest.integratesSDK {
            out.append(.send(s.id, Frame(id: brokerFrameID(), after)))
        }
    }
}
