import CMAMSandbox
import CSeccomp
import Foundation
import Glibc
import MAMPolicy
import MAMWire
import SystemPackage

/// A violation of the sandbox, reported by the supervisor: the same value the launcher hands
/// the broker (`MAMWire.SandboxViolation`).
public typealias Violation = SandboxViolation

/// Everything one launch needs.
public struct LaunchConfiguration: Sendable {
    public var bundleID: String
    public var executable: String
    public var arguments: [String]
    public var environment: [String: String]
    /// The folder that holds every app's container; the app's own is `bundleID` directly
    /// beneath it, its working directory and the only place it may write.
    public var containersRoot: String
    /// The app's end of the broker connection, borrowed: the child gets its own copy, and the
    /// caller closes this one once the app is launched.
    public var brokerDescriptor: FileDescriptor?
    /// The app's standard input: `/dev/null` when nil (the launcher passes its own only when it
    /// is not a terminal). Borrowed, as are output and error: the child gets its own copies.
    public var standardInput: FileDescriptor?
    /// Standard output and error: the launcher's own when nil.
    public var standardOutput: FileDescriptor?
    public var standardError: FileDescriptor?
    public var limits: ResourceLimits
    /// Run with what the kernel offers even if a protection is missing (logged at every launch).
    public var allowWeaker: Bool
    /// Read-only paths besides the defaults (a user's app may need its resources).
    public var extraReadOnly: [String]
    /// Folders the app must not even see (the broker's device folder): empty in its mount namespace.
    public var hidden: [String]
    /// The folder of the app's own files (its executable's, or its script's), readable and never
    /// writable; nil grants only the executable itself.
    public var appFolder: String?
    /// The executable, opened: when given, the app is this file (`execveat` of the descriptor),
    /// not whatever `executable` names by the time of the exec, so the launcher's digest of it is
    /// a digest of what runs. A native program only: a `#!` script run from a descriptor would
    /// hand its interpreter a /dev/fd name the sandbox does not show. Borrowed: the caller
    /// keeps it open past the launch (its digest is taken from it) and across restarts.
    public var executableDescriptor: FileDescriptor?

    public var container: String { (containersRoot as NSString).appendingPathComponent(bundleID) }

    public init(bundleID: String, executable: String, arguments: [String] = [], environment: [String: String] = [:],
                containersRoot: String, brokerDescriptor: FileDescriptor? = nil, limits: ResourceLimits = ResourceLimits(),
                allowWeaker: Bool = false, extraReadOnly: [String] = [], hidden: [String] = []) {
        self.bundleID = bundleID
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.containersRoot = containersRoot
        self.brokerDescriptor = brokerDescriptor
        self.limits = limits
        self.allowWeaker = allowWeaker
        self.extraReadOnly = extraReadOnly
        self.hidden = hidden
    }
}

/// Resource limits per app; `nil` lifts one.
public struct ResourceLimits: Sendable, Equatable {
    // Per process (setrlimit).
    public var processes: UInt64? = 64
    public var addressSpace: UInt64? = 4 << 30
    public var openFiles: UInt64? = 256
    public var fileSize: UInt64? = 256 << 20
    public var coreDumps: UInt64? = 0
    // Per app, everything it starts included (its cgroup and its container).
    /// Bytes of memory: anonymous, page cache, tmpfs and memfd pages (the container's too).
    public var memory: UInt64? = 1 << 30
    /// Processes and threads at once.
    public var tasks: UInt64? = 128
    /// CPUs' worth of time (0.5: half of one CPU).
    public var cpu: Double? = 1
    /// Bytes in the container (a tmpfs of this size); nil: the on-disk folder, unbounded and kept.
    public var disk: UInt64? = 256 << 20
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
    /// Root able to use its privileges: namespaces, uids of the launcher's range, cgroups and
    /// mounts need it.
    public var privileged: Bool
    /// Why a launcher running as root still cannot isolate an app (a container without
    /// CAP_SYS_ADMIN, a /proc it may not mount): `privileged` is then false.
    public var isolationProblem: String?
    /// The namespaces of `/proc/self/ns` this kernel has, of those the sandbox uses.
    public var namespaces: [String]
    public var cgroups: Result<CgroupLayout, LaunchError>

