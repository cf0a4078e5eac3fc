import CMAMWire
import Foundation
import Glibc
import Logging
import MAMBrokerCore
import MAMCatalog
import MAMPolicy
import MAMProtect
import MAMService
import MAMWire
import SystemPackage

/// Starts an app the broker needs (a URL's target that is not running). Called off the event
/// loop, so it may block; returns nil once the app is on its way, or why it could not start.
public protocol AppStarter: Sendable {
    func start(bundleID: String) -> String?
}

/// The broker's shell: sockets, descriptors, files and threads around `BrokerCore`.
///
/// One thread runs an epoll loop that owns the core, reads every connection without blocking
/// (a few frames per connection per turn, so a flooding app cannot starve the others), and
/// carries out the core's effects. Anything that can block — copying into a location, opening
/// a stored file, encrypting, writing state, starting an app — runs on worker threads and comes
/// back as an event. Saved enrollments and a wiped account's key must be written before the
/// app hears of them: the replies of that turn wait (HeldReplies) while the loop serves the
/// others. Nothing is ever done under a lock that another connection waits for.
public final class Broker: @unchecked Sendable {
    public struct Configuration: Sendable {
        public var deviceDirectory: String
        public var publicSocket: String
        public var launcherSocket: String
        public var limits: BrokerLimits
        public var auditMaximumBytes: Int
        /// How long ordinary decisions and security events are kept in the audit (docs/PROTOCOL.md).
        public var auditMaximumAge: Duration = .seconds(30 * 86_400)
        public var securityAuditMaximumAge: Duration = .seconds(365 * 86_400)
        /// Test-only (mambroker's hidden --test-flip): the channel whose decisions the broker
        /// inverts, so that a test can show `mamlaunch matrix` catches a broker that disagrees
        /// with the engine. Set only by whoever starts the broker; nothing an app sends reaches it.
        public var testFlip: String?
        /// The installed app's program as it is now, by bundle id (nil: not installed, or no
        /// programs known): asked at each hand-off, so a rebuilt app is still itself.
        public var installedProgram: (@Sendable (String) -> InstalledProgram?)?
        /// Requests one app may make in a second (its connections together); past it they are
        /// refused (`limitReached`) and counted in the audit.
        public var requestsPerSecond = 2000
        /// The installed apps' `Apps/` folder names (lowercased) and their bundle ids: an app
        /// names another as `mamlaunch run` does (BrokerCore.installedBundleID(named:)).
        public var appNames: [String: String] = [:]
        /// Reads the tenant file again (the launcher's `reloadTenant`, as SIGHUP does); nil:
        /// this broker has no file to read (one made in a test from values).
        public var loadTenant: (@Sendable () throws -> (Tenant, ConditionalAccessSettings?))?

        public init(deviceDirectory: String, publicSocket: String? = nil, launcherSocket: String? = nil,
                    limits: BrokerLimits = BrokerLimits(), auditMaximumBytes: Int = 64 << 20) {
            self.deviceDirectory = deviceDirectory
            self.publicSocket = publicSocket ?? (deviceDirectory as NSString).appendingPathComponent("mambroker.sock")
            self.launcherSocket = launcherSocket ?? (deviceDirectory as NSString).appendingPathComponent("launcher.sock")
            self.limits = limits
            self.auditMaximumBytes = auditMaximumBytes
        }
    }

    public let configuration: Configuration
    let logger: Logger
    let starter: AppStarter?
    let clock: any BrokerClock
    var core: BrokerCore
    let audit: AuditTrail
    let store: StateStore
    let locations: LocationStore
    let loop: EventLoop<Mail>
    /// One lane for the disk and one for encryption: a flood of large saves keeps at most one
    /// core busy copying, and the loop keeps the other.
    let disk = WorkerLane(name: "mambroker-disk")
    let crypto = WorkerLane(name: "mambroker-crypto")
    /// Ciphertexts made for each receiver that it still holds (crypto lane only).
    let heldCiphertexts: HeldCiphertexts
    let starts = WorkerLane(name: "mambroker-starts", nice: 0)
    /// Sign-ins' password checks (PBKDF2, a quarter of a second each by design): their own lane,
    /// so a burst of them delays neither the loop nor encryption.
    let credentials = WorkerLane(name: "mambroker-credentials")
    let persistence = DispatchQueue(label: "mambroker.state")
    /// Replies waiting for a state write (loop only), and the newest enrollments not yet
    /// written (coalesced, as the pasteboard is).
    var heldReplies = HeldReplies()
    let pendingEnrollments = Mutex()
    nonisolated(unsafe) var unsavedEnrollments: UnsavedEnrollments?
    /// Whether the loop runs: `stop` waits for its end only when it started (a broker whose
    /// `start` threw, or was never called, has no loop to wait for), and only once.
    private let life = NSLock()
    private var loopRuns = false

