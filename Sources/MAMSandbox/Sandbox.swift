import CMAMSandbox
import CSeccomp
import Foundation
import Glibc

/// A violation of the sandbox, reported by the supervisor.
public struct Violation: Sendable, CustomStringConvertible {
    public var bundleID: String
    public var pid: Int32
    public var syscall: String
    public var path: String?
    public var action: String   // "denied" or "killed"
    public var time: Date

    public var description: String {
        let at = ISO8601DateFormatter().string(from: time)
        return "\(at) sandbox violation: \(bundleID) (pid \(pid)) \(syscall)\(path.map { " \($0)" } ?? "") \(action)"
    }
}

/// Everything one launch needs.
public struct LaunchConfiguration: Sendable {
    public var bundleID: String
    public var executable: String
    public var arguments: [String]
    public var environment: [String: String]
    /// The app's own directory: its working directory and the only place it may write.
    public var container: String
    /// The launcher's end of nothing: this is the app's end of the broker connection.
    public var brokerDescriptor: Int32?
    public var standardInput: Int32?
    public var standardOutput: Int32?
    public var standardError: Int32?
    public var limits: ResourceLimits
    /// Run with what the kernel offers even if a protection is missing (logged at every launch).
    public var allowWeaker: Bool
    /// Read-only paths besides the defaults (a user's app may need its resources).
    public var extraReadOnly: [String]

    public init(bundleID: String, executable: String, arguments: [String] = [], environment: [String: String] = [:],
                container: String, brokerDescriptor: Int32? = nil, limits: ResourceLimits = ResourceLimits(),
                allowWeaker: Bool = false, extraReadOnly: [String] = []) {
        self.bundleID = bundleID
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.container = container
        self.brokerDescriptor = brokerDescriptor
        self.limits = limits
        self.allowWeaker = allowWeaker
        self.extraReadOnly = extraReadOnly
    }
}

/// Resource limits per app; `nil` keeps the launcher's own.
public struct ResourceLimits: Sendable, Equatable {
    public var processes: UInt64? = 64
    public var addressSpace: UInt64? = 4 << 30
    public var openFiles: UInt64? = 256
    public var fileSize: UInt64? = 256 << 20
    public var coreDumps: UInt64? = 0
    public init() {}
}

public struct LaunchError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// What the kernel offers, for `mamlaunch doctor` and for refusing weak launches.
public struct SandboxSupport: Sendable {
    public var landlockABI: Int?
    public var seccompFilter: Bool
    public var seccompNotify: Bool
    public var libseccompVersion: String

    public static func probe() -> SandboxSupport {
        let version = seccomp_version_string()
        let api = mam_seccomp_api_level()
        let filter = mam_seccomp_filters_supported() != 0
        return SandboxSupport(landlockABI: LandlockPolicy.kernelABI(), seccompFilter: filter, seccompNotify: api >= 6,
                              libseccompVersion: version)
    }

    /// What is missing for the full sandbox, in words.
    public var missing: [String] {
        var out: [String] = []
        if landlockABI == nil { out.append("Landlock (kernel built without it, or not in the lsm= list)") }
        if let abi = landlockABI, abi < 6 { out.append("Landlock ABI 6 (abstract-socket and signal scoping; the kernel has ABI \(abi))") }
        if !seccompFilter { out.append("seccomp filters") }
        if !seccompNotify { out.append("seccomp user notification (libseccomp API level 6 or a newer kernel)") }
        return out
    }
}

/// A running sandboxed app.
public final class SandboxedApp: @unchecked Sendable {
    public let pid: Int32
    public let bundleID: String
    public let weakened: [String]
    private let supervisor: Supervisor?

    init(pid: Int32, bundleID: String, weakened: [String], supervisor: Supervisor?) {
        self.pid = pid
        self.bundleID = bundleID
        self.weakened = weakened
        self.supervisor = supervisor
    }

    /// Waits for the app to end; returns its exit status (128 + signal when killed).
    public func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        supervisor?.stop()
        if status & 0x7f == 0 { return (status >> 8) & 0xff }
        return 128 + (status & 0x7f)
    }

    /// Signals the app's whole process group.
    public func terminate(_ signal: Int32 = SIGTERM) { kill(-pid, signal) }
}