    public init(landlockABI: Int?, seccompFilter: Bool, seccompNotify: Bool, libseccompVersion: String, privileged: Bool,
                namespaces: [String], cgroups: Result<CgroupLayout, LaunchError>, isolationProblem: String? = nil) {
        self.isolationProblem = isolationProblem
        self.landlockABI = landlockABI
        self.seccompFilter = seccompFilter
        self.seccompNotify = seccompNotify
        self.libseccompVersion = libseccompVersion
        self.privileged = privileged
        self.namespaces = namespaces
        self.cgroups = cgroups
    }

    /// Which layers cover each attack class on this kernel.
    public var containment: Containment { Containment(self) }

    /// What this kernel offers does not change while the launcher runs: probed once.
    public static let current = probe()

    public static let usedNamespaces = ["pid", "mnt", "ipc", "net", "uts"]

    public static func probe() -> SandboxSupport {
        let version = seccomp_version_string()
        let api = mam_seccomp_api_level()
        let filter = mam_seccomp_filters_supported() != 0
        let namespaces = usedNamespaces.filter { access("/proc/self/ns/\($0)", F_OK) == 0 }
        let problem = geteuid() == 0 ? isolationTrial(namespaces: namespaces) : nil
        return SandboxSupport(landlockABI: LandlockPolicy.kernelABI(), seccompFilter: filter, seccompNotify: api >= 6,
                              libseccompVersion: version, privileged: geteuid() == 0 && problem == nil, namespaces: namespaces,
                              cgroups: CgroupLayout.probe(), isolationProblem: problem)
    }

    /// Root is not enough (root in a container usually lacks CAP_SYS_ADMIN): the capabilities
    /// a launch uses, and its namespaces, mounts and change of uid tried in a child. Nil when
    /// all of it works; else what failed, with the remedy.
    static func isolationTrial(namespaces: [String]) -> String? {
        let flags = Namespaces(procNames: namespaces).intersection(Sandbox.namespaces).rawValue
        var why = [CChar](repeating: 0, count: 256)
        guard mam_probe_isolation(flags, AppUser.first, &why, why.count) != 0 else { return nil }
        return cText(why)
    }

    /// What is missing for the full sandbox, in words.
    public var missing: [String] {
        var out: [String] = []
        if landlockABI == nil { out.append("Landlock (kernel built without it, or not in the lsm= list)") }
        if let abi = landlockABI, abi < 6 { out.append("Landlock ABI 6 (abstract-socket and signal scoping; the kernel has ABI \(abi))") }
        if !seccompFilter { out.append("seccomp filters") }
        if !seccompNotify { out.append("seccomp user notification (libseccomp API level 6 or a newer kernel)") }
        if !privileged {
            out.append(isolationProblem.map(Containment.privilegeLack) ?? "root (each app's own uid, PID, mount, IPC and network namespaces and cgroup limits need it; run mamlaunch as root)")
        } else {
            let absent = Self.usedNamespaces.filter { !namespaces.contains($0) }
            if !absent.isEmpty { out.append("namespaces: \(absent.joined(separator: ", "))") }
            if case let .failure(why) = cgroups { out.append("cgroup limits (\(why.description))") }
        }
        return out
    }

    /// The app gets namespaces, its own uid and cgroups only with all of them at hand.
    var isolates: Bool { privileged && namespaces.count == Self.usedNamespaces.count }
}

/// A running sandboxed app.
public final class SandboxedApp: @unchecked Sendable {
    public let pid: Int32
    public let bundleID: String
    public let weakened: [String]
    /// The uid it runs under.
    public let uid: uid_t
    private let supervisor: Supervisor?
    private let user: AppUser?
    private let claim: ContainerClaim?
    private let cgroup: AppCgroup?

    init(pid: Int32, bundleID: String, weakened: [String], uid: uid_t, supervisor: Supervisor?, user: AppUser?, claim: ContainerClaim?,
         cgroup: AppCgroup?) {
        self.pid = pid
        self.bundleID = bundleID
        self.weakened = weakened
        self.uid = uid
        self.supervisor = supervisor
        self.user = user
        self.claim = claim
        self.cgroup = cgroup
    }

