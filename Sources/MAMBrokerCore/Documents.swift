import MAMPolicy
import MAMWire

// Open-in and share: the share sheet, pushes, and imports.
extension BrokerCore {
    mutating func listTargets(_ id: SessionID, _ frameID: UInt32, _ type: String, _ out: inout [BrokerEffect]) -> Result<Void, WireError> {
        if let e = NameRules.check(type, field: "contentType") { return .failure(WireError(.invalidName, e.detail)) }
        let me = party(id)
        let others = sessions.values.filter { $0.conversation.greeted && $0.id != id }.map(\.id).sorted()
        // iOS offers every installed app that declares the type, running or not (seed 000
        // §'Copy To' actions); a share to one that is not running starts it. A running instance
        // answers as it stands; an installed app that is not running, at its launch identity.
        let running = Set(others.map { sessions[$0]!.bundleID })
        let idle = installedParties().filter { !running.contains($0.bundleID) }
        let list = engine.openInTargets(type: type, from: me, candidates: others.map { party($0) } + idle)
            .map { ShareTarget(bundleID: $0.target.bundleID, outcome: Self.record($0.decision).outcome) }
        out.append(.send(id, Frame(id: frameID, .targets(Array(list.prefix(Wire.maximumListCount))))))
        return .success(())
    }

    /// Checks what every document from an app must be before anything is decided about it.
    func checkDocument(_ a: Attachment, names: [(String, String)]) -> WireError? {
        for (value, field) in names {
            if let e = NameRules.check(value, field: field) { return WireError(.invalidName, e.detail) }
        }
        guard a.sealed else {
            return WireError(.notAllowed, "a document must be a memfd sealed with F_SEAL_SEAL, F_SEAL_SHRINK, F_SEAL_GROW and F_SEAL_WRITE")
        }
        return nil
    }

    mutating func share(_ id: SessionID, _ frameID: UInt32, target: String, type: String, name: String, _ a: Attachment,
                        retained: inout Bool, _ out: inout [BrokerEffect]) -> Result<Void, WireError> {
        if let e = checkDocument(a, names: [(target, "target"), (type, "contentType"), (name, "name")]) { return .failure(e) }
        let target = installedBundleID(named: target)
        guard let to = running(target, except: id) else {
            // An installed app (in its installed spelling) is started for the document, which
            // waits for it; anything else is unknown.
            guard let installed = engine.apps[target.lowercased()], installed.bundleID == target, target != sessions[id]!.bundleID else {
                return .failure(WireError(.unknownTarget, notRunning(target)))
            }
            guard mayStartJob(id) else {
                return .failure(WireError(.limitReached, "\(limits.jobsPerApp) documents of this app are already being processed"))
            }
            let waiting = PendingShare(sender: id, frameID: frameID, target: target, type: type, name: name, attachment: a)
            let queued = startingApp(target, &out) { $0.shares.append(waiting) }
            if case .success = queued { retained = true }
            return queued
        }
        let me = party(id)
        let d = engine.openIn(type: type, from: me, to: party(to))
        let e = Self.entry(d, revision: revision, session: id, request: frameID, channel: "open-in", source: auditParty(id), target: auditParty(to), type: type, size: a.size)
        let document = Message.document(contentType: d.deliveredType ?? type, name: name, owner: me.dataAccount?.name, encrypted: d.outcome == .encrypted)
        let delivery = Delivery(requester: id, requestID: frameID, target: to, isImport: false, decision: d, document: document, entry: e)
        return deliver(delivery, a, keyAccount: me.dataAccount, retained: &retained, &out)
    }