    // Loop-thread state.
    var handles: [Int32: Handle] = [:]
    /// Which launcher connection adopted each app (to ask it for a restart).
    var launcherOf: [SessionID: Int32] = [:]
    /// `mamlaunch signin` connections waiting for their password check, by the core's job.
    var signInReplies: [Int: (socket: WireSocket, account: String, pid: Int32)] = [:]
    /// The pid each launcher gave its app, to tell it when the broker has let the app go.
    var adoptedPid: [SessionID: Int32] = [:]
    var sockets: [SessionID: WireSocket] = [:]
    var descriptors: [Int: Int32] = [:]
    var nextToken = 1
    var nextSession = 1
    var lastTick: Duration = .zero
    let receiveBuffer = ReceiveBuffer()
    var refusedDeliveries: [SessionID: Int] = [:]
    /// Each connection's app's request budget, shared by the app's connections.
    var budgets: [SessionID: RequestBudget] = [:]
    var appBudgets: [String: RequestBudget] = [:]
    /// Sandbox violations per app, audited at the first ten and every tenfold count.
    var violations: [String: Int] = [:]
    /// Each app's security records this minute (AuditTrail.securityBudget).
    var securityRecords: [String: SecurityBudget] = [:]
    var lastEnrollments: [Enrollment] = []
    var lastWipes: Set<String> = []
    var lastSignedOut: Set<String> = []
    /// The newest pasteboard not yet written, and whether a write is scheduled (coalesced).
    let pendingPasteboard = Mutex()
    nonisolated(unsafe) var unsavedPasteboard: PasteboardState?
    /// Test-only (`Configuration.testFlip`): paste decisions turned round on their way out.
    var pasteFlip: PasteFlip?

    enum Handle {
        case publicListener, launcherListener, launcher(WireSocket), session(SessionID)
    }

    /// What other threads hand the loop.
    enum Mail: Sendable {
        case event(BrokerEvent)
        case opened(job: Int, fd: Int32)
        case encrypted(job: Int, fd: Int32)
        /// An app's hand-off whose installed program was looked up on the disk lane.
        case adopted(Adoption, connection: Int32, launcher: Int32, expected: InstalledProgram?)
        case reload(Tenant, ConditionalAccessSettings?)
        /// State writes done, by number (HeldReplies).
        case stateWritten([UInt64])
        case stop
    }

    public init(_ configuration: Configuration, tenant: Tenant, apps: [AppManifest], starter: AppStarter?,
                conditionalAccess: ConditionalAccessSettings? = nil, clock: any BrokerClock = MonotonicClock(), logger: Logger) throws {
        self.configuration = configuration
        self.logger = logger
        self.starter = starter
        self.clock = clock
        heldCiphertexts = HeldCiphertexts(byteLimit: configuration.limits.encryptedHeldPerApp)
        let dir = configuration.deviceDirectory
        // The device folder holds every account's key: root's own, or refused (TrustedPath).
        try TrustedPath.folder(dir).close()
        audit = try AuditTrail(folder: (dir as NSString).appendingPathComponent("audit"), maximumBytes: configuration.auditMaximumBytes,
                               maximumAge: configuration.auditMaximumAge, securityMaximumAge: configuration.securityAuditMaximumAge,
                               now: Self.auditTime(clock))
        store = try StateStore(path: (dir as NSString).appendingPathComponent("state.sqlite"))
        locations = try LocationStore(path: (dir as NSString).appendingPathComponent("locations"))
        let enrolled = try store.loadEnrollments(now: clock.now())
        let pasteboard = try store.loadPasteboard()
        // The wall time at which the broker's clock read zero: its time of day, virtual or not.
        core = BrokerCore(engine: PolicyEngine(tenant: tenant, apps: apps), catalog: apps, clock: clock,
                          epoch: Date().addingTimeInterval(-clock.now().timeInterval), limits: configuration.limits,
                          pasteboard: pasteboard, files: try store.loadFiles(),
                          enrollments: enrolled.enrollments, pendingWipes: enrolled.pendingWipes, signedOut: enrolled.signedOut,
                          conditionalAccess: conditionalAccess)
        core.appNames = configuration.appNames
        pasteFlip = configuration.testFlip.flatMap { $0.hasPrefix("paste") ? PasteFlip(text: pasteboard?.text, replies: $0 == "paste") : nil }
        loop = try EventLoop()
        store.reserveAhead = persistence
    }

    /// The audit's wall clock: the machine's, or under a virtual clock the time the broker
    /// started moved on as far as that clock, so `mamlaunch clock advance` ages the audit too.
    static func auditTime(_ clock: any BrokerClock) -> @Sendable () -> timespec {
        guard let manual = clock as? ManualClock else { return AuditLog.realTime }
        let start = AuditLog.realTime(), origin = manual.now()
        return {
            let (seconds, atto) = (manual.now() - origin).components
            let ns = Int(start.tv_nsec) + Int(atto / 1_000_000_000)
            return timespec(tv_sec: start.tv_sec + Int(seconds) + ns / 1_000_000_000, tv_nsec: ns % 1_000_000_000)
        }
    }

    /// Why the core refused a sign-in (its warning), for `mamlaunch signin` to say.
    static func signInRefusal(_ effects: [BrokerEffect]) -> String? {
        effects.lazy.compactMap { effect -> String? in
            if case .log(let l) = effect, l.level == .warning { return l.message.replacingOccurrences(of: "sign-in refused: ", with: "") }
            return nil
        }.first
    }