    /// Waits for the app to end without reaping it: its pid stays taken (a zombie) until `wait`,
    /// so whatever still acts on that pid (a late restart request that kills it) cannot reach
    /// another process that was given the pid again.
    public func waitUntilExited() {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
    }

    /// Whether the app has ended by `deadline` (looked at without reaping it, as
    /// `waitUntilExited`). Asked every millisecond: a caller asks once it has reason to think
    /// the app is ending (its output closed), when it nearly always already has.
    public func hasExited(by deadline: Date) -> Bool {
        while true {
            var info = siginfo_t()
            let rc = waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT)
            if rc == 0, info._sifields._sigchld.si_pid == pid { return true }
            // Not a child of this process any more (reaped): nothing is left to wait for.
            if rc < 0 && errno == ECHILD { return true }
            if Date() >= deadline { return false }
            usleep(1_000)
        }
    }

    /// Waits for the app to end; returns its exit status (128 + signal when killed). In its
    /// own PID namespace, the app's end is everything's end: the kernel kills what it started
    /// before this returns.
    public func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // A call refused as the app ended is still being reported: the report is not lost
        // with the launcher (an app cannot silence one by exiting at once).
        supervisor?.waitUntilEnded(seconds: 2)
        cgroup?.remove()
        claim?.release()
        user?.release()
        if status & 0x7f == 0 { return (status >> 8) & 0xff }
        return 128 + (status & 0x7f)
    }

    /// Signals the app's whole process group. As process 1 of its namespace the app ignores
    /// signals it has no handler for, SIGKILL excepted.
    public func terminate(_ signal: Int32 = SIGTERM) { kill(-pid, signal) }
}

public enum Sandbox {
    /// Namespaces every app gets when the launcher is root.
    /// (The network namespace is the launcher's empty one, joined rather than made: EmptyNetwork.)
    static let namespaces: Namespaces = [.pid, .mount, .ipc, .uts]

