import MAMWire

/// What carries out the core's effects: the broker's sockets, files and worker threads
/// (`Broker`, in MAMBroker), or the embedded broker's memory (`EmbeddedBroker`, in
/// MAMBrokerEmbedded). `BrokerCore.carryOut(_:on:)` walks the effects in order and calls
/// these; what follows from one — a reply that could not be sent, an export request that did
/// not arrive, a job finished at once, a key read — it hands back to the core itself, so every
/// shell answers, audits and closes in the same order.
public protocol BrokerShell {
    /// Sends a frame to an app, with the attachment's descriptor when given, without waiting.
    mutating func send(_ frame: Frame, to session: SessionID, attachment: Int?) -> SendResult
    /// Sends a frame the broker starts to a third party, without waiting; true when it went
    /// through (an app that is not reading keeps its connection).
    mutating func deliver(_ frame: Frame, to session: SessionID, attachment: Int?) -> Bool
    /// Closes a connection the core has forgotten (`reason` nil: the loss was logged already).
    mutating func close(_ session: SessionID, reason: String?)
    mutating func audit(_ entry: AuditEntry)
    mutating func log(_ line: LogLine)
    mutating func persist(_ change: StateChange)
    mutating func startApp(bundleID: String)
    mutating func restartApp(_ session: SessionID, pid: Int32)
    /// The jobs: each returns its result as the event the core expects when it finished at
    /// once, or nil when that event comes later (the shell's worker threads).
    mutating func store(job: Int, attachment: Int, file: StoredFile, budget: String) -> BrokerEvent?
    mutating func open(job: Int, key: StoredFileKey, budget: String) -> BrokerEvent?
    mutating func encrypt(job: Int, attachment: Int, keyID: String, budget: String, receiver: String) -> BrokerEvent?
    /// Checks a password against a stored credential (slow: PBKDF2) off the event loop.
    mutating func checkCredential(job: Int, stored: String, secret: String) -> BrokerEvent?
    /// The account key under `keyID` (made the first time); nil when it cannot be read (the
    /// shell says why in its own log).
    mutating func key(_ keyID: String) -> [UInt8]?
    /// The core is done with this descriptor.
    mutating func release(attachment: Int)
}

/// What became of a reply.
public enum SendResult: Sendable, Equatable {
    case sent
    /// The app's connection is already gone: nothing to do.
    case noConnection
    /// The app is not reading, or its connection broke: it loses the connection.
    case failed(String)
}

extension BrokerCore {
    /// Carries `effects` out on `shell`, in order: the one interpreter of the core's effects,
    /// which the broker and the embedded broker share.
    public mutating func carryOut<Shell: BrokerShell>(_ effects: [BrokerEffect], on shell: inout Shell) {
        var queue = effects[...]
        while let effect = queue.popFirst() {
            switch effect {
            case let .send(id, frame, attachment):
                if case let .failed(error) = shell.send(frame, to: id, attachment: attachment) {
                    // Not read, or gone: that app loses its connection, said in the log; nobody waits for it.
                    shell.log(LogLine(level: .warning, message: "a reply could not be delivered; closing that connection",
                                      metadata: ["session": "\(id)", "error": error]))
                    queue.append(contentsOf: handle(.disconnected(id)))
                    shell.close(id, reason: nil)
                }
            case let .deliver(id, frame, attachment, then, otherwise):
                // To a third party: if it is not reading, it keeps its connection and the
                // requester is told; only what arrived is answered and audited.
                let delivered = shell.deliver(frame, to: id, attachment: attachment)
                queue.insert(contentsOf: delivered ? then : otherwise, at: queue.startIndex)
            case let .close(id, reason): shell.close(id, reason: reason)
            case let .exportUndelivered(brokerID): queue.insert(contentsOf: handle(.exportUndelivered(brokerFrameID: brokerID)), at: queue.startIndex)
            case let .audit(entry): shell.audit(entry)
            case let .persist(change): shell.persist(change)
            case let .startApp(bundle): shell.startApp(bundleID: bundle)
            case let .restartApp(session, pid): shell.restartApp(session, pid: pid)
            case let .store(job, token, file, budget):
                if let done = shell.store(job: job, attachment: token, file: file, budget: budget) { queue.append(contentsOf: handle(done)) }
            case let .open(job, key, budget):
                if let done = shell.open(job: job, key: key, budget: budget) { queue.append(contentsOf: handle(done)) }
            case let .encrypt(job, token, keyID, budget, receiver):
                if let done = shell.encrypt(job: job, attachment: token, keyID: keyID, budget: budget, receiver: receiver) { queue.append(contentsOf: handle(done)) }
            case let .checkCredential(job, stored, secret):
                if let done = shell.checkCredential(job: job, stored: stored, secret: secret) { queue.append(contentsOf: handle(done)) }
            case let .sendKey(id, frameID, account, keyID):
                let reply: Message = shell.key(keyID).map { .accountKey(account: account, key: $0) }
                    ?? .error(code: .internalError, detail: "the account key could not be read")
                queue.insert(.send(id, Frame(id: frameID, reply)), at: queue.startIndex)
            case let .release(token): shell.release(attachment: token)
            case let .log(line): shell.log(line)
            }
        }
    }
}