    // MARK: Life

    /// Binds the public and launcher sockets and starts the loop.
    public func start() throws {
        let publicFD = try Self.listen(configuration.publicSocket, mode: 0o666)
        let launcherFD = try Self.listen(configuration.launcherSocket, mode: 0o600)
        handles[publicFD] = .publicListener
        handles[launcherFD] = .launcherListener
        try loop.add(publicFD)
        try loop.add(launcherFD)
        let t = Thread { [self] in run() }
        t.name = "mambroker-loop"
        life.withLock { loopRuns = true }
        t.start()
        logger.info("broker serving", metadata: ["socket": "\(configuration.publicSocket)", "launcher": "\(configuration.launcherSocket)",
                                                 "device": "\(configuration.deviceDirectory)"])
    }

    /// Takes a new tenant between two events: a decision sees the old or the new policy.
    public func reload(_ tenant: Tenant, conditionalAccess: ConditionalAccessSettings? = nil) {
        loop.post(Mail.reload(tenant, conditionalAccess))
    }

    /// Stops serving, closes every connection, removes the sockets; returns once the loop ended.
    public func stop() {
        let running = life.withLock { () -> Bool in
            defer { loopRuns = false }
            return loopRuns
        }
        if running {
            loop.post(Mail.stop)
            loop.finished.wait()
        }
        persistence.sync {}
        unlink(configuration.publicSocket)
        unlink(configuration.launcherSocket)
        logger.info("broker stopped")
    }

