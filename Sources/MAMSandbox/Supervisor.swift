import CMAMSandbox
import Foundation
import MAMWire
import Glibc

/// Answers the seccomp notifications of one app: lets its own exec through once, checks
/// write-opens against the container, refuses or kills on the listed calls, and reports each
/// refusal by name. The app cannot silence it: the kernel blocks the call until it answers.
final class Supervisor: @unchecked Sendable {
    let fd: Int32
    private let appPID: Int32
    private let bundleID: String
    /// The one exec the app's process makes, the launcher's: of this path, or (`byDescriptor`)
    /// of the launcher's open descriptor of it, an `execveat` with an empty path.
    private let executable: String
    private let byDescriptor: Bool
    let container: String
    private let names: [Int32: String]
    /// The app has a PID namespace of its own: every pid it can name is one of its own processes.
    private let ownPIDNamespace: Bool
    private let report: @Sendable (Violation) -> Void
    private var thread: Thread?
    private var execAllowed = true
    /// Signalled when the loop has ended: every report it had to make has been made.
    private let ended = DispatchSemaphore(value: 0)

    init(fd: Int32, appPID: Int32, bundleID: String, executable: String, byDescriptor: Bool = false, container: String, names: [Int32: String], ownPIDNamespace: Bool,
         report: @escaping @Sendable (Violation) -> Void) {
        self.ownPIDNamespace = ownPIDNamespace
        self.fd = fd
        self.appPID = appPID
        self.bundleID = bundleID
        self.executable = executable
        self.byDescriptor = byDescriptor
        self.container = (container as NSString).standardizingPath
        self.names = names
        self.report = report
    }

    func start() {
        let t = Thread { [self] in self.loop() }
        t.name = "mam-supervisor-\(appPID)"
        thread = t
        t.start()
    }

    // No stop(): the listener is not closed from outside. The loop thread may be between two
    // receives, and a number closed under it is the next app's listener a moment later (the next
    // launch takes the lowest free number), whose exec it would then answer as this app's second
    // exec, EPERM (issue 20: one launcher restart in a hundred failed so). The loop ends, and
    // closes the listener itself, when the kernel hangs it up: once nothing runs under the
    // filter, which in the app's own PID namespace is as soon as the app has gone.

    /// Answers the first notification on the caller's thread: the app's own exec, the only
    /// call between the filter and the app. Answering it here, rather than after waking a new
    /// thread, takes a scheduler round trip off every launch.
    /// `pidfd`: the app's process, whose end ends the wait (a dead child keeps the listener open
    /// until it is reaped, and the launcher reaps it only after this).
    func serveFirst(pidfd: Int32) {
        var n = mam_notification()
        while mam_notify_receive_or_exit(fd, pidfd, &n) != 0 {
            if errno == EINTR { continue }
            return  // the child died before its exec: the status pipe says why
        }
        handle(n, performs: false)
    }

    /// Waits (at most `seconds`) for the loop to end, which it does once nothing runs under the
    /// filter: a call refused just before the app exited is reported before the launcher goes.
    func waitUntilEnded(seconds: Double) {
        guard thread != nil else { return }
        _ = ended.wait(timeout: .now() + seconds)
    }

    private func loop() {
        // Only this thread closes the listener, after its last use of the number.
        defer {
            close(fd)
            ended.signal()
        }
        // The calls performed for the app set its umask: on this thread only (perform.c).
        let ownFS = mam_private_fs() == 0
        var n = mam_notification()
        while true {
            if mam_notify_receive(fd, &n) != 0 {
                // ENOENT: the asker died between poll and receive; anything else (the hang-up
                // once nothing runs under the filter) ends the watch.
                if errno == EINTR || errno == ENOENT { continue }
                return
            }
            handle(n, performs: ownFS)
        }
    }

