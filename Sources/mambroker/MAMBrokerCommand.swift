import ArgumentParser
import Dispatch
import Foundation
import Glibc
import Logging
import MAMBroker
import MAMBrokerCore
import MAMCatalog
import MAMPolicy
import MAMWire
import SystemPackage

@main
struct MAMBrokerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mambroker",
        abstract: "The broker: the only channel between sandboxed apps.",
        discussion: """
            Serves apps on a public SOCK_SEQPACKET socket (a process that connects by itself is an unknown, \
            unmanaged app) and takes apps from the launcher on the launcher socket, with their bundle id and pid. \
            Routes URL opens, the pasteboard, Open-in and share, and storage locations; asks the policy engine \
            for every decision and audits each in DIR/audit (root's alone): audit.jsonl for decisions, security.jsonl for \
            refused keys, identities and sign-ins and sandbox violations, each rotated on its own past --audit-max-bytes \
            (eight older files kept) and aged on its own: a log is set aside once its first record is a quarter of \
            --audit-max-age (security.jsonl: --security-audit-max-age) old, and a kept log whose newest record is older \
            than that age is deleted. Records are stored into a shared mapping of the file, so they survive a kill -9; \
            read only as far as the header's "committed" says (docs/PROTOCOL.md, "The audit log"). \
            What must survive a restart lives in DIR/state.sqlite; saved files live under DIR/locations. \
            A URL for an app that is not running starts it with `mamlaunch run` (built beside mambroker).

            SIGHUP reloads the tenant atomically (an invalid file keeps the old policy and logs why), and so does the \
            launcher's reloadTenant message, answered once the new policy decides; SIGTERM and \
            SIGINT shut down cleanly, and so does closing the terminal it runs in (the hangup's \
            SIGHUP, told from a reload by the terminal being gone). Output nobody reads any more (`mambroker ... | head`) does not stop it: SIGPIPE \
            is ignored, and what it would have said is lost. An invalid tenant at start refuses to start with the file, path and reason. \
            One device directory has one broker: it holds DIR/mambroker.lock (flock) while it runs, and a second \
            broker on the same DIR exits 1 naming the first one's pid, without touching its sockets. \
            Every value that comes from an app or a manifest is escaped in the log.
            """
    )

    @Option(help: ArgumentHelp("The tenant file or a Graph tenant export (docs/POLICIES.md).", valueName: "FILE"))
    var tenant: String

    @Option(help: ArgumentHelp("The device directory: state, audit log, storage locations, sockets.", valueName: "DIR"))
    var device: String

    @Option(help: ArgumentHelp("The public socket (default: DIR/mambroker.sock).", valueName: "PATH"))
    var socket: String?

    @Option(help: ArgumentHelp("The launcher socket (default: DIR/launcher.sock).", valueName: "PATH"))
    var launcherSocket: String?

    @Option(help: ArgumentHelp("Folder of app manifests (default: the project's Apps/).", valueName: "DIR"))
    var apps: String?

    @Option(help: ArgumentHelp("Largest file one save may store, in bytes.", valueName: "BYTES"))
    var maxFileSize: Int = BrokerLimits().maximumFileSize

    @Option(help: ArgumentHelp("Bytes one app may keep in storage locations.", valueName: "BYTES"))
    var quotaPerApp: Int = BrokerLimits().quotaPerApp

    @Option(help: ArgumentHelp("Bytes of encrypted documents the broker made that one app may hold at once; beyond it the sender is refused (limitReached) until the receiver closes some.", valueName: "BYTES"))
    var encryptedHeldPerApp: Int = BrokerLimits().encryptedHeldPerApp

    @Option(help: ArgumentHelp("Size of an app's log in DIR/logs (an app the broker started) before it becomes <bundle id>.log.1; one older log is kept.", valueName: "BYTES"))
    var appLogMaxBytes: Int = RotatingLog.defaultLimit

    @Option(help: ArgumentHelp("Audit log size before it is rotated (4096 to 99999999).", valueName: "BYTES"))
    var auditMaxBytes: Int = 64 << 20

    @Option(help: ArgumentHelp("How long ordinary decisions are kept in the audit: a number and s, m, h or d (e.g. 30d).", valueName: "AGE"))
    var auditMaxAge: String = "30d"

    @Option(help: ArgumentHelp("How long security events (security.jsonl) are kept: at least --audit-max-age.", valueName: "AGE"))
    var securityAuditMaxAge: String = "365d"

    @Option(help: ArgumentHelp("Requests one app may make in a second, its connections together; past it a request is refused (limitReached) unread, and the refusals are counted in the audit once a second (channel rate).", valueName: "N"))
    var requestsPerSecond: Int = 2000

    /// Which clock the broker's core reads.
    enum ClockKind: String, ExpressibleByArgument, CaseIterable {
        case real, virtual
    }

    @Option(help: ArgumentHelp("real: the machine's clock; virtual: a clock that moves only when `mamlaunch clock advance` says (experiments and tests skip time).", valueName: "real|virtual"))
    var clock: ClockKind = .real

    @Flag(help: "Apps this broker starts run even when an attack class has no cover on this kernel (mamlaunch run's flag of the same name).")
    var allowWeakerSandbox = false

    @Option(help: "How much the broker says on standard error.")
    var logLevel: Logger.Level = .info

    /// Test-only, hidden: invert every decision on one channel (`paste`: the reply and the
    /// audit record; `paste-record`: the audit record alone), so that a test can show
    /// `mamlaunch matrix` catches a broker that disagrees with the engine, or with its own
    /// log. Only the one who starts the broker can set it; no message from an app reaches it.
    @Option(help: .hidden)
    var testFlip: String?

    func validate() throws {
        if let testFlip, testFlip != "paste", testFlip != "paste-record" { throw ValidationError("--test-flip: paste or paste-record") }
        guard maxFileSize > 0, quotaPerApp > 0, auditMaxBytes >= 4096, auditMaxBytes <= AuditFile.largest, requestsPerSecond > 0 else {
            throw ValidationError("--max-file-size, --quota-per-app and --requests-per-second must be positive, --audit-max-bytes from 4096 to \(AuditFile.largest)")
        }
        let ages = try (Self.age(auditMaxAge, option: "--audit-max-age"), Self.age(securityAuditMaxAge, option: "--security-audit-max-age"))
        guard ages.1 >= ages.0 else {
            throw ValidationError("--security-audit-max-age \(securityAuditMaxAge) is shorter than --audit-max-age \(auditMaxAge): security events are kept at least as long")
        }
    }

    /// An age: a positive whole number and its unit, s, m, h or d.
    static func age(_ text: String, option: String) throws -> Duration {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        guard let unit = text.last.flatMap({ units[$0] }), let n = Int64(text.dropLast()), n > 0, n <= 100 * 365 * 86_400 / unit else {
            throw ValidationError("\(option) \(text): use a positive whole number and s, m, h or d, at most 100 years (e.g. 30d)")
        }
        return .seconds(n * unit)
    }

    /// Before anything opens a file: a closed standard stream's number is never another file's
    /// (StandardStreams), as the apps this broker starts are given its streams through `run`.
    static func main() {
        StandardStreams.ensureOpen()
        main(nil)
    }

    func run() throws {
        // Output whose reader has gone (`mambroker ... | head`) must not end the broker and cut
        // off every app it serves: a write to it fails (EPIPE) instead, and the broker serves on.
        // Apps it starts do not inherit this: the sandbox starts them with every signal at its default.
        signal(SIGPIPE, SIG_IGN)
        // Signals are taken by sigwait on the main thread, not by handlers: block them before
        // any thread starts, so every thread inherits the mask and none is lost before the loop.
        var signals = sigset_t()
        sigemptyset(&signals)
        for s in [SIGHUP, SIGTERM, SIGINT] { sigaddset(&signals, s) }
        pthread_sigmask(SIG_BLOCK, &signals, nil)

        let level = logLevel
        LoggingSystem.bootstrap { label in
            var h = StreamLogHandler.standardError(label: label)
            h.logLevel = level
            return h
        }
        let logger = Logger(label: "mambroker")
        let broker: Broker
        let groups: AppGroups
        // A device folder this start makes is removed if the start fails (an invalid tenant, say):
        // a failed start leaves no folder with a lock in it behind. One that was there stays.
        var madeDevice = false
        do {
            // One device, one broker: a second broker would unlink and rebind the first one's
            // sockets and write the same state and audit log. The lock is taken before anything
            // in the folder is touched and held (the descriptor left open) for this process's life.
            madeDevice = !FileManager.default.fileExists(atPath: device)
            try DeviceLock.acquire(device: device)
            let appsDir = apps ?? Catalog.projectRoot()?.appendingPathComponent("Apps").path
            let installed = appsDir.map { Catalog.loadApps(in: URL(fileURLWithPath: $0)).apps } ?? []
            let appGroups = AppGroups(installed: installed)
            groups = appGroups
            let (tenant, access) = try Self.load(self.tenant, groups: appGroups)
            let manifests = installed.map(\.manifest)
            var limits = BrokerLimits()
            limits.maximumFileSize = maxFileSize
            limits.quotaPerApp = quotaPerApp
            limits.encryptedHeldPerApp = encryptedHeldPerApp
            var configuration = Broker.Configuration(deviceDirectory: device, publicSocket: socket, launcherSocket: launcherSocket,
                                                     limits: limits, auditMaximumBytes: auditMaxBytes)
            configuration.requestsPerSecond = requestsPerSecond
            configuration.auditMaximumAge = try Self.age(auditMaxAge, option: "--audit-max-age")
            configuration.securityAuditMaximumAge = try Self.age(securityAuditMaxAge, option: "--security-audit-max-age")
            configuration.testFlip = testFlip
            let tenantFile = self.tenant
            configuration.loadTenant = { try Self.load(tenantFile, groups: appGroups) }
            // An installed bundle id is the installed app only when the program is the one built
            // for it (beside mambroker): a digest per hand-off, cached while the file is unchanged.
            let digests = InstalledDigests(apps: installed)
            configuration.installedProgram = { digests.program(for: $0) }
            configuration.appNames = Dictionary(installed.map { ($0.name.lowercased(), $0.manifest.bundleID) }, uniquingKeysWith: { a, _ in a })
            let starter = LauncherStarter(launcherSocket: configuration.launcherSocket, deviceDirectory: device,
                                          appsDirectory: appsDir, allowWeaker: allowWeakerSandbox, logLimit: appLogMaxBytes)
            let brokerClock: any BrokerClock = clock == .virtual ? ManualClock() : MonotonicClock()
            broker = try Broker(configuration, tenant: tenant, apps: manifests, starter: starter, conditionalAccess: access,
                                clock: brokerClock, logger: logger)
            try broker.start()
        } catch {
            AuditLog.warn("mambroker: \(error)\n")
            if madeDevice, !(error is DeviceLock.Refused) { try? FileManager.default.removeItem(atPath: device) }
            throw ExitCode(1)
        }
        // SIGHUP is two things: `kill -HUP` asks for a reload; the kernel sends it too when the
        // terminal the broker runs in goes away, and then it is to end, as a shell's jobs do, not
        // to serve on with nowhere to say anything. A broker that had a terminal and has lost it
        // at the signal was hung up. Asked before "ready": whoever waits for that line may close
        // the terminal at once.
        let hadTerminal = Self.hasControllingTerminal()
        print("ready \(broker.configuration.publicSocket) \(broker.configuration.launcherSocket)")
        fflush(nil)
        while true {
            var received: Int32 = 0
            guard sigwait(&signals, &received) == 0 else { continue }
            if received == SIGHUP, hadTerminal, !Self.hasControllingTerminal() {
                logger.notice("the terminal went away (SIGHUP); shutting down")
                broker.stop()
                return
            }
            if received == SIGHUP {
                do {
                    let (t, access) = try Self.load(tenant, groups: groups)
                    broker.reload(t, conditionalAccess: access)
                } catch {
                    logger.error("tenant reload refused; the previous policy stays", metadata: ["reason": "\(error.description)"])
                }
            } else {
                broker.stop()
                return
            }
        }
    }
}