    /// Launches `config` confined. `report` receives every violation, on the supervisor's thread.
    public static func launch(_ config: LaunchConfiguration, report: @escaping @Sendable (Violation) -> Void) throws -> SandboxedApp {
        // A relative executable is the caller's: the child is in its container by its exec.
        var config = config
        if !config.executable.hasPrefix("/") {
            config.executable = (FileManager.default.currentDirectoryPath as NSString).appendingPathComponent(config.executable)
        }
        if let problem = AppManifest.bundleIDProblem(config.bundleID) {
            throw LaunchError("cannot launch: bundle id \"\(config.bundleID.prefix(80))\" \(problem)")
        }
        let support = SandboxSupport.current
        // Refused only when an attack class has no layer left (Containment); a missing layer
        // that only repeats another's cover is no reason.
        let containment = support.containment
        var weakened = containment.uncovered.map { "\($0.attack) uncovered" }
        if let refusal = containment.refusal, !config.allowWeaker {
            throw LaunchError("cannot sandbox \(config.bundleID): \(refusal); pass --allow-weaker-sandbox to run with less")
        }
        guard FileManager.default.isExecutableFile(atPath: config.executable) else {
            throw LaunchError("\(config.executable): not an executable file")
        }
        // A script runs under the interpreter on its #! line, in the same exec.
        let interpreter: String?
        do { interpreter = try Shebang.interpreter(of: config.executable) } catch {
            throw LaunchError("cannot launch \(config.bundleID): \(error.description)")
        }
        let isolate = support.isolates
        let program = support.seccompNotify && support.seccompFilter ? try SeccompProgram.shared() : nil
        if program == nil { weakened.append("no seccomp filter") }

        // The container: opened beneath its root, never through a link or "..". The root is
        // root's own or refused: in another user's folder, that user could rename one app's
        // kept container to another's bundle id and hand its files over.
        do { try TrustedPath.folder(config.containersRoot).close() } catch {
            throw LaunchError("refusing the containers folder: \(error)")
        }
        guard let root = LandlockPolicy.realPath(config.containersRoot) else { throw LaunchError("\(config.containersRoot): cannot resolve") }
        let container = (root as NSString).appendingPathComponent(config.bundleID)
        let containerFD = try Containers.open(root: root, bundleID: config.bundleID)
        defer { close(containerFD) }

        // Root gives each app a uid of its own, a cgroup and namespaces. The cgroup is made and
        // joined while the child sets up its mounts (Placement).
        let user = isolate ? try AppUser.acquire() : nil
        var placement: Placement?
        var claim: ContainerClaim?
        var handedOver = false
        defer { if !handedOver { placement?.cgroup?.closeDescriptors(); placement?.cgroup?.remove(); claim?.release(); user?.release() } }
        // The on-disk folder is the app's only when it keeps its container there; otherwise it
        // gets a tmpfs and the folder, perhaps a running instance's, is left alone.
        let keepsOnDisk = isolate && config.limits.disk == nil
        if keepsOnDisk { claim = try ContainerClaim.take(containerFD, path: container, bundleID: config.bundleID) }
        if isolate, case let .success(layout) = support.cgroups {
            placement = Placement(layout: layout, bundleID: config.bundleID, limits: config.limits)
            // v1: made now and joined by the child itself (mam_spawn_config.join_fds).
            if case .v1 = layout {
                placement?.cgroup = try AppCgroup.create(layout, bundleID: config.bundleID, limits: config.limits, selfJoin: true)
            }
            // Settled before the clone: the launcher may have to move itself into a leaf of its
            // cgroup first (Delegation), which frees that cgroup only while no child shares it.
            if case .v2 = layout { _ = try Delegation.base() }
        }
        let network = isolate ? try EmptyNetwork.open() : -1
        defer { if network >= 0 { close(network) } }
        let uid = user?.uid ?? getuid()
        if let user, keepsOnDisk {
            guard fchownat(containerFD, "", user.uid, user.uid, atEmptyPath) == 0,
                  chmod("/proc/self/fd/\(containerFD)", 0o700) == 0 else {
                throw LaunchError("cannot hand \(container) to uid \(user.uid): \(String(cString: strerror(errno)))")
            }
            // What a kept container holds from an earlier run under another app uid.
            ContainerOwner.hand(containerFD, to: user.uid)
        }
        var hidden: [String] = []
        if isolate {
            // Other apps' containers, the broker's folder and POSIX shared memory: absent from the
            // app's root (AppRoot), and covered by an empty folder where a folder it is shown
            // holds one, so it cannot stat, watch or name them.
            for path in [root, "/dev/shm"] + config.hidden {
                guard let real = LandlockPolicy.realPath(path), real != "/" else { continue }
                if hidden.contains(where: { LandlockPolicy.beneath(real, $0) }) { continue }
                hidden.removeAll { LandlockPolicy.beneath($0, real) }
                hidden.append(real)
            }
            for file in [config.executable] + (interpreter.map { [$0] } ?? []) {
                let real = LandlockPolicy.realPath(file) ?? file
                if let cover = hidden.first(where: { LandlockPolicy.beneath(real, $0) }) {
                    throw LaunchError("cannot launch \(file): it lies in \(cover), which apps may not see")
                }
            }
        }
        var appFolder: String?
        if let folder = config.appFolder {
            guard let real = LandlockPolicy.realPath(folder) else { throw LaunchError("cannot launch \(config.bundleID): \(folder): cannot resolve") }
            if let problem = AppFolder.problem(real, hidden: hidden + [root]) {
                throw LaunchError("cannot launch \(config.bundleID): \(problem)")
            }
            appFolder = real
        }
        // An isolated app gets a root of its own holding only what it runs and reads, and its
        // container at an app-side path (AppRoot): every path the app, its Landlock rules and
        // the supervisor use is a path in that root.
        let libraries = LandlockPolicy.libraryDirectories(for: config.executable)
        let appContainer = isolate ? AppRoot.container : container
        var appRoot = AppRoot()
        if isolate {
            // A script's interpreter also at the path its #! line names (`/usr/bin/python3`, a
            // link to python3.11): the kernel looks that path up in the app's root.
            let named = interpreter == nil ? nil : try? Shebang.named(of: config.executable)
            let files = [config.executable] + ([interpreter, named ?? nil].compactMap { $0 }) + (appFolder.map { [$0] } ?? [])
                + libraries + config.extraReadOnly + AppRoot.systemFiles
            appRoot = AppRoot.plan(needed: files, hidden: hidden, rootLinks: AppRoot.hostRootLinks)
        }
        // A script is executed by path: its real one, the path the app's root shows it at (a
        // folder on the way may be a link the root does not have: `.build/debug`).
        let execPath = isolate ? LandlockPolicy.realPath(config.executable) ?? config.executable : config.executable
        let landlock = support.landlockABI.map {
            var policy = LandlockPolicy.forApp(executable: config.executable, container: container, abi: $0, interpreter: interpreter,
                                               appFolder: appFolder, extraReadOnly: config.extraReadOnly, libraries: libraries)
            policy.rules = policy.rules.map { $0.path == container ? (path: appContainer, access: $0.access) : $0 }
            return policy
        }
        let tmpfs = isolate ? config.limits.disk.map { "size=\($0),nr_inodes=65536,mode=0700,uid=\(uid),gid=\(uid)" } : nil

        var env = config.environment
        if config.brokerDescriptor != nil { env["MAMLAB_BROKER_FD"] = String(MAM_BROKER_FD) }
        env["MAMLAB_BUNDLE_ID"] = config.bundleID
        env["MAMLAB_CONTAINER"] = appContainer
        env["HOME"] = appContainer
        env["TMPDIR"] = appContainer
        // The Swift runtime's crash reporter would exec a helper: a sandboxed app may not.
        env["SWIFT_BACKTRACE"] = "enable=no"
        // libdispatch raises a worker thread's priority, which the app's uid may not, and then
        // logs that to syslog: a socket the filter refuses, reported as a violation at every
        // start of every app that links it. Its log could never reach syslog from here (there is
        // no /dev/log in the sandbox), so turning it off loses nothing and keeps a violation
        // line meaning the app itself reached out.
        env["LIBDISPATCH_LOG"] = "NO"

        let argv = [config.executable] + config.arguments
        let envp = env.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        var limits: [LaunchPlan.Limit] = []
        func limit(_ resource: Int32, _ value: UInt64?) {
            if let v = value { limits.append(LaunchPlan.Limit(resource: resource, value: v)) }
        }
        // RLIMIT_NPROC counts every process of the user: for the invoking user (no uid of its
        // own), the allowance comes on top of what that user already runs.
        limit(mam_rlimit_nproc, config.limits.processes.map { isolate ? $0 : $0 + UInt64(processCount(uid: getuid())) })
        limit(mam_rlimit_as, config.limits.addressSpace)
        limit(mam_rlimit_nofile, config.limits.openFiles)
        limit(mam_rlimit_fsize, config.limits.fileSize)
        limit(mam_rlimit_core, config.limits.coreDumps)
        // /dev/null unless the caller gave an input: the launcher's own may be the user's terminal.
        let devNull = config.standardInput == nil ? open("/dev/null", O_RDONLY | O_CLOEXEC) : -1
        defer { if devNull >= 0 { close(devNull) } }

        let plan = LaunchPlan.make(
            namespaces: isolate ? namespaces : [], joinsNetwork: network >= 0, root: appRoot, container: container,
            containerInApp: appContainer, containerTmpfs: tmpfs,
            cgroups: placement.map { $0.cgroup.map { .joinedByChild(count: $0.joinDescriptors.count) } ?? .placedByLauncher },
            broker: config.brokerDescriptor != nil, limits: limits, identity: user.map { (uid: $0.uid, gid: $0.uid) },
            landlock: landlock, seccompInstructions: program.map { $0.bytes.count / 8 },
            program: config.executableDescriptor != nil ? .descriptor : .path(execPath), arguments: argv, environment: envp)

        var result = mam_spawn_result()
        var error = [CChar](repeating: 0, count: 256)
        // The supervisor answers the app's exec from inside mam_spawn, which returns only once
        // the exec has happened (the child shares the launcher's memory until then).
        let firstExec = program.map { program in
            FirstExec { listener, pid in
                Supervisor(fd: listener, appPID: pid, bundleID: config.bundleID, executable: execPath,
                           byDescriptor: config.executableDescriptor != nil, container: appContainer, names: program.numbers,
                           ownPIDNamespace: isolate, report: report)
            }
        }
        // The streams the app would share with the host and other apps, by inode: each is the
        // app's own null device instead, in an app with a root of its own.
        let streams = [config.standardInput?.rawValue ?? devNull, config.standardOutput?.rawValue ?? 1, config.standardError?.rawValue ?? 2]
        let ownNull = isolate ? streams.enumerated().reduce(Int32(0)) { $0 | (Self.isShared($1.element) ? 1 << Int32($1.offset) : 0) } : 0
        var executor = LaunchExecutor(
            plan: plan, executable: execPath, container: container,
            descriptors: .init(standardInput: config.standardInput?.rawValue ?? devNull, standardOutput: config.standardOutput?.rawValue ?? -1,
                               standardError: config.standardError?.rawValue ?? -1, ownNullStreams: ownNull, broker: config.brokerDescriptor?.rawValue ?? -1,
                               container: containerFD, network: network, program: config.executableDescriptor?.rawValue ?? -1,
                               cgroupJoins: placement?.cgroup?.joinDescriptors ?? []),
            seccompProgram: program?.bytes ?? [])
        if let placement { executor.place = (Placement.callback, Unmanaged.passUnretained(placement).toOpaque()) }
        if let firstExec { executor.serveFirst = (FirstExec.callback, Unmanaged.passUnretained(firstExec).toOpaque()) }
        // Cloned from the one long-lived spawn thread: the parent-death signal follows the thread.
        let rc: Int32 = SpawnThread.shared.run { executor.run(&result, error: &error) }
        if placement?.layout.isV1 == true { placement?.cgroup?.closeDescriptors() }
        // Started even when the exec failed: the loop ends, and closes the listener, at its hang-up.
        let supervisor = firstExec?.supervisor
        supervisor?.start()
        if supervisor == nil && result.notify_fd >= 0 { close(result.notify_fd) }
        if rc == 1 { throw LaunchError("cannot sandbox \(config.bundleID): \(cText(error))") }
        guard rc == 0 else { throw LaunchError("cannot launch \(config.bundleID): \(cText(error))") }
        let cgroup = placement?.cgroup
        handedOver = true
        return SandboxedApp(pid: result.pid, bundleID: config.bundleID, weakened: weakened, uid: uid, supervisor: supervisor,
                            user: user, claim: claim, cgroup: cgroup)
    }