    mutating func importRequest(_ id: SessionID, _ frameID: UInt32, source: String, type: String, _ out: inout [BrokerEffect]) -> Result<Void, WireError> {
        if let e = NameRules.check(source, field: "source") ?? NameRules.check(type, field: "contentType") {
            return .failure(WireError(.invalidName, e.detail))
        }
        let source = installedBundleID(named: source)
        guard let src = running(source, except: id) else { return .failure(WireError(.unknownTarget, notRunning(source))) }
        guard sessions[id]!.pendingImports < limits.pendingImportsPerApp else {
            return .failure(WireError(.limitReached, "\(limits.pendingImportsPerApp) imports are already waiting for their source"))
        }
        guard pendingImports.values.filter({ $0.source == src }).count < limits.pendingExportsPerSource else {
            // (Abandoned requests count until the source answers or leaves: it is the one not answering.)
            return .failure(WireError(.limitReached, "\(source) already has \(limits.pendingExportsPerSource) export requests unanswered"))
        }
        let brokerID = brokerFrameID()
        pendingImports[brokerID] = PendingImport(requester: id, frameID: frameID, source: src, contentType: type, started: clock.now())
        sessions[id]!.pendingImports += 1
        out.append(.deliver(src, Frame(id: brokerID, .exportRequest(contentType: type)), then: [],
                            otherwise: [.exportUndelivered(brokerFrameID: brokerID)]))
        return .success(())
    }

    /// The export request did not reach its source: the importer is answered now, once. The
    /// entry stays, abandoned, so a source that is not reading still counts against its limit
    /// until it answers (dropped) or leaves, and neither the time-out nor its leaving answers the
    /// importer a second time under the same frame id.
    mutating func exportUndelivered(_ brokerID: UInt32, _ out: inout [BrokerEffect]) {
        guard let p = pendingImports[brokerID], !p.abandoned else { return }
        pendingImports[brokerID]!.abandoned = true
        guard sessions[p.requester] != nil else { return }
        sessions[p.requester]!.pendingImports -= 1
        let source = sessions[p.source]?.bundleID ?? "the source"
        out.append(.send(p.requester, Frame(id: p.frameID, .error(code: .limitReached, detail: "\(source) is not reading its connection"))))
    }

    mutating func exported(_ id: SessionID, _ frameID: UInt32, type: String, name: String, _ a: Attachment,
                           retained: inout Bool, _ out: inout [BrokerEffect]) -> Result<Void, WireError> {
        guard let pending = pendingImports[frameID], pending.source == id else {
            return .failure(WireError(.outOfOrder, "exportReply \(frameID) answers no export request sent to this app"))
        }
        pendingImports[frameID] = nil
        // The importer left or was told the source took too long: the answer is dropped, and
        // the source keeps its connection.
        guard !pending.abandoned, sessions[pending.requester] != nil else { return .success(()) }
        sessions[pending.requester]!.pendingImports -= 1
        if let e = checkDocument(a, names: [(type, "contentType"), (name, "name")]) {
            // The importer learns why its import came to nothing; the exporter gets the error.
            out.append(.send(pending.requester, Frame(id: pending.frameID, .error(code: .unknownTarget, detail: "\(sessions[id]!.bundleID) exported an unusable document"))))
            return .failure(e)
        }
        let source = party(id)
        let d = engine.importDocument(type: type, from: source, to: party(pending.requester))
        let e = Self.entry(d, revision: revision, session: pending.requester, request: pending.frameID, channel: "import", source: auditParty(id),
                      target: auditParty(pending.requester), type: type, size: a.size)
        let document = Message.document(contentType: d.deliveredType ?? type, name: name, owner: source.dataAccount?.name,
                                        encrypted: d.outcome == .encrypted)
        let delivery = Delivery(requester: pending.requester, requestID: pending.frameID, target: pending.requester, isImport: true,
                                decision: d, document: document, entry: e)
        return deliver(delivery, a, keyAccount: source.dataAccount, retained: &retained, &out)
    }

    /// Forwards a decided document: blocked ones answer at once; `encrypted` ones are made into
    /// ciphertext under the data account's key first (the receiver must not be able to read
    /// them); the rest pass the sealed descriptor on untouched.
    mutating func deliver(_ delivery: Delivery, _ a: Attachment, keyAccount: Account?, retained: inout Bool,
                          _ out: inout [BrokerEffect]) -> Result<Void, WireError> {
        guard delivery.decision.allowed else {
            out.append(.audit(delivery.entry))
            out.append(.send(delivery.requester, Frame(id: delivery.requestID, .decision(Self.record(delivery.decision)))))
            return .success(())
        }
        guard delivery.decision.outcome == .encrypted else {
            complete(delivery, attachment: a.token, &out)
            return .success(())
        }
        guard let account = keyAccount else {
            return .failure(WireError(.internalError, "an encrypted outcome without a data account"))
        }
        if a.size > limits.maximumEncryptedSize || a.isSparse {
            return .failure(WireError(.limitReached, "a document the broker must encrypt may be at most \(limits.maximumEncryptedSize) bytes and not sparse"))
        }
        guard mayStartJob(delivery.requester) else {
            return .failure(WireError(.limitReached, "\(limits.jobsPerApp) documents of this app are already being processed"))
        }
        var held = delivery
        held.original = a.token
        let job = newJob(.deliver(held), app: sessions[delivery.requester]!.bundleID)
        retained = true
        let receiver = sessions[delivery.target] != nil ? budget(delivery.target) : "unknown apps"
        out.append(.encrypt(job: job, attachment: a.token, keyID: Self.keyID(account), budget: budget(delivery.requester), receiver: receiver))
        return .success(())
    }

