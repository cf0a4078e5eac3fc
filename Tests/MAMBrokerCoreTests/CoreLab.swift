import Foundation
import MAMBroker
import MAMCatalog
import MAMPolicy
import MAMWire

/// The broker's core with a stand-in shell: no process, no socket, no file. Documents are
/// strings held by token; stored files live in a dictionary; `encrypt` marks content as
/// ciphertext. Every effect is recorded, so tests read what each app received and what was
/// audited, and every descriptor the core took must be released.
struct CoreLab {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let sampleTenant = try! Catalog.loadTenant(root.appendingPathComponent("Policies/contoso/tenant.json").path).tenant
    static let sampleApps = Catalog.loadApps(in: root.appendingPathComponent("Apps")).apps.map(\.manifest)

    /// What a document descriptor holds here: its text, and whether it is ciphertext.
    struct Content: Equatable {
        var text: String
        var encrypted = false
    }

    /// Something an app received.
    struct Delivered {
        var frame: Frame
        var content: Content?
    }

    var core: BrokerCore
    let clock = ManualClock()
    var contents: [Int: Content] = [:]
    var disk: [StoredFileKey: Content] = [:]
    var inbox: [SessionID: [Delivered]] = [:]
    var audits: [AuditEntry] = []
    /// What the core asked to be written, in order.
    var persisted: [StateChange] = []
    var logs: [LogLine] = []
    var closed: Set<SessionID> = []
    /// Apps whose connection is full: deliveries to them fail, as a send that would block does.
    var notReading: Set<SessionID> = []
    var started: [String] = []
    var restarted: [SessionID] = []
    var nextToken = 1
    var nextSession = 1
    /// Jobs the shell has not finished (tests may finish them late, or never).
    var deferJobs = false
    var pendingJobs: [BrokerEffect] = []

    /// The sample tenant's conditional-access section.
    static let sampleAccess = try! ConditionalAccessFile.load(
        try! Data(contentsOf: root.appendingPathComponent("Policies/contoso/tenant.json")), file: "tenant.json", tenant: sampleTenant).settings

    init(tenant: Tenant = CoreLab.sampleTenant, apps: [AppManifest] = CoreLab.sampleApps, limits: BrokerLimits = BrokerLimits(),
         conditionalAccess: ConditionalAccessSettings? = nil) {
        core = BrokerCore(engine: PolicyEngine(tenant: tenant, apps: apps), catalog: apps, clock: clock, limits: limits,
                          conditionalAccess: conditionalAccess)
    }

    /// Connects an app as the launcher would, and greets.
    mutating func launch(_ bundleID: String, account: String? = nil, personal: Bool = false, sdk: Bool = true) -> SessionID {
        let id = connect(Peer(bundleID: bundleID, pid: Int32(1000 + nextSession), account: account, fromLauncher: true, personal: personal))
        send(id, .hello(minVersion: 1, maxVersion: 1, integratesSDK: sdk))
        return id
    }

    mutating func connect(_ peer: Peer) -> SessionID {
        let id = SessionID(nextSession)
        nextSession += 1
        run(core.handle(.connected(id, peer)))
        return id
    }

    /// A sealed document (or, with `sealed: false`, any descriptor).
    mutating func document(_ text: String, sealed: Bool = true, size: Int? = nil, allocated: Int? = nil) -> Attachment {
        let token = nextToken
        nextToken += 1
        contents[token] = Content(text: text)
        let n = size ?? text.utf8.count
        return Attachment(token: token, sealed: sealed, size: n, allocated: allocated ?? n)
    }

    /// Sends a frame from an app; returns the frames the app got back with this request's id.
    @discardableResult
    mutating func send(_ id: SessionID, _ m: Message, _ attachment: Attachment? = nil, frameID: UInt32? = nil) -> [Delivered] {
        let fid = frameID ?? UInt32(nextToken * 7 + 1)
        nextToken += 1
        let before = inbox[id]?.count ?? 0
        run(core.handle(.frame(id, Frame(id: fid, m), attachment)))
        return (inbox[id] ?? []).dropFirst(before).filter { $0.frame.id == fid }
    }

    mutating func run(_ effects: [BrokerEffect]) {
        var queue = effects[...]
        while let e = queue.popFirst() {
            switch e {
            case let .send(id, frame, token):
                inbox[id, default: []].append(Delivered(frame: frame, content: token.flatMap { contents[$0] }))
            case let .deliver(id, frame, token, then, otherwise):
                if notReading.contains(id) {
                    queue.insert(contentsOf: otherwise, at: queue.startIndex)
                } else {
                    inbox[id, default: []].append(Delivered(frame: frame, content: token.flatMap { contents[$0] }))
                    queue.insert(contentsOf: then, at: queue.startIndex)
                }
            case let .close(id, _): closed.insert(id)
            case let .exportUndelivered(brokerID): queue.insert(contentsOf: core.handle(.exportUndelivered(brokerFrameID: brokerID)), at: queue.startIndex)
            case let .audit(a): audits.append(a)
            case let .log(line): logs.append(line)
            case let .persist(change): persisted.append(change)
            case let .startApp(bundle): started.append(bundle)
            case let .restartApp(id, _): restarted.append(id)
            case let .sendKey(id, frameID, account, keyID):
                // The shell reads the key from its state; the lab's key is a function of its id.
                let key = (0..<32).map { UInt8(truncatingIfNeeded: $0 &+ keyID.utf8.count) }
                inbox[id, default: []].append(Delivered(frame: Frame(id: frameID, .accountKey(account: account, key: key)), content: nil))
            case let .release(token):
                precondition(contents[token] != nil, "released \(token) twice or never had it")
                contents[token] = nil
            case .store, .open, .encrypt:
                if deferJobs { pendingJobs.append(e) } else { queue.append(contentsOf: finish(e)) }
            }
        }
    }

    /// Carries out one job as the shell would, and hands the result to the core.
    mutating func finish(_ e: BrokerEffect) -> [BrokerEffect] {
        switch e {
        case let .store(job, token, file, _):
            disk[file.key] = contents[token]
            return core.handle(.stored(job: job, error: nil))
        case let .open(job, key, _):
            guard let c = disk[key] else { return core.handle(.opened(job: job, .failure(JobFailure("gone", missing: true)))) }
            let a = document(c.text)
            contents[a.token] = c
            return core.handle(.opened(job: job, .success(a)))
        case let .encrypt(job, token, _, _, _):
            var a = document("ciphertext")
            a.sealed = true
            contents[a.token] = Content(text: contents[token]!.text, encrypted: true)
            return core.handle(.encrypted(job: job, .success(a)))
        default: return []
        }
    }

    mutating func flushJobs() {
        let jobs = pendingJobs
        pendingJobs = []
        for j in jobs { run(finish(j)) }
    }

    func received(_ id: SessionID) -> [Delivered] { inbox[id] ?? [] }

    /// Descriptors the core still holds (after everything settled there must be none).
    var heldDescriptors: Int { contents.count }
}

extension Array where Element == CoreLab.Delivered {
    var decision: DecisionRecord? {
        for d in self {
            if case let .decision(r) = d.frame.message { return r }
            if case let .pasteResult(r, _) = d.frame.message { return r }
        }
        return nil
    }
    var error: WireErrorCode? {
        for d in self { if case let .error(code, _) = d.frame.message { return code } }
        return nil
    }
    var outcome: String? { decision.map { ["allowed", "blocked", "encrypted", "filtered", "switched", "rewritten"][Int($0.outcome)] } }
}