    /// Removes an app's container: only what lies inside it, never following a link out.
    /// Whether a standard stream would be an inode other apps and the host hold too: a device
    /// that is no terminal (the host's /dev/null above all), a closed number, or any file that is
    /// no pipe, socket or regular file (an epoll, an eventfd). A pipe, a socket or a file the
    /// user gave is the user's to give; a terminal becomes the launcher's pseudo-terminal.
    static func isShared(_ fd: Int32) -> Bool {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return true }
        switch st.st_mode & S_IFMT {
        case S_IFIFO, S_IFSOCK, S_IFREG: return false
        case S_IFCHR: return isatty(fd) != 1
        default: return true
        }
    }

    /// Removes a folder root made and everything in it, without ever following a link or
    /// leaving it: apps had folders in it and may have left links to anywhere. A missing folder
    /// is already removed.
    public static func removeFolder(_ path: String) throws {
        let parent = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        guard !name.isEmpty, name != ".", name != ".." else { throw LaunchError("\(path): not a folder to remove") }
        let parentFD = open(parent.isEmpty ? "." : parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard parentFD >= 0 else {
            if errno == ENOENT { return }
            throw LaunchError("cannot remove \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(parentFD) }
        try remove(openat(parentFD, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), named: name, in: parentFD, shown: path)
    }

    /// Empties the folder open at `fd` (-1: its open failed, errno says why; ENOENT: already
    /// gone) and removes its `name` from `parent`, both through descriptors.
    private static func remove(_ fd: Int32, named name: String, in parent: Int32, shown: String) throws {
        guard fd >= 0 else {
            if errno == ENOENT { return }
            throw LaunchError("cannot remove \(shown): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        guard mam_remove_contents(fd) == 0, unlinkat(parent, name, AT_REMOVEDIR) == 0 else {
            throw LaunchError("cannot remove \(shown): \(String(cString: strerror(errno)))")
        }
    }

    public static func removeContainer(root: String, bundleID: String) throws {
        guard AppManifest.bundleIDProblem(bundleID) == nil else { throw LaunchError("\(bundleID): not a bundle id") }
        let rootFD = open(root, oPath | O_DIRECTORY | O_CLOEXEC)
        guard rootFD >= 0 else { return }
        defer { close(rootFD) }
        try remove(mam_open_beneath(rootFD, bundleID, 0), named: bundleID, in: rootFD, shown: "\(root)/\(bundleID)")
    }
}

/// Makes the supervisor when the child's listener arrives and has it answer the child's exec,
/// called from C (mam_spawn's `serve_first`) on the launching thread.
final class FirstExec {
    private let make: (Int32, Int32) -> Supervisor
    private(set) var supervisor: Supervisor?

    init(_ make: @escaping (_ listener: Int32, _ pid: Int32) -> Supervisor) { self.make = make }

    static let callback: @convention(c) (UnsafeMutableRawPointer?, pid_t, Int32, Int32) -> Void = { context, pid, listener, pidfd in
        let first = Unmanaged<FirstExec>.fromOpaque(context!).takeUnretainedValue()
        let supervisor = first.make(listener, pid)
        first.supervisor = supervisor
        supervisor.serveFirst(pidfd: pidfd)
    }
}

/// Makes an app's cgroups and moves the freshly cloned child into them, called from C
/// (mam_spawn's `place`) on the launching thread.
final class Placement {
    let layout: CgroupLayout
    let bundleID: String
    let limits: ResourceLimits
    var cgroup: AppCgroup?

    init(layout: CgroupLayout, bundleID: String, limits: ResourceLimits) {
        self.layout = layout
        self.bundleID = bundleID
        self.limits = limits
    }

    static let callback: @convention(c) (UnsafeMutableRawPointer?, pid_t, UnsafeMutablePointer<CChar>?, Int) -> Int32 = { context, pid, buffer, size in
        let placement = Unmanaged<Placement>.fromOpaque(context!).takeUnretainedValue()
        do {
            let made = try AppCgroup.create(placement.layout, bundleID: placement.bundleID, limits: placement.limits)
            placement.cgroup = made
            try made.place(pid)
            return 0
        } catch {
            if let buffer, size > 0 {
                _ = "\(error)".withCString { strncpy(buffer, $0, size - 1) }
                buffer[size - 1] = 0
            }
            return -1
        }
    }
}

/// Containers are folders named by bundle id directly beneath their root.
enum Containers {
    static func open(root: String, bundleID: String) throws -> Int32 {
        let rootFD = Glibc.open(root, oPath | O_DIRECTORY | O_CLOEXEC)
        guard rootFD >= 0 else { throw LaunchError("\(root): \(String(cString: strerror(errno)))") }
        defer { close(rootFD) }
        let fd = mam_open_beneath(rootFD, bundleID, 1)
        guard fd >= 0 else {
            throw LaunchError("cannot open the container \(bundleID) beneath \(root): \(String(cString: strerror(errno)))")
        }
        return fd
    }
}

private func seccomp_version_string() -> String {
    guard let raw = mam_seccomp_version() else { return "unknown" }
    let v = raw.assumingMemoryBound(to: scmp_version.self).pointee
    return "\(v.major).\(v.minor).\(v.micro)"
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

// Linux values Glibc's Swift overlay leaves out (they need _GNU_SOURCE).
let oPath: Int32 = 0o10000000
let atEmptyPath: Int32 = 0x1000