    /// Imports whose source has not answered in time: the importer is told and its slot freed;
    /// the request stays (abandoned) until the source answers or leaves.
    mutating func expireImports(_ out: inout [BrokerEffect]) {
        let now = clock.now()
        for (key, p) in pendingImports where !p.abandoned && now - p.started > limits.exportTimeout {
            pendingImports[key]!.abandoned = true
            guard sessions[p.requester] != nil else { continue }
            sessions[p.requester]!.pendingImports -= 1
            let source = sessions[p.source]?.bundleID ?? "the source"
            out.append(.send(p.requester, Frame(id: p.frameID, .error(code: .unknownTarget, detail: "\(source) did not answer within \(limits.exportTimeout)"))))
        }
    }

    /// The key id of an account: its object id, else its name (lower-cased).
    public static func keyID(_ account: Account) -> String {
        if let oid = account.oid, !oid.isEmpty { return oid.lowercased() }
        return account.name.lowercased()
    }

    /// Sends the document and, with it, the final answer and its audit entry.
    mutating func complete(_ d: Delivery, attachment: Int, _ out: inout [BrokerEffect]) {
        if sessions[d.target] == nil {
            out.append(.send(d.requester, Frame(id: d.requestID, .error(code: .unknownTarget, detail: "the receiver went away"))))
            return
        }
        if d.isImport {
            // An import's answers: the decision, then the document, both under the request's id.
            out.append(.audit(d.entry))
            out.append(.send(d.requester, Frame(id: d.requestID, .decision(Self.record(d.decision)))))
            out.append(.send(d.target, Frame(id: d.requestID, d.document), attachment: attachment))
        } else {
            let answer: [BrokerEffect] = sessions[d.requester] != nil ? [.send(d.requester, Frame(id: d.requestID, .decision(Self.record(d.decision))))] : []
            let refused: [BrokerEffect] = sessions[d.requester] != nil ? [notReading(d.requester, d.requestID, sessions[d.target]!.bundleID)] : []
            out.append(.deliver(d.target, Frame(id: brokerFrameID(), d.document), attachment: attachment, then: [.audit(d.entry)] + answer, otherwise: refused))
        }
    }

    mutating func finishEncrypt(_ n: Int, _ result: Result<Attachment, JobFailure>, _ out: inout [BrokerEffect]) {
        guard let job = takeJob(n), case let .deliver(d) = job else {
            if case let .success(a) = result { out.append(.release(attachment: a.token)) }
            return
        }
        defer { d.original.map { out.append(.release(attachment: $0)) } }
        switch result {
        case let .success(ciphertext):
            complete(d, attachment: ciphertext.token, &out)
            out.append(.release(attachment: ciphertext.token))
        case let .failure(f) where f.limitReached:
            out.append(.log(LogLine(level: .notice, message: "an encrypted document was refused", metadata: ["reason": f.reason])))
            if sessions[d.requester] != nil {
                out.append(.send(d.requester, Frame(id: d.requestID, .error(code: .limitReached, detail: f.reason))))
            }
        case let .failure(f):
            out.append(.log(LogLine(level: .error, message: "encrypting a document failed", metadata: ["reason": f.reason])))
            if sessions[d.requester] != nil {
                out.append(.send(d.requester, Frame(id: d.requestID, .error(code: .internalError, detail: "the document could not be encrypted"))))
            }
        }
    }
}
