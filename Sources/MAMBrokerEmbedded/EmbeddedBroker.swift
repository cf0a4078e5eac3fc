import MAMBrokerCore
import MAMPolicy
import MAMService
import MAMWire

/// The broker's core in a shell made of memory: no process, no socket, no file, the way
/// NIOEmbedded's channel runs NIOCore's pipeline. Documents are strings held by token, stored
/// files live in a dictionary, `encrypt` marks content as ciphertext, and time moves only when
/// told. The core's own interpreter (`BrokerCore.carryOut`, which the broker runs too) carries
/// every effect out on `shell`, which records it: a test reads what each app received and what
/// was audited, and checks that every descriptor the core took was released.
///
/// What the shell recorded reads as the broker's own (`embedded.audits`, `embedded.closed`).
@dynamicMemberLookup
public struct EmbeddedBroker {
    public var core: BrokerCore
    public let clock = ManualClock()
    public var shell = EmbeddedShell()
    public var nextSession = 1

    public init(tenant: Tenant, apps: [AppManifest], limits: BrokerLimits = BrokerLimits(),
                conditionalAccess: ConditionalAccessSettings? = nil, credentials: @escaping CredentialCheck) {
        core = BrokerCore(engine: PolicyEngine(tenant: tenant, apps: apps), catalog: apps, clock: clock, limits: limits,
                          conditionalAccess: conditionalAccess)
        shell.credentials = credentials
    }

    public subscript<Value>(dynamicMember path: WritableKeyPath<EmbeddedShell, Value>) -> Value {
        get { shell[keyPath: path] }
        set { shell[keyPath: path] = newValue }
    }

    /// Connects an app as the launcher would, and greets.
    public mutating func launch(_ bundleID: String, account: String? = nil, personal: Bool = false, sdk: Bool = true) -> SessionID {
        let id = connect(Peer(bundleID: bundleID, pid: Int32(1000 + nextSession), account: account, fromLauncher: true, personal: personal))
        send(id, .hello(minVersion: Wire.version, maxVersion: Wire.version, integratesSDK: sdk))
        return id
    }

    public mutating func connect(_ peer: Peer) -> SessionID {
        let id = SessionID(nextSession)
        nextSession += 1
        run(core.handle(.connected(id, peer)))
        return id
    }

    /// A sealed document (or, with `sealed: false`, any descriptor).
    public mutating func document(_ text: String, sealed: Bool = true, size: Int? = nil, allocated: Int? = nil) -> Attachment {
        shell.document(text, sealed: sealed, size: size, allocated: allocated)
    }

    /// An id for an app's next request, not used before.
    public mutating func nextFrameID() -> UInt32 {
        defer { shell.nextToken += 1 }
        return UInt32(shell.nextToken * 7 + 1)
    }

    /// Sends a frame from an app; returns the frames the app got back with this request's id.
    @discardableResult
    public mutating func send(_ id: SessionID, _ m: Message, _ attachment: Attachment? = nil, frameID: UInt32? = nil) -> [EmbeddedShell.Delivered] {
        let generated = nextFrameID()
        let fid = frameID ?? generated
        let before = shell.inbox[id]?.count ?? 0
        run(core.handle(.frame(id, Frame(id: fid, m), attachment)))
        return (shell.inbox[id] ?? []).dropFirst(before).filter { $0.frame.id == fid }
    }

    /// Carries effects out, as the broker's loop does after each event.
    public mutating func run(_ effects: [BrokerEffect]) {
        core.carryOut(effects, on: &shell)
    }

    /// Finishes the jobs held back while `deferJobs` was set, in the order they were asked for.
    public mutating func flushJobs() {
        let jobs = shell.pendingJobs
        shell.pendingJobs = []
        for job in jobs {
            if let done = shell.finish(job) { run(core.handle(done)) }
        }
    }

    public func received(_ id: SessionID) -> [EmbeddedShell.Delivered] { shell.inbox[id] ?? [] }

    /// Descriptors the core still holds (after everything settled there must be none).
    public var heldDescriptors: Int { shell.contents.count }
}

extension Array where Element == EmbeddedShell.Delivered {
    /// The decision among these frames (a `decision`, or a `pasteResult`'s).
    public var decision: DecisionRecord? {
        for d in self {
            if case let .decision(r) = d.frame.message { return r }
            if case let .pasteResult(r, _) = d.frame.message { return r }
        }
        return nil
    }
    public var error: WireErrorCode? {
        for d in self { if case let .error(code, _) = d.frame.message { return code } }
        return nil
    }
}