extension MAMBrokerCommand {
    /// The process has a controlling terminal it can still open (after a hangup it has none).
    static func hasControllingTerminal() -> Bool {
        let fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        close(fd)
        return true
    }

    /// The tenant and its conditional-access section (none: `nil`), each checked; a policy
    /// that targets an app group targets its members (`groups`), as the matrix and `explain` read it.
    static func load(_ path: String, groups: AppGroups) throws(LoadFailure) -> (Tenant, ConditionalAccessSettings?) {
        var tenant = try Catalog.loadTenant(path).tenant
        _ = Catalog.resolveAppGroups(&tenant, entries: groups.entries, installed: groups.installed)
        let access = try ConditionalAccessFile.load(try Catalog.read(path), file: Catalog.relative(path), tenant: tenant).settings
        return (tenant, access.policies.isEmpty && access.tenantId == nil ? nil : access)
    }
}

/// The device folder's lock: `flock` on DIR/mambroker.lock, with the holder's pid written in
/// it so that the broker refused can say who holds the device.
enum DeviceLock {
    struct Held: Error, CustomStringConvertible {
        let device: String
        let pid: String
        var description: String {
            "the device \(device) already has a broker (pid \(pid.isEmpty ? "unknown" : pid), lock \(device)/mambroker.lock); stop it first or use another --device"
        }
    }

