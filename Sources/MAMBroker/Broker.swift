import CMAMWire
import Foundation
import Glibc
import Logging
import MAMCatalog
import MAMPolicy
import MAMWire

/// One connected app: who the launcher says it is (or an unknown app), and what it acts as now.
final class Session: @unchecked Sendable {
    let id: Int
    let bundleID: String
    let pid: Int32
    let manifest: AppManifest
    let socket: WireSocket
    var identity: Identity { didSet { cachedParty = nil } }
    let enrolled: Account?
    var conversation = Conversation()
    /// The party as the engine last built it, and for which tenant revision.
    var cachedParty: (revision: Int, party: Party)?

    init(id: Int, bundleID: String, pid: Int32, manifest: AppManifest, socket: WireSocket, identity: Identity, enrolled: Account?) {
        self.id = id
        self.bundleID = bundleID
        self.pid = pid
        self.manifest = manifest
        self.socket = socket
        self.identity = identity
        self.enrolled = enrolled
    }
}

/// The broker: the only channel between apps. It asks the engine for every decision, delivers
/// what is allowed, and writes each decision to the audit log.
public final class Broker: @unchecked Sendable {
    public struct Configuration: Sendable {
        public var tenantPath: String
        public var deviceDirectory: String
        public var publicSocket: String
        public var launcherSocket: String
        public var appsDirectory: String?

        public init(tenantPath: String, deviceDirectory: String, publicSocket: String? = nil, launcherSocket: String? = nil,
                    appsDirectory: String? = nil) {
            self.tenantPath = tenantPath
            self.deviceDirectory = deviceDirectory
            self.publicSocket = publicSocket ?? (deviceDirectory as NSString).appendingPathComponent("mambroker.sock")
            self.launcherSocket = launcherSocket ?? (deviceDirectory as NSString).appendingPathComponent("launcher.sock")
            self.appsDirectory = appsDirectory
        }
    }

    public let configuration: Configuration
    let logger: Logger
    let lock = NSLock()
    var engine: PolicyEngine
    public private(set) var revision = 1
    var catalog: [AppManifest]
    var sessions: [Int: Session] = [:]
    var nextSession = 1
    var nextBrokerFrame: UInt32 = 0x8000_0000
    var pasteboard: (item: PasteboardItem, text: String, types: [String], owner: AuditLog.Party)?
    var changeCount: UInt32 = 0
    /// Exports the broker asked a source app for, by the id it used: who asked, with which frame.
    var pendingImports: [UInt32: (requester: Int, frameID: UInt32, source: Int, contentType: String)] = [:]
    /// URLs waiting for an app the broker asked the launcher to start, by bundle id (lower-cased).
    var pendingURLs: [String: [(url: String, sender: String?)]] = [:]
    let audit: AuditLog
    let store: StateStore
    private var listeners: [Int32] = []
    private var stopping = false

    public init(_ configuration: Configuration, logger: Logger) throws {
        self.configuration = configuration
        self.logger = logger
        try FileManager.default.createDirectory(atPath: configuration.deviceDirectory, withIntermediateDirectories: true)
        // One folder per storage location; those that belong to an account get one per account when used.
        for name in ["localDrive", "oneDriveForBusiness", "sharePoint", "box", "dropbox", "googleDrive", "photos", "camera",
                     "accountDocument", "other"] {
            try FileManager.default.createDirectory(atPath: (configuration.deviceDirectory as NSString).appendingPathComponent("locations/\(name)"),
                                                    withIntermediateDirectories: true)
        }
        let loaded = try Self.loadTenant(configuration.tenantPath)
        var apps: [AppManifest] = []
        if let dir = configuration.appsDirectory ?? Catalog.projectRoot()?.appendingPathComponent("Apps").path {
            apps = Catalog.loadApps(in: URL(fileURLWithPath: dir)).apps.map(\.manifest)
        }
        catalog = apps
        engine = PolicyEngine(tenant: loaded, apps: apps)
        audit = try AuditLog(path: (configuration.deviceDirectory as NSString).appendingPathComponent("audit.jsonl"))
        store = try StateStore(path: (configuration.deviceDirectory as NSString).appendingPathComponent("state.sqlite"))
        try restorePasteboard()
    }

    static func loadTenant(_ path: String) throws -> Tenant {
        do {
            return try Catalog.loadTenant(path).tenant
        } catch {
            throw BrokerError(error.description)
        }
    }