    /// Whether the notification still stands for a call that waits: checked after reading the
    /// asker's memory. Until the answer the asker cannot run, but it can die (its pid then
    /// names another process, whose memory was read) or, on kernels without
    /// WAIT_KILLABLE_RECV, be interrupted and make the call again under a new notification.
    /// Either way what was read is no one's call, and it is not answered.
    func stillAsked(_ n: mam_notification) -> Bool {
        mam_notify_valid(fd, n.id) != 0
    }

    /// `performs`: whether this thread may perform calls for the app (it has a umask of its
    /// own); only the launcher's first answer, the exec, is given on another.
    private func handle(_ n: mam_notification, performs: Bool) {
        let name = names[n.nr] ?? SeccompProgram.name(of: n.nr)
        let pid = Int32(bitPattern: n.pid)
        switch name {
        case "execve", "execveat":
            let path = string(pid, argument(n, name == "execve" ? 0 : 1))
            // Not the asker's path, or a call made again: the one exec is not spent on it.
            guard stillAsked(n) else { return }
            // The first exec is the launcher's own, of the app's executable; for a script the
            // kernel starts its #! interpreter inside that same call. Nothing else ever execs.
            let first = execAllowed
            execAllowed = false
            let own = byDescriptor
                ? name == "execveat" && path == "" && Int32(truncatingIfNeeded: argument(n, 4)) & atEmptyPath != 0
                : path == executable
            if first && pid == appPID && own {
                _ = mam_notify_continue(fd, n.id)
            } else {
                _ = mam_notify_deny(fd, n.id, EPERM)
                violation(pid, name, path, .denied)
            }
        case "openat2" where !mayWrite(openHowAt: argument(n, 2), pid: pid):
            // Its flags are in memory the filter cannot read, so every openat2 comes here, and a
            // read-only one cannot be let through: another thread could make it a write after
            // this look. Landlock judges reads, which the supervisor, not under Landlock itself,
            // cannot make for the app: ENOSYS, as a kernel without openat2 answers, and callers
            // fall back to openat, which the filter sees.
            guard stillAsked(n) else { return }
            _ = mam_notify_deny(fd, n.id, ENOSYS)
        case "open", "openat", "openat2", "creat":
            // Only opens that may write reach here (the filter checks their flags, and openat2's
            // are read just above): they must stay in the container, and are performed.
            if performs {
                perform(name, n, pid: pid)
            } else {
                _ = mam_notify_deny(fd, n.id, EPERM)
            }
        case "kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_send_signal":
            if name == "pidfd_send_signal" {
                _ = mam_notify_deny(fd, n.id, EPERM)
                violation(pid, name, nil, .denied)
                return
            }
            let target = Int32(truncatingIfNeeded: argument(n, 0))
            let inside = ownPIDNamespace || target == 0 || target == -appPID || target == appPID || getpgid(abs(target)) == appPID
            if inside {
                _ = mam_notify_continue(fd, n.id)
            } else {
                _ = mam_notify_deny(fd, n.id, EPERM)
                violation(pid, name, "pid \(target)", .denied)
            }
        case "prctl":
            let option = Int32(truncatingIfNeeded: argument(n, 0))
            _ = mam_notify_deny(fd, n.id, EPERM)
            violation(pid, name, SyscallPolicy.refusedPrctl.first { $0.option == option }?.name ?? "option \(option)", .denied)
        case "clone":
            // Only clones that make a namespace reach here (the filter checks the flags).
            let flags = Int32(truncatingIfNeeded: argument(n, 0))
            kill(pid, SIGKILL)
            _ = mam_notify_deny(fd, n.id, EPERM)
            let named = SyscallPolicy.namespaceFlags.filter { flags & $0.flag != 0 }.map(\.name).joined(separator: "|")
            violation(pid, name, named, .killed)
        case "fcntl" where SyscallPolicy.refusedFcntl.contains { $0.command == Int32(truncatingIfNeeded: argument(n, 1)) }:
            let command = Int32(truncatingIfNeeded: argument(n, 1))
            _ = mam_notify_deny(fd, n.id, EPERM)
            violation(pid, name, SyscallPolicy.refusedFcntl.first { $0.command == command }?.name, .denied)
        default:
            // (Only fcntl's lock commands reach here: the filter checks the command.)
            if name == "fcntl" || SyscallPolicy.confined.contains(name) {
                if performs {
                    perform(name, n, pid: pid)
                } else {
                    _ = mam_notify_deny(fd, n.id, EPERM)
                }
                return
            }
            switch SyscallPolicy.action(for: name) {
            case let .deny(code)?:
                _ = mam_notify_deny(fd, n.id, code)
                violation(pid, name, name.hasPrefix("socket") ? family(argument(n, 0)) : nil, .denied)
            case .kill?, nil:
                // Kill first, so the call never returns to the app; then release the notification.
                kill(pid, SIGKILL)
                _ = mam_notify_deny(fd, n.id, EPERM)
                violation(pid, name, nil, .killed)
            }
        }
    }