    struct Refused: Error, CustomStringConvertible {
        let refusal: TrustedPath.Refusal
        var description: String { "refusing the device folder: \(refusal)" }
    }

    struct Failed: Error, CustomStringConvertible {
        let path: String
        let errno: Int32
        var description: String { "\(path): \(String(cString: strerror(errno)))" }
    }

    /// Never released: the kernel drops it when the process ends, however it ends. O_CLOEXEC so
    /// that the apps this broker starts do not inherit it and keep the device locked after it.
    static func acquire(device: String) throws {
        // The folder is made by this broker's user (root), or is already that user's alone:
        // one a local user made first would hold their files among root's keys.
        let folder: Int32
        do { folder = try TrustedPath.folder(device).release() } catch { throw Refused(refusal: error) }
        defer { close(folder) }
        let path = (device as NSString).appendingPathComponent("mambroker.lock")
        let fd = openat(folder, "mambroker.lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else { throw Failed(path: path, errno: errno) }
        do { try TrustedPath.checkOwnFile(FileDescriptor(rawValue: fd), shown: path) } catch {
            close(fd)
            throw Refused(refusal: error)
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let e = errno
            var buffer = [UInt8](repeating: 0, count: 32)
            let n = pread(fd, &buffer, buffer.count, 0)
            close(fd)
            guard e == EWOULDBLOCK else { throw Failed(path: path, errno: e) }
            let pid = String(decoding: buffer.prefix(max(0, n)), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            throw Held(device: device, pid: pid)
        }
        let line = "\(getpid())\n"
        _ = ftruncate(fd, 0)
        _ = line.withCString { pwrite(fd, $0, strlen($0), 0) }
    }
}

/// Starts an app through `mamlaunch run` (built beside mambroker), sandboxed, against this
/// broker; its output goes to DIR/logs/<bundle id>.log, bounded and root's alone (RotatingLog:
/// the app writes what it was sent, and a flood of URLs wrote 11.8 MiB/s into a 0644 file).
struct LauncherStarter: AppStarter {
    let launcherSocket: String
    let deviceDirectory: String
    let appsDirectory: String?
    /// The one flag every command that launches apps shares, passed on to `mamlaunch run`.
    var allowWeaker = false
    /// Bytes of one log file before it is rotated.
    var logLimit = RotatingLog.defaultLimit

    func start(bundleID: String) -> String? {
        let launcher = (Catalog.toolDirectory as NSString).appendingPathComponent("mamlaunch")
        guard FileManager.default.isExecutableFile(atPath: launcher) else { return "no mamlaunch beside mambroker" }
        let logs = (deviceDirectory as NSString).appendingPathComponent("logs")
        // The bundle id is the engine's (from a manifest the broker loaded), checked again here
        // because it becomes a file name.
        guard NameRules.isBundleID(bundleID) else { return "invalid bundle id" }
        let logPath = (logs as NSString).appendingPathComponent("\(bundleID).log")
        let log: Descriptor
        do { log = try RotatingLog.pipe(into: logPath, limit: logLimit) } catch { return "\(error)" }
        // The child has its own copy once it runs, when this one is closed: the log ends when
        // the child's copies close.
        let p = Process()
        p.executableURL = URL(fileURLWithPath: launcher)
        p.arguments = ["run", bundleID, "--broker", launcherSocket,
                       "--containers", (deviceDirectory as NSString).appendingPathComponent("containers")]
            + (allowWeaker ? ["--allow-weaker-sandbox"] : [])
        if let dir = appsDirectory {
            p.environment = ProcessInfo.processInfo.environment.merging(["MAMLAB_ROOT": (dir as NSString).deletingLastPathComponent]) { _, b in b }
        }
        p.standardInput = FileHandle.nullDevice
        let output = FileHandle(fileDescriptor: log.rawValue, closeOnDealloc: false)
        p.standardOutput = output
        p.standardError = output
        do { try p.run() } catch { return "mamlaunch did not start: \(error)" }
        log.close()
        return nil
    }
}

/// The installed apps' digests (ProgramDigest), each kept until its files change.
final class InstalledDigests: @unchecked Sendable {
    let apps: [String: CatalogApp]
    let lock = NSLock()
    var cache: [String: (stamp: String, program: InstalledProgram)] = [:]

    init(apps: [CatalogApp]) {
        self.apps = Dictionary(apps.map { ($0.manifest.bundleID.lowercased(), $0) }, uniquingKeysWith: { a, _ in a })
    }

    func program(for bundleID: String) -> InstalledProgram? {
        guard let app = apps[bundleID.lowercased()] else { return nil }
        let executable = app.builtExecutable() ?? "-"
        // Size, modification time and inode of both files: a rebuild or an edit is seen.
        let stamp = [app.file, executable].map { path -> String in
            var st = stat()
            return stat(path, &st) == 0 ? "\(st.st_ino):\(st.st_size):\(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)" : "-"
        }.joined(separator: "|")
        lock.lock()
        defer { lock.unlock() }
        if let c = cache[bundleID.lowercased()], c.stamp == stamp { return c.program }
        let manifest = ProgramDigest.realPath(app.file).flatMap(ProgramDigest.sha256(ofFile:))
        let program = InstalledProgram(manifestDigest: manifest, executableDigest: app.builtExecutable().flatMap(executableDigest))
        cache[bundleID.lowercased()] = (stamp, program)
        return program
    }

    /// Programs by file, not by app: a matrix's stand-ins are many bundle ids run by a few
    /// sample programs (18 MB each in a release build), each hashed once, not once per app.
    /// The file's identity and change time say it is the same bytes: a write changes both
    /// times, and no one can set the change time back.
    var programs: [String: (stamp: String, digest: String?)] = [:]

    func executableDigest(_ path: String) -> String? {
        guard let real = ProgramDigest.realPath(path) else { return nil }
        func stamp() -> String? {
            var st = stat()
            // A file another user can write is hashed every time (DigestMemo.vouches).
            guard stat(real, &st) == 0, DigestMemo.vouches(for: st) else { return nil }
            return DigestMemo.stamp(st)
        }
        let before = stamp()
        if let before, let known = programs[real], known.stamp == before { return known.digest }
        // Hashed by an earlier run (a broker's or the launcher's), and the file unchanged since.
        if let before, let remembered = DigestMemo.shared.recall(before) {
            programs[real] = (before, remembered)
            return remembered
        }
        let digest = ProgramDigest.sha256(ofFile: real)
        // Changed while it was read: not remembered.
        if let before, stamp() == before {
            programs[real] = (before, digest)
            if let digest { DigestMemo.shared.remember(before, digest) }
        }
        return digest
    }
}

/// `--log-level` takes swift-log's level names, and ArgumentParser lists them on a wrong one.
extension Logger.Level: @retroactive ExpressibleByArgument {}

/// What an app group of a policy can hold: the built-in catalog's entries and the installed apps.
struct AppGroups: Sendable {
    var entries: [CatalogEntry]
    var installed: [CatalogApp]

    init(installed: [CatalogApp]) {
        entries = Catalog.projectRoot().flatMap { try? Catalog.loadCatalog(Catalog.builtInCatalogPath(root: $0)) } ?? []
        self.installed = installed
    }
}