    /// Reloads the tenant atomically: a decision sees the old or the new policy, never a mix; an
    /// invalid file keeps the old policy and says why.
    @discardableResult
    public func reload() -> Result<Int, BrokerError> {
        do {
            let tenant = try Self.loadTenant(configuration.tenantPath)
            lock.lock()
            engine = PolicyEngine(tenant: tenant, apps: catalog)
            revision += 1
            let r = revision
            lock.unlock()
            logger.info("tenant reloaded", metadata: ["revision": "\(r)"])
            return .success(r)
        } catch let e as BrokerError {
            logger.error("tenant reload refused; the previous policy stays", metadata: ["reason": "\(e.description)"])
            return .failure(e)
        } catch {
            return .failure(BrokerError("\(error)"))
        }
    }

    // MARK: Sockets

    /// Binds the public and launcher sockets and starts serving.
    public func start() throws {
        let publicFD = try listen(configuration.publicSocket, mode: 0o666)
        let launcherFD = try listen(configuration.launcherSocket, mode: 0o600)
        listeners = [publicFD, launcherFD]
        spawn("accept-public") { [self] in acceptLoop(publicFD, launcher: false) }
        spawn("accept-launcher") { [self] in acceptLoop(launcherFD, launcher: true) }
        logger.info("broker serving", metadata: ["socket": "\(configuration.publicSocket)", "launcher": "\(configuration.launcherSocket)",
                                                 "device": "\(configuration.deviceDirectory)"])
    }

    /// Stops accepting, closes every connection, removes the sockets.
    public func stop() {
        lock.lock()
        stopping = true
        let all = Array(sessions.values)
        lock.unlock()
        for fd in listeners { shutdown(fd, Int32(SHUT_RDWR)); close(fd) }
        for s in all { shutdown(s.socket.fd, Int32(SHUT_RDWR)) }
        unlink(configuration.publicSocket)
        unlink(configuration.launcherSocket)
        logger.info("broker stopped")
    }