    static func listen(_ path: String, mode: mode_t) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw BrokerError("socket: \(String(cString: strerror(errno)))") }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else { throw BrokerError("\(path): socket path too long") }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
            raw[bytes.count] = 0
        }
        // The socket's folder is root's (or sticky): in another user's, the new socket could be
        // swapped for a link before the chmod below, which follows it.
        do { try TrustedPath.checkFolder(holding: path) } catch {
            close(fd)
            throw BrokerError("refusing the socket \(error)")
        }
        unlink(path)
        let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        guard rc == 0, Glibc.listen(fd, 128) == 0 else {
            let e = String(cString: strerror(errno))
            close(fd)
            throw BrokerError("cannot listen on \(path): \(e)")
        }
        chmod(path, mode)
        return fd
    }

    // MARK: The loop

    private func run() {
        lastTick = MonotonicClock().now()
        var running = true
        while running {
            loop.wait { readable($0) }
            for mail in loop.takeMail() {
                switch mail {
                case let .event(.credentialChecked(job, matches)):
                    let effects = core.handle(.credentialChecked(job: job, matches: matches))
                    let signedIn = effects.contains { if case let .audit(a) = $0 { a.outcome == "signedIn" } else { false } }
                    let refusal = Self.signInRefusal(effects) ?? "see the broker's log"
                    apply(effects)
                    if let waiting = signInReplies.removeValue(forKey: job) {
                        try? LauncherMessage.controlReply(ok: signedIn, detail: signedIn ? "\(waiting.account) signed in to pid \(waiting.pid)"
                                                              : "\(waiting.account) was not signed in: \(refusal)").send(on: waiting.socket)
                    }
                case let .event(e): apply(core.handle(e))
                case let .opened(job, fd): apply(core.handle(.opened(job: job, .success(adopt(fd)))))
                case let .encrypted(job, fd): apply(core.handle(.encrypted(job: job, .success(adopt(fd)))))
                case let .adopted(a, connection, launcher, expected):
                    admit(a, connection: connection, launcher: launcher, expected: expected)
                    // The launcher back in the loop; what it sent meanwhile is read now.
                    if case let .launcher(socket)? = handles[launcher] {
                        try? loop.add(launcher)
                        serveLauncher(socket)
                    }
                case let .reload(tenant, access):
                    apply(core.reload(tenant, conditionalAccess: access))
                    log(LogLine(level: .info, message: "tenant reloaded", metadata: ["revision": "\(core.revision)"]))
                case let .stateWritten(writes): release(writes)
                case .stop: running = false
                }
            }
            let now = MonotonicClock().now()
            if now - lastTick >= .seconds(1) {
                lastTick = now
                apply(core.handle(.tick))
                auditRefusals()
                auditSecurityOverflow(endingBefore: Self.minute(), revision: core.revision)
                audit.expire()
            }
        }
        auditRefusals()
        auditSecurityOverflow(endingBefore: .max, revision: core.revision)
        for (fd, h) in handles {
            switch h {
            case .session: shutdown(fd, Int32(SHUT_RDWR))
            case let .launcher(socket): socket.close()
            case .publicListener, .launcherListener: close(fd)
            }
        }
        handles = [:]
        sockets.values.forEach { $0.close() }
        sockets = [:]
        signInReplies = [:]
        heldReplies.discard()
        descriptors.values.forEach { _ = close($0) }
        descriptors = [:]
        loop.finished.signal()
    }

    private func readable(_ fd: Int32) {
        guard let handle = handles[fd] else { return }
        switch handle {
        case .publicListener:
            for _ in 0..<16 {
                let conn = mam_accept(fd)
                guard conn >= 0 else { break }
                // A process that connects by itself is an unknown, unmanaged app.
                let pid = mam_peer_pid(conn)
                _ = open(conn, Peer(bundleID: "unknown.pid\(pid)", pid: pid, fromLauncher: false))
            }
        case .launcherListener:
            for _ in 0..<16 {
                let conn = mam_accept(fd)
                guard conn >= 0 else { break }
                setNonBlocking(conn)
                handles[conn] = .launcher(WireSocket(adopting: Descriptor(adopting: conn)))
                try? loop.add(conn)
            }
        case let .launcher(socket):
            serveLauncher(socket)
        case let .session(id):
            serveApp(id, fd)
        }
    }

    private func open(_ fd: Int32, _ peer: Peer) -> SessionID {
        setNonBlocking(fd)
        let id = SessionID(nextSession)
        nextSession += 1
        handles[fd] = .session(id)
        sockets[id] = WireSocket(adopting: Descriptor(adopting: fd))
        budgets[id] = appBudgets[peer.bundleID] ?? {
            let b = RequestBudget(app: peer.bundleID, perSecond: configuration.requestsPerSecond)
            appBudgets[peer.bundleID] = b
            return b
        }()
        try? loop.add(fd)
        apply(core.handle(.connected(id, peer)))
        return id
    }

    private func serveLauncher(_ socket: WireSocket) {
        for _ in 0..<16 {
            guard var raw = socket.receiveRaw(dontWait: true, buffer: receiveBuffer) else { closeLauncher(socket); return }
            if raw.wouldBlock { return }
            let message: LauncherMessage
            do {
                if let e = raw.error { throw e }
                message = try LauncherMessage.decode(raw.bytes)
                if message.carriesDescriptor != (raw.descriptor != nil) {
                    throw WireError(.missingDescriptor, "an adopt carries the app's connection, a violation nothing")
                }
            } catch {
                log(LogLine(level: .warning, message: "launcher sent a bad message; closing that launcher connection", metadata: ["error": "\(error)"]))
                closeLauncher(socket)
                return
            }
            switch message {
            case let .adopt(a):
                // A --user in one of the tenant's domains that the tenant does not know is a typo:
                // the app would run signed in as an outsider, unmanaged, with no word. Refused;
                // the launcher says why, stops the app and fails.
                if let account = a.account, let typo = core.unknownInOwnDomain(account) {
                    try? LauncherMessage.controlReply(ok: false, detail: "the broker refused \(a.bundleID): \(typo)").send(on: socket)
                    log(LogLine(level: .warning, message: "hand-off refused", metadata: ["app": "\(a.bundleID)", "reason": "\(typo)"]))
                    continue
                }
                guard let lookup = configuration.installedProgram else {
                    admit(a, connection: raw.descriptor.take()!.release(), launcher: socket.descriptor.rawValue, expected: nil)
                    continue
                }
                // The installed program's digest may have to be taken (at the first hand-off, or
                // after a rebuild): tens of milliseconds, done on the disk lane, not the loop.
                // Until it is back this launcher is out of the loop, so its later messages (an
                // app's end, a sign-in) still come after the adoption they follow.
                loop.remove(socket.descriptor.rawValue)
                let connection = raw.descriptor.take()!.release(), launcher = socket.descriptor.rawValue, loop = self.loop
                disk.async(for: "installed programs") {
                    loop.post(.adopted(a, connection: connection, launcher: launcher, expected: lookup(a.bundleID)))
                }
                return
            case let .advanceClock(ms):
                // Only a broker started with a virtual clock lets time be skipped.
                let reply: LauncherMessage
                if let manual = clock as? ManualClock {
                    manual.advance(by: .milliseconds(Int64(clamping: ms)))
                    apply(core.handle(.tick))
                    reply = .controlReply(ok: true, detail: "the broker's clock moved \(Duration.milliseconds(Int64(clamping: ms))) forward")
                } else {
                    reply = .controlReply(ok: false, detail: "this broker runs on the real clock; start it with --clock virtual to skip time")
                }
                try? reply.send(on: socket)
                log(LogLine(level: .info, message: "clock advance asked", metadata: ["milliseconds": "\(ms)", "done": "\(clock is ManualClock)"]))
            case .sync:
                // "Checked in" with no app running would tell the admin a new policy arrived
                // somewhere when it reached nobody.
                let running = core.serviceApps.sorted()
                guard !running.isEmpty else {
                    try? LauncherMessage.controlReply(ok: false, detail: "sync refused: no app with the SDK is running on this device; apps check in when they start").send(on: socket)
                    break
                }
                apply(core.handle(.sync))
                try? LauncherMessage.controlReply(ok: true, detail: "\(running.count) running app\(running.count == 1 ? "" : "s") checked in: \(running.joined(separator: ", "))").send(on: socket)
            case let .wipe(account, named):
                // The app as `mamlaunch run` names it (folder or bundle id), wiped under its own id.
                let app = named.map(core.installedBundleID(named:))
                if let refusal = core.wipeRefusal(account: account, app: app) {
                    try? LauncherMessage.controlReply(ok: false, detail: "wipe refused: \(refusal)").send(on: socket)
                    log(LogLine(level: .notice, message: "wipe refused", metadata: ["reason": "\(refusal)"]))
                    break
                }
                let targets = core.wipeTargets(account: account, app: app)
                apply(core.handle(.wipe(account: account, app: app)))
                try? LauncherMessage.controlReply(ok: true, detail: "wipe of \(account) issued to \(targets.joined(separator: ", ")); running apps have it now, the others when they start")
                    .send(on: socket)
            case let .signIn(pid, account, secret):
                // The launcher connection that handed the app over speaks for its user; another
                // one (`mamlaunch signin`) brings the account's credential.
                let mine = launcherOf.filter { $0.value == socket.descriptor.rawValue }.keys.first { core.pid(of: $0) == pid }
                let session = mine ?? launcherOf.keys.sorted().first { core.pid(of: $0) == pid }
                let reply: LauncherMessage
                if let typo = core.unknownInOwnDomain(account) {
                    reply = .controlReply(ok: false, detail: "signin refused: \(typo)")
                } else if let session {
                    let effects = core.handle(.signIn(session, account: account, secret: secret, sameLauncher: mine != nil))
                    // A password is checked on a worker: the answer waits for it, the loop does not.
                    for case let .checkCredential(job, _, _) in effects { signInReplies[job] = (socket, account, pid) }
                    let checking = effects.contains { if case .checkCredential = $0 { true } else { false } }
                    let refusal = Self.signInRefusal(effects)
                    apply(effects)
                    if checking { continue }
                    reply = .controlReply(ok: refusal == nil, detail: refusal.map { "\(account) was not signed in: \($0)" } ?? "\(account) signed in to pid \(pid)")
                } else {
                    reply = .controlReply(ok: false, detail: "no app with pid \(pid) was handed over by a launcher")
                }
                try? reply.send(on: socket)
            case .reloadTenant:
                // Read on the loop, as the file SIGHUP names is read on the main thread: a
                // launcher asks between experiments, not per request, and its next message must
                // see the new policy.
                let reply: LauncherMessage
                if let load = configuration.loadTenant {
                    do {
                        let (tenant, access) = try load()
                        apply(core.reload(tenant, conditionalAccess: access))
                        log(LogLine(level: .info, message: "tenant reloaded", metadata: ["revision": "\(core.revision)", "by": "launcher"]))
                        reply = .controlReply(ok: true, detail: "tenant reloaded: revision \(core.revision)")
                    } catch {
                        log(LogLine(level: .error, message: "tenant reload refused; the previous policy stays", metadata: ["reason": "\(error)"]))
                        reply = .controlReply(ok: false, detail: "tenant reload refused; the previous policy stays: \(error)")
                    }
                } else {
                    reply = .controlReply(ok: false, detail: "this broker was given no tenant file to read again")
                }
                try? reply.send(on: socket)
            case let .setDevice(change):
                let (ok, detail, effects) = core.changeDevice(change)
                apply(effects)
                try? LauncherMessage.controlReply(ok: ok, detail: detail).send(on: socket)
                log(LogLine(level: ok ? .info : .notice, message: ok ? "device changed" : "device change refused", metadata: ["detail": "\(detail)"]))
            case .restart, .ended:
                log(LogLine(level: .warning, message: "launcher sent a message only the broker sends; ignored", metadata: [:]))
            case .controlReply:
                log(LogLine(level: .warning, message: "launcher sent a reply, which only the broker sends; ignored", metadata: [:]))
            case let .violation(v):
                auditViolation(v)
                log(LogLine(level: .warning, message: "sandbox violation", metadata: [
                    "app": v.bundleID, "pid": "\(v.pid)", "syscall": v.syscall, "detail": v.detail ?? "",
                    "action": v.action == .killed ? "killed" : "denied", "time": v.time,
                ]))
            }
        }
    }

    /// Opens the session of an app the launcher handed over, once the installed program it
    /// claims (if any) is known.
    private func admit(_ a: Adoption, connection: Int32, launcher: Int32, expected: InstalledProgram?) {
        if let expected { core.installedPrograms[a.bundleID.lowercased()] = expected }
        let session = open(connection, Peer(bundleID: a.bundleID, pid: a.pid, account: a.account, fromLauncher: true,
                                            manifestDigest: a.manifestDigest, executableDigest: a.executableDigest,
                                            developer: a.developer, personal: a.personal))
        launcherOf[session] = launcher
        adoptedPid[session] = a.pid
    }

    private func closeLauncher(_ socket: WireSocket) {
        let fd = socket.descriptor.rawValue
        launcherOf = launcherOf.filter { $0.value != fd }
        adoptedPid = adoptedPid.filter { launcherOf[$0.key] != nil }
        // (A sign-in it waits for still completes; there is nobody left to answer.)
        signInReplies = signInReplies.filter { $0.value.socket !== socket }
        loop.remove(fd)
        handles[fd] = nil
        socket.close()
    }

    /// Frames one connection may have served in one turn of the loop before the others have
    /// theirs: epoll is level-triggered, so an app with more to say is back in the next turn,
    /// and a flooding app gets no more turns, nor frames per turn, than a quiet one.
    static let framesPerTurn = 8

    /// Serves an app's frames until its queue is empty or its turn is over. Each frame after the
    /// first is asked for straight away (a `recvmsg` that does not wait) rather than through
    /// `epoll_wait`: an app that sent its next request while its answer was being made, as a
    /// ping-pong does when both ends share a CPU, costs the loop two system calls a round trip,
    /// not three; one that did not costs one failed `recvmsg` before the loop waits again.
    /// After such a miss the next `skipsAfterMiss` turns of that descriptor serve one frame
    /// and leave any other to the next `epoll_wait` (level-triggered, so nothing waits longer
    /// than a turn): an app whose requests never overlap its answers stops paying the failed
    /// read every round trip; a flooding app never misses and is read on as before.
    private func serveApp(_ id: SessionID, _ fd: Int32) {
        let slot = Int(fd)
        if slot >= readAgainSkips.count { readAgainSkips += repeatElement(0, count: slot + 1 - readAgainSkips.count) }
        guard serveFrame(id) else { return }
        if readAgainSkips[slot] > 0 {
            readAgainSkips[slot] -= 1
            return
        }
        for n in 1..<Self.framesPerTurn {
            guard serveFrame(id) else {
                if n == 1 { readAgainSkips[slot] = Self.skipsAfterMiss }
                return
            }
        }
    }

    /// Per descriptor: the turns left that serve one frame without asking for another.
    private var readAgainSkips: [UInt8] = []
    static let skipsAfterMiss: UInt8 = 4

    /// Reads and handles one frame; false when there was none, or the connection is gone.
    private func serveFrame(_ id: SessionID) -> Bool {
        guard let socket = sockets[id] else { return false }
        guard var raw = socket.receiveRaw(dontWait: true, buffer: receiveBuffer) else {
            apply(core.handle(.disconnected(id)))
            drop(id, reason: nil)
            return false
        }
        if raw.wouldBlock { return false }
        if let budget = budgets[id], !budget.admit() {
            // Refused unread (a descriptor with it closes with `raw`): nothing decided, nothing
            // audited but the count.
            try? socket.send(Frame(id: Wire.frameID(raw.bytes) ?? 0, .error(code: .limitReached, detail: Self.overBudget)), wait: false)
            return true
        }
        if let e = raw.error {
            apply(core.handle(.badFrame(id, Wire.frameID(raw.bytes) ?? 0, e)))
            return true
        }
        let frame: Frame
        do { frame = try socket.decode(raw.bytes) } catch {
            apply(core.handle(.badFrame(id, Wire.frameID(raw.bytes) ?? 0, error)))
            return true
        }
        var attachment: Attachment?
        if let received = raw.descriptor.take() { attachment = adopt(received.release()) }
        apply(core.handle(.frame(id, frame, attachment)))
        return true
    }

    /// Gives a descriptor a token and finds out what the core needs to know about it.
    private func adopt(_ fd: Int32) -> Attachment {
        let token = nextToken
        nextToken += 1
        descriptors[token] = fd
        var size: Int64 = 0, allocated: Int64 = 0
        let regular = mam_regular_file(fd, &size, &allocated) == 1
        return Attachment(token: token, sealed: regular && SealedDocument.isSealed(FileDescriptor(rawValue: fd)), size: Int(size), allocated: Int(allocated))
    }

    func drop(_ id: SessionID, reason: String?) {
        // The launcher hears that this app's session is over, after any restart request for it:
        // then a launcher whose app has exited stops listening for one (RestartWatch).
        if let fd = launcherOf[id], case let .launcher(launcher)? = handles[fd], let pid = adoptedPid[id] {
            do { try LauncherMessage.ended(pid: pid).send(on: launcher) } catch {
                log(LogLine(level: .notice, message: "the launcher could not be told an app's session ended",
                            metadata: ["pid": "\(pid)", "error": error.description]))
            }
        }
        adoptedPid[id] = nil
        launcherOf[id] = nil
        refusedDeliveries[id] = nil
        budgets[id] = nil
        guard let socket = sockets.removeValue(forKey: id) else { return }
        let fd = socket.descriptor.rawValue
        loop.remove(fd)
        handles[fd] = nil
        shutdown(fd, Int32(SHUT_RDWR))
        socket.close()
        if let reason { log(LogLine(level: .notice, message: "connection closed", metadata: ["session": "\(id)", "reason": reason])) }
    }

    // MARK: Effects

    func apply(_ effects: [BrokerEffect]) {
        var shell = Shell(broker: self)
        core.carryOut(effects, on: &shell)
    }

    /// The sockets, files and workers the core's effects are carried out on: the core's own
    /// interpreter (`BrokerCore.carryOut`, which the embedded broker runs too) decides what
    /// follows from each. None of these touches `core`, which the interpreter holds meanwhile.
    private struct Shell: BrokerShell {
        let broker: Broker
        /// The newest state write this turn issued: the replies after it wait for it.
        var turnWrite: UInt64?

        func send(_ frame: Frame, to id: SessionID, attachment: Int?) -> SendResult {
            // Not `flipped(frame) ?? frame`: that copies the frame per reply.
            if let flip = broker.pasteFlip, flip.replies { return sendAsIs(flip.flipped(frame), to: id, attachment: attachment) }
            return sendAsIs(frame, to: id, attachment: attachment)
        }

        private func sendAsIs(_ frame: Frame, to id: SessionID, attachment: Int?) -> SendResult {
            guard let socket = broker.sockets[id] else { return .noConnection }
            if let write = broker.heldReplies.mustWait(id, turnWrite: turnWrite) {
                let copy = attachment.flatMap { broker.descriptors[$0] }.map { fcntl($0, F_DUPFD_CLOEXEC, 0) }
                broker.heldReplies.hold(.frame(frame, descriptor: copy), for: id, until: write)
                return .sent
            }
            do {
                try socket.send(frame, descriptor: attachment.flatMap { broker.descriptors[$0] }.map(FileDescriptor.init(rawValue:)), wait: false)
                return .sent
            } catch {
                return .failed(error.description)
            }
        }

        func deliver(_ frame: Frame, to id: SessionID, attachment: Int?) -> Bool {
            guard let socket = broker.sockets[id] else { return false }
            do {
                try socket.send(frame, descriptor: attachment.flatMap { broker.descriptors[$0] }.map(FileDescriptor.init(rawValue:)), wait: false)
                return true
            } catch {
                // Counted, and logged at the first ten and every tenfold count: a flood
                // must not turn into a flood of log lines.
                let n = (broker.refusedDeliveries[id] ?? 0) + 1
                broker.refusedDeliveries[id] = n
                if n <= 10 || BrokerCore.isPowerOfTen(n) {
                    broker.log(LogLine(level: .notice, message: "a delivery was refused: the receiver is not reading",
                                       metadata: ["session": "\(id)", "error": error.description, "refused": "\(n)"]))
                }
                return false
            }
        }

        func close(_ id: SessionID, reason: String?) {
            // After the replies held for it, not before them.
            if let write = broker.heldReplies.mustWait(id, turnWrite: nil) {
                broker.heldReplies.hold(.close(reason: reason), for: id, until: write)
            } else {
                broker.drop(id, reason: reason)
            }
        }
        func audit(_ entry: AuditEntry) {
            // Which log it goes to, asked once (its channel and outcome compared as text).
            let security = AuditTrail.isSecurityEvent(entry)
            guard broker.withinSecurityBudget(entry, security: security) else { return }
            let id = (try? broker.store.nextDecisionID()) ?? 0
            // Not `flipped(entry) ?? entry`: that copies the entry, every string retained, per decision.
            if let flip = broker.pasteFlip { broker.audit.append(flip.flipped(entry), id: id) } else {
                broker.audit.append(entry, id: id, security: security, requester: broker.budgets[entry.session]?.app)
            }
        }
        func log(_ line: LogLine) { broker.log(line) }

        mutating func persist(_ change: StateChange) {
            broker.pasteFlip?.copied(change)
            switch change {
            case let .pasteboard(state): broker.savePasteboard(state)
            case let .destroyKey(keyID):
                // Gone before the app hears of its wipe: the wipe notice waits for it.
                let write = broker.heldReplies.issue()
                turnWrite = write
                broker.destroyKey(keyID, write: write)
            case let .enrollments(list, wipes, signedOut):
                // Written before the app hears of it, and only when something changed: a repeat
                // (208) costs nothing, and what an app was told survives a kill.
                guard list != broker.lastEnrollments || wipes != broker.lastWipes || signedOut != broker.lastSignedOut else { return }
                broker.lastEnrollments = list
                broker.lastWipes = wipes
                broker.lastSignedOut = signedOut
                let write = broker.heldReplies.issue()
                turnWrite = write
                broker.saveEnrollments(list, wipes: wipes, signedOut: signedOut, now: broker.clock.now(), write: write)
            }
        }

        func startApp(bundleID: String) { broker.startApp(bundleID) }

        func restartApp(_ session: SessionID, pid: Int32) {
            // The launcher that adopted the app restarts it; its connection is still open
            // while it waits for the app.
            if let fd = broker.launcherOf[session], case let .launcher(socket)? = broker.handles[fd] {
                // Said as it went: a request the launcher's socket refused restarts nothing.
                do {
                    try LauncherMessage.restart(pid: pid).send(on: socket)
                    broker.log(LogLine(level: .info, message: "asked the launcher to restart an app", metadata: ["pid": "\(pid)"]))
                } catch {
                    broker.log(LogLine(level: .warning, message: "the launcher could not be asked to restart an app",
                                       metadata: ["pid": "\(pid)", "error": error.description]))
                }
            } else {
                broker.log(LogLine(level: .warning, message: "an app declined to restart, but its launcher is gone", metadata: ["pid": "\(pid)"]))
            }
        }

        // Off the loop: each job's result comes back through the loop's mail.
        func store(job: Int, attachment: Int, file: StoredFile, budget: String) -> BrokerEvent? {
            broker.storeFile(job, broker.descriptors[attachment] ?? -1, file, budget)
            return nil
        }
        func open(job: Int, key: StoredFileKey, budget: String) -> BrokerEvent? {
            broker.openFile(job, key, budget)
            return nil
        }
        func encrypt(job: Int, attachment: Int, keyID: String, budget: String, receiver: String) -> BrokerEvent? {
            broker.encrypt(job, broker.descriptors[attachment] ?? -1, keyID, budget, receiver: receiver)
            return nil
        }

        func checkCredential(job: Int, stored: String, secret: String) -> BrokerEvent? {
            let loop = broker.loop
            broker.credentials.async {
                loop.post(Mail.event(.credentialChecked(job: job, matches: Credential.matches(stored, password: secret))))
            }
            return nil
        }

        func key(_ keyID: String) -> [UInt8]? {
            // One small read (or the first write) of the state database, in its order.
            do { return try broker.persistence.sync { try broker.store.key(for: keyID) } } catch {
                broker.logger.error("an account key could not be read", metadata: ["error": "\(error)"])
                return nil
            }
        }

        func release(attachment: Int) { broker.descriptors.removeValue(forKey: attachment).map { _ = Glibc.close($0) } }
    }

    func log(_ line: LogLine) {
        var metadata: Logger.Metadata = [:]
        for (k, v) in line.metadata { metadata[k] = .string(LogText.escaped(v)) }
        let level: Logger.Level = line.level == .info ? .info : line.level == .notice ? .notice : line.level == .warning ? .warning : .error
        logger.log(level: level, "\(LogText.escaped(line.message))", metadata: metadata)
    }

    private func setNonBlocking(_ fd: Int32) { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK) }

    // MARK: Work off the loop

    private func savePasteboard(_ state: PasteboardState) {
        // Coalesced: a flood of copies costs one write at a time, the newest one.
        let schedule = pendingPasteboard.withLock { () -> Bool in
            let idle = unsavedPasteboard == nil
            unsavedPasteboard = state
            return idle
        }
        guard schedule else { return }
        persistence.async { [self] in
            guard let latest = pendingPasteboard.withLock({ () -> PasteboardState? in
                defer { unsavedPasteboard = nil }
                return unsavedPasteboard
            }) else { return }
            do { try store.savePasteboard(latest) } catch {
                logger.error("the pasteboard could not be saved", metadata: ["error": "\(error)"])
            }
        }
    }

    private func startApp(_ bundle: String) {
        guard let starter else {
            loop.post(Mail.event(.startFailed(bundleID: bundle, reason: "this broker has no launcher to start apps with")))
            return
        }
        starts.async { [loop] in
            if let reason = starter.start(bundleID: bundle) { loop.post(Mail.event(.startFailed(bundleID: bundle, reason: reason))) }
        }
    }

    private func storeFile(_ job: Int, _ fd: Int32, _ file: StoredFile, _ budget: String) {
        disk.async(for: budget) { [self] in
            var failure: String?
            do {
                try locations.store(file.key, from: fd, size: file.size)
                try store.saveFile(file)
            } catch { failure = "\(error)" }
            loop.post(Mail.event(.stored(job: job, error: failure)))
        }
    }

    private func openFile(_ job: Int, _ key: StoredFileKey, _ budget: String) {
        disk.async(for: budget) { [self] in
            do throws(LocationStore.Failure) {
                let fd = try locations.open(key)
                loop.post(Mail.opened(job: job, fd: fd))
            } catch {
                loop.post(Mail.event(.opened(job: job, .failure(JobFailure(error.description, missing: error.missing)))))
            }
        }
    }

    private func encrypt(_ job: Int, _ fd: Int32, _ keyID: String, _ budget: String, receiver: String) {
        crypto.async(for: budget) { [self] in
            // The broker's memory, not the receiver's, holds the ciphertext: its own quota first.
            if let refusal = heldCiphertexts.refusal(for: receiver, adding: SealedDocument.size(FileDescriptor(rawValue: fd))) {
                loop.post(Mail.event(.encrypted(job: job, .failure(JobFailure(refusal, limitReached: true)))))
                return
            }
            // Chunk by chunk straight into a new memfd: a large document costs one chunk of memory.
            let out = mam_memfd_sealable("mamlab-encrypted")
            do {
                guard out >= 0 else { throw BrokerError("memfd_create: \(String(cString: strerror(errno)))") }
                let key = try store.key(for: keyID)
                try DocumentCipher.seal(input: FileDescriptor(rawValue: fd), size: SealedDocument.size(FileDescriptor(rawValue: fd)), into: FileDescriptor(rawValue: out), key: key, keyID: keyID)
                guard SealedDocument.seal(FileDescriptor(rawValue: out)) else { throw BrokerError("the encrypted document could not be sealed") }
                // Sent as a read-only open of its own, which the quota can tell is still held.
                let sent = heldCiphertexts.keep(out, for: receiver)
                if sent != out { close(out) }
                loop.post(Mail.encrypted(job: job, fd: sent))
            } catch {
                if out >= 0 { close(out) }
                loop.post(Mail.event(.encrypted(job: job, .failure(JobFailure("\(error)")))))
            }
        }
    }
}