public enum Sandbox {
    /// Launches `config` confined. `report` receives every violation, on the supervisor's thread.
    public static func launch(_ config: LaunchConfiguration, report: @escaping @Sendable (Violation) -> Void) throws -> SandboxedApp {
        let support = SandboxSupport.probe()
        var weakened = support.missing
        if !weakened.isEmpty && !config.allowWeaker {
            throw LaunchError("cannot sandbox \(config.bundleID): missing \(weakened.joined(separator: "; ")); pass --allow-weaker-sandbox to run with less")
        }
        guard FileManager.default.isExecutableFile(atPath: config.executable) else {
            throw LaunchError("\(config.executable): not an executable file")
        }
        let program = support.seccompNotify && support.seccompFilter ? try SeccompProgram.shared() : nil
        if program == nil { weakened.append("no seccomp filter") }
        let landlock = support.landlockABI.map {
            LandlockPolicy.forApp(executable: config.executable, container: config.container, abi: $0, extraReadOnly: config.extraReadOnly)
        }

        // Root launches apps as nobody: limits on processes do not bind root, and DAC is one more wall.
        let dropIDs = geteuid() == 0
        if dropIDs { _ = chown(config.container, 65534, 65534) }

        var env = config.environment
        if config.brokerDescriptor != nil { env["MAMLAB_BROKER_FD"] = String(MAM_BROKER_FD) }
        env["MAMLAB_BUNDLE_ID"] = config.bundleID
        env["MAMLAB_CONTAINER"] = config.container
        env["HOME"] = config.container
        env["TMPDIR"] = config.container
        // The Swift runtime's crash reporter would exec a helper: a sandboxed app may not.
        env["SWIFT_BACKTRACE"] = "enable=no"

        let argv = [config.executable] + config.arguments
        let envp = env.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        var rlimits: [mam_rlimit] = []
        func limit(_ resource: Int32, _ value: UInt64?) {
            if let v = value { rlimits.append(mam_rlimit(resource: resource, soft: rlim_t(v), hard: rlim_t(v))) }
        }
        // RLIMIT_NPROC counts every process of the user: for a user other than nobody, the
        // allowance comes on top of what that user already runs.
        limit(mam_rlimit_nproc, config.limits.processes.map { dropIDs ? $0 : $0 + UInt64(processCount(uid: getuid())) })
        limit(mam_rlimit_as, config.limits.addressSpace)
        limit(mam_rlimit_nofile, config.limits.openFiles)
        limit(mam_rlimit_fsize, config.limits.fileSize)
        limit(mam_rlimit_core, config.limits.coreDumps)

        var result = mam_spawn_result()
        var error = [CChar](repeating: 0, count: 256)
        let rc: Int32 = withCStrings(argv) { cArgv in
            withCStrings(envp) { cEnv in
                withCStrings(landlock?.rules.map(\.path) ?? []) { rulePaths in
                    let rules = (landlock?.rules ?? []).enumerated().map { mam_landlock_rule(path: rulePaths[$0.offset], access: $0.element.access) }
                    return rules.withUnsafeBufferPointer { rulesBuf in
                        rlimits.withUnsafeBufferPointer { limitsBuf in
                            (program?.bytes ?? []).withUnsafeBytes { bpf in
                                config.executable.withCString { exe in
                                    config.container.withCString { container in
                                        var c = mam_spawn_config()
                                        c.executable = exe
                                        c.argv = UnsafePointer(cArgv)
                                        c.envp = UnsafePointer(cEnv)
                                        c.stdin_fd = config.standardInput ?? -1
                                        c.stdout_fd = config.standardOutput ?? -1
                                        c.stderr_fd = config.standardError ?? -1
                                        c.broker_fd = config.brokerDescriptor ?? -1
                                        c.container = container
                                        c.change_ids = dropIDs ? 1 : 0
                                        c.uid = 65534
                                        c.gid = 65534
                                        c.rlimits = limitsBuf.baseAddress
                                        c.rlimit_count = Int32(limitsBuf.count)
                                        if let landlock {
                                            c.landlock_abi = Int32(landlock.abi)
                                            c.landlock_handled_fs = landlock.handledFilesystem
                                            c.landlock_handled_net = landlock.handledNetwork
                                            c.landlock_scoped = landlock.scoped
                                            c.landlock_rules = rulesBuf.baseAddress
                                            c.landlock_rule_count = Int32(rulesBuf.count)
                                        }
                                        if program != nil {
                                            c.seccomp_program = bpf.baseAddress
                                            c.seccomp_length = UInt16(bpf.count / 8)
                                        }
                                        return mam_spawn(&c, &result, &error, error.count)
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        guard rc == 0 else { throw LaunchError("cannot launch \(config.bundleID): \(cText(error))") }

        var supervisor: Supervisor?
        if result.notify_fd >= 0, let program {
            supervisor = Supervisor(fd: result.notify_fd, appPID: result.pid, bundleID: config.bundleID,
                                    container: config.container, names: program.numbers, report: report)
            supervisor?.start()
        }
        // The status pipe closes when exec succeeds; anything written to it is why it did not.
        var message = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 256)
        while true {
            let n = read(result.status_fd, &buffer, buffer.count)
            if n > 0 { message += buffer[0..<n]; continue }
            if n < 0 && errno == EINTR { continue }
            break
        }
        close(result.status_fd)
        if !message.isEmpty {
            var status: Int32 = 0
            waitpid(result.pid, &status, 0)
            supervisor?.stop()
            throw LaunchError("cannot sandbox \(config.bundleID): \(String(decoding: message, as: UTF8.self))")
        }
        return SandboxedApp(pid: result.pid, bundleID: config.bundleID, weakened: weakened, supervisor: supervisor)
    }
}

private func seccomp_version_string() -> String {
    guard let raw = mam_seccomp_version() else { return "unknown" }
    let v = raw.assumingMemoryBound(to: scmp_version.self).pointee
    return "\(v.major).\(v.minor).\(v.micro)"
}

/// Calls `body` with a NULL-terminated C array of the strings.
func withCStrings<R>(_ strings: [String], _ body: (UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
    let pointers = strings.map { strdup($0) } + [nil]
    defer { pointers.forEach { free($0) } }
    var array = pointers
    return array.withUnsafeMutableBufferPointer { body($0.baseAddress!) }
}

/// The text of a NUL-terminated C buffer.
func cText(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// How many processes `uid` runs now.
func processCount(uid: uid_t) -> Int {
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return 0 }
    var count = 0
    var st = stat()
    for e in entries where e.first?.isNumber == true {
        if stat("/proc/\(e)", &st) == 0 && st.st_uid == uid { count += 1 }
    }
    return count
}