    private func listen(_ path: String, mode: mode_t) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BrokerError("socket: \(String(cString: strerror(errno)))") }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else { throw BrokerError("\(path): socket path too long") }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
            raw[bytes.count] = 0
        }
        unlink(path)
        let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        guard rc == 0, Glibc.listen(fd, 64) == 0 else {
            let e = String(cString: strerror(errno))
            close(fd)
            throw BrokerError("cannot listen on \(path): \(e)")
        }
        chmod(path, mode)
        return fd
    }

    private func spawn(_ name: String, _ body: @escaping @Sendable () -> Void) {
        let t = Thread(block: body)
        t.name = name
        t.start()
    }

    private func acceptLoop(_ fd: Int32, launcher: Bool) {
        while true {
            let conn = mam_accept(fd)
            if conn < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            if launcher {
                spawn("launcher-\(conn)") { [self] in serveLauncher(WireLauncherSocket(fd: conn)) }
            } else {
                // A process that connects by itself is an unknown, unmanaged app.
                let pid = mam_peer_pid(conn)
                let manifest = AppManifest(bundleID: "unknown.pid\(pid)")
                let session = register(manifest: manifest, pid: pid, socket: WireSocket(fd: conn), account: nil)
                spawn("app-\(session.id)") { [self] in serve(session) }
            }
        }
    }

    /// Registers an app the launcher handed over (or an unknown one), with its starting identity.
    func register(manifest: AppManifest, pid: Int32, socket: WireSocket, account: String?) -> Session {
        lock.lock()
        defer { lock.unlock() }
        let identity = account.map { engine.tenant.identity(named: $0) } ?? engine.defaultIdentity(for: manifest)
        let probe = engine.party(manifest, identity: identity)
        let session = Session(id: nextSession, bundleID: manifest.bundleID, pid: pid, manifest: manifest, socket: socket,
                              identity: identity, enrolled: probe.enrolled)
        nextSession += 1
        sessions[session.id] = session
        logger.info("app connected", metadata: ["app": "\(manifest.bundleID)", "pid": "\(pid)", "session": "\(session.id)",
                                                "identity": "\(identity)", "managed": "\(probe.isManaged)"])
        return session
    }

    func manifest(for bundleID: String) -> AppManifest {
        catalog.first { $0.bundleID.lowercased() == bundleID.lowercased() } ?? AppManifest(bundleID: bundleID)
    }

    /// The launcher connection: `adopt` messages with the app's end of its pair, and violations.
    private func serveLauncher(_ launcher: WireLauncherSocket) {
        while let (object, fd) = launcher.receive() {
            guard let type = object["type"] as? String else { fd.map { _ = close($0) }; break }
            switch type {
            case "adopt":
                guard let fd, let bundle = object["bundleId"] as? String, let pid = object["pid"] as? Int else {
                    logger.warning("launcher sent an adopt without its descriptor, bundle id or pid; closing that launcher connection")
                    fd.map { _ = close($0) }
                    launcher.close()
                    return
                }
                let session = register(manifest: manifest(for: bundle), pid: Int32(pid), socket: WireSocket(fd: fd),
                                       account: object["account"] as? String)
                spawn("app-\(session.id)") { [self] in serve(session) }
            case "violation":
                logger.warning("sandbox violation", metadata: [
                    "app": "\(object["bundleId"] ?? "?")", "pid": "\(object["pid"] ?? "?")", "syscall": "\(object["syscall"] ?? "?")",
                    "path": "\(object["path"] ?? "")", "action": "\(object["action"] ?? "?")", "time": "\(object["time"] ?? "")",
                ])
                fd.map { _ = close($0) }
            default:
                logger.warning("launcher sent an unknown message", metadata: ["type": "\(type)"])
                fd.map { _ = close($0) }
            }
        }
        launcher.close()
    }

    /// One app's connection: decode strictly, keep the order, answer; on any protocol error send
    /// the error and close this connection only.
    func serve(_ session: Session) {
        defer { disconnect(session) }
        while let received = session.socket.receive() {
            let frame: Frame
            switch received.frame {
            case let .failure(e):
                received.descriptor.map { _ = close($0) }
                refuse(session, id: 0, e)
                return
            case let .success(f):
                frame = f
            }
            do {
                try session.conversation.accept(frame, hasDescriptor: received.descriptor != nil)
            } catch {
                received.descriptor.map { _ = close($0) }
                refuse(session, id: frame.id, error)
                return
            }
            if case .bye = frame.message { return }
            lock.lock()
            let outcome = handle(frame, descriptor: received.descriptor, from: session)
            lock.unlock()
            // The broker's copy of a passed descriptor is closed once it has been forwarded.
            received.descriptor.map { _ = close($0) }
            if case let .failure(e) = outcome {
                refuse(session, id: frame.id, e)
                if e.code != .notAllowed && e.code != .unknownTarget { return }
            }
        }
    }

    func refuse(_ session: Session, id: UInt32, _ error: WireError) {
        logger.notice("protocol error", metadata: ["app": "\(session.bundleID)", "pid": "\(session.pid)", "error": "\(error)"])
        try? session.socket.send(Frame(id: id, .error(code: error.code, detail: error.detail)), wait: false)
    }

    private func disconnect(_ session: Session) {
        lock.lock()
        sessions[session.id] = nil
        // Imports waiting on this app as their source end now, and say so.
        for (key, p) in pendingImports where p.source == session.id || p.requester == session.id {
            pendingImports[key] = nil
            if p.source == session.id, let requester = sessions[p.requester] {
                try? requester.socket.send(Frame(id: p.frameID, .error(code: .unknownTarget, detail: "\(session.bundleID) went away before it exported")), wait: false)
            }
        }
        lock.unlock()
        session.socket.close()
        logger.info("app disconnected", metadata: ["app": "\(session.bundleID)", "pid": "\(session.pid)"])
    }

    /// How many connections are being served (for tests and `status`).
    public var connectionCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return sessions.count
    }
}

/// The launcher's connection speaks JSON objects, one per packet, with an optional descriptor.
struct WireLauncherSocket {
    let fd: Int32
    func receive() -> ([String: Any], Int32?)? {
        let socket = WireSocket(fd: fd)
        guard let raw = socket.receiveRaw() else { return nil }
        guard let object = try? JSONSerialization.jsonObject(with: Data(raw.bytes)) as? [String: Any] else {
            raw.descriptor.map { _ = Glibc.close($0) }
            return nil
        }
        return (object, raw.descriptor)
    }
    func close() { _ = Glibc.close(fd) }
}