    private func family(_ domain: UInt64) -> String {
        switch Int32(truncatingIfNeeded: domain) {
        case AF_UNIX: return "AF_UNIX"
        case AF_INET: return "AF_INET"
        case AF_INET6: return "AF_INET6"
        case AF_NETLINK: return "AF_NETLINK"
        case AF_PACKET: return "AF_PACKET"
        default: return "family \(domain)"
        }
    }

    func beneath(_ path: String, _ base: String) -> Bool {
        path == base || path.hasPrefix(base.hasSuffix("/") ? base : base + "/")
    }

    func argument(_ n: mam_notification, _ i: Int) -> UInt64 {
        withUnsafeBytes(of: n.args) { $0.load(fromByteOffset: i * 8, as: UInt64.self) }
    }

    /// Refusals so far, by call: the report names the first ten of each and then every tenfold
    /// count, as the broker logs refused requests. An app looping on a refused call would
    /// otherwise have the launcher and the broker write about it as fast as it can ask (18,705
    /// lines in 1.5 s).
    private var refusals: [String: Int] = [:]

    func violation(_ pid: Int32, _ syscall: String, _ path: String?, _ action: Violation.Action) {
        let n = refusals[syscall, default: 0] + 1
        refusals[syscall] = n
        guard n <= 10 || Self.isPowerOfTen(n) else { return }
        let counted = n <= 10 ? path : (path.map { $0 + " " } ?? "") + "(\(syscall) refusal \(n) of this app: the first ten and every tenfold count are reported)"
        report(Violation(bundleID: bundleID, pid: pid, syscall: syscall, detail: counted, action: action,
                         time: ISO8601DateFormatter().string(from: Date())))
    }

    static func isPowerOfTen(_ n: Int) -> Bool {
        var n = n
        while n >= 10 && n % 10 == 0 { n /= 10 }
        return n == 1
    }

    func string(_ pid: Int32, _ address: UInt64) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        guard mam_read_string(pid, address, &buffer, buffer.count) >= 0 else { return nil }
        return cText(buffer)
    }

    /// Whether the `struct open_how` at `address` asks for a write, a creation or a truncation
    /// (or cannot be read: then it is judged as a write).
    private func mayWrite(openHowAt address: UInt64, pid: Int32) -> Bool {
        let mem = open("/proc/\(pid)/mem", O_RDONLY | O_CLOEXEC)
        guard mem >= 0 else { return true }
        defer { close(mem) }
        var flags: UInt64 = 0
        guard pread(mem, &flags, 8, off_t(Int64(bitPattern: address))) == 8 else { return true }
        let f = Int32(truncatingIfNeeded: flags)
        return f & O_ACCMODE != O_RDONLY || f & (O_CREAT | O_TRUNC) != 0
    }

    /// The container (however its path is spelled) or /dev/null.
    func isOwn(_ file: String?) -> Bool {
        guard let file else { return false }
        return file == "/dev/null" || beneath(file, container)
    }
}
