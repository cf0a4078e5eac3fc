import Foundation
import Glibc

/// Where this machine keeps the cgroup controllers the sandbox needs (memory, pids, cpu).
public enum CgroupLayout: Sendable, Equatable {
    /// The unified hierarchy with the controllers; apps go under `base` (a folder at its root,
    /// where controllers may be enabled for children).
    case v2(base: String)
    /// Version 1: one hierarchy per controller; apps go under the launcher's own cgroup in each.
    case v1(memory: String, pids: String, cpu: String)

    public static let root = "/sys/fs/cgroup"

    /// The layout here, or why there is none.
    public static func probe() -> Result<CgroupLayout, LaunchError> {
        let fm = FileManager.default
        if let controllers = try? String(contentsOfFile: root + "/cgroup.controllers", encoding: .utf8) {
            let have = Set(controllers.split(whereSeparator: \.isWhitespace).map(String.init))
            let missing = ["memory", "pids", "cpu"].filter { !have.contains($0) }
            guard missing.isEmpty else { return .failure(LaunchError("cgroup v2 without the \(missing.joined(separator: ", ")) controller")) }
            return .success(.v2(base: root + "/mamlab"))
        }
        // Version 1: the launcher's own cgroup in each hierarchy, from /proc/self/cgroup.
        let own = readProcFile("/proc/self/cgroup") ?? ""
        var paths: [String: String] = [:]
        for line in own.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { continue }
            for controller in parts[1].split(separator: ",") where ["memory", "pids", "cpu"].contains(String(controller)) {
                let mount = "\(root)/\(controller)"
                guard fm.fileExists(atPath: mount + "/cgroup.procs") else { continue }
                let path = String(parts[2])
                paths[String(controller)] = (path == "/" ? mount : mount + path) + "/mamlab"
            }
        }
        let missing = ["memory", "pids", "cpu"].filter { paths[$0] == nil }
        guard missing.isEmpty else { return .failure(LaunchError("no cgroup \(missing.joined(separator: ", ")) controller mounted under \(root)")) }
        return .success(.v1(memory: paths["memory"]!, pids: paths["pids"]!, cpu: paths["cpu"]!))
    }

    var isV1: Bool { if case .v1 = self { return true } else { return false } }

    public var description: String {
        switch self {
        case let .v2(base): return "v2 (memory, pids, cpu) under \(base)"
        case let .v1(memory, _, _): return "v1 (memory, pids, cpu) under \((memory as NSString).deletingLastPathComponent)/…"
        }
    }
}

/// One app's cgroups: memory (page cache, tmpfs and memfd pages included), tasks and CPU bound
/// for the app and everything it starts. Removed after the app ends.
final class AppCgroup: @unchecked Sendable {
    private let directories: [String]
    /// `cgroup.procs` (or v1 `tasks`) of each, open for writing until the app is placed.
    private var procs: [Int32]

    private static let counter = LockedValue(0)

    private init(directories: [String], procs: [Int32]) {
        self.directories = directories
        self.procs = procs
    }

    /// `selfJoin`: opens each v1 cgroup's `tasks` rather than `cgroup.procs`, for the child to
    /// write "0" to (`joinDescriptors`), moving itself before it drops root.
    ///
    /// On v2 this runs after the clone (Placement), while the child still shares the launcher's
    /// memory and so this thread's errno: every decision here is made on a return value, and
    /// errno only names a failure in its message.
    static func create(_ layout: CgroupLayout, bundleID: String, limits: ResourceLimits, selfJoin: Bool = false) throws -> AppCgroup {
        let n = counter.withLock { value -> Int in value += 1; return value }
        let name = "\(bundleID).\(getpid()).\(n)"
        var settings: [(String, String)] = []
        var bases: [String] = []
        switch layout {
        case .v2:
            let base = try Delegation.base()
            let dir = base + "/" + name
            bases = [dir]
            settings = [
                (dir + "/memory.max", limits.memory.map(String.init) ?? "max"),
                (dir + "/memory.swap.max", limits.memory == nil ? "max" : "0"),
                (dir + "/pids.max", limits.tasks.map(String.init) ?? "max"),
                (dir + "/cpu.max", limits.cpu.map { "\(max(1000, Int($0 * 100_000))) 100000" } ?? "max 100000"),
            ]
        case let .v1(memory, pids, cpu):
            let m = memory + "/" + name, p = pids + "/" + name, c = cpu + "/" + name
            bases = [m, p, c]
            settings = [
                (m + "/memory.limit_in_bytes", limits.memory.map(String.init) ?? "-1"),
                (p + "/pids.max", limits.tasks.map(String.init) ?? "max"),
                (c + "/cpu.cfs_period_us", "100000"),
                (c + "/cpu.cfs_quota_us", limits.cpu.map { String(max(1000, Int($0 * 100_000))) } ?? "-1"),
            ]
            // With swap accounting, swapped-out pages count too (the file is absent without it).
            if let bytes = limits.memory, FileManager.default.fileExists(atPath: memory + "/memory.memsw.limit_in_bytes") {
                settings.append((m + "/memory.memsw.limit_in_bytes", String(bytes)))
            }
        }
        var made: [String] = []
        do {
            for dir in bases {
                let parent = (dir as NSString).deletingLastPathComponent
                // v1's `mamlab` folders are made here, before the clone. v2's was made when the
                // layout was settled (Delegation, also before the clone): this runs in Placement
                // while the child shares this thread's errno, and a child's failed call (glibc's
                // sigaction on its own signals 32 and 33, at every launch) turned an EEXIST read
                // here into "cgroup …/mamlab: Invalid argument" now and then under QEMU.
                // A container's cgroup file system is read-only unless it is given one to write.
                if layout.isV1, mkdir(parent, 0o755) != 0, errno != EEXIST {
                    throw LaunchError("cgroup \(parent): \(String(cString: strerror(errno)))"
                                      + (errno == EROFS ? " (in a container: give it a writable cgroup file system, docs/SANDBOX.md)" : ""))
                }
                guard mkdir(dir, 0o755) == 0 else { throw LaunchError("cgroup \(dir): \(String(cString: strerror(errno)))") }
                made.append(dir)
            }
            for (file, value) in settings { try write(file, value) }
            var fds: [Int32] = []
            for dir in made {
                let file = selfJoin ? "/tasks" : "/cgroup.procs"
                let fd = open(dir + file, O_WRONLY | O_CLOEXEC)
                guard fd >= 0 else { fds.forEach { close($0) }; throw LaunchError("cgroup \(dir)\(file): \(String(cString: strerror(errno)))") }
                fds.append(fd)
            }
            return AppCgroup(directories: made, procs: fds)
        } catch {
            made.reversed().forEach { rmdir($0) }
            throw error
        }
    }

    static func writeValue(_ path: String, _ value: String) throws { try write(path, value) }

    private static func write(_ path: String, _ value: String) throws {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw LaunchError("cgroup \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let n = value.withCString { Glibc.write(fd, $0, strlen($0)) }
        guard n >= 0 else { throw LaunchError("cgroup \(path) = \(value): \(String(cString: strerror(errno)))") }
    }

    /// The descriptors a child writes "0" to, to join the cgroups itself (`selfJoin`).
    var joinDescriptors: [Int32] { procs }

    /// Closes the launcher's descriptors once the child holds its own copies.
    func closeDescriptors() {
        procs.forEach { close($0) }
        procs = []
    }

    /// Moves process `pid` (and what it starts later) into every one of the app's cgroups,
    /// then closes the descriptors.
    func place(_ pid: pid_t) throws {
        defer { closeDescriptors() }
        let text = String(pid)
        for (fd, dir) in zip(procs, directories) {
            let n = text.withCString { Glibc.write(fd, $0, strlen($0)) }
            guard n > 0 else { throw LaunchError("cannot move the app into \(dir): \(String(cString: strerror(errno)))") }
        }
    }

    /// Removes the cgroups once the app and all it started are gone (the last tasks may take a
    /// moment to leave after they are reaped), and those a launcher killed with SIGKILL left
    /// behind (named with its pid; empty, since its app died with it). What still runs in a v2
    /// cgroup after a while (an app without a PID namespace of its own leaves its descendants)
    /// is ended with cgroup.kill, the whole tree at once (Linux 5.14+).
    func remove() {
        for dir in directories.reversed() {
            for attempt in 0..<200 {
                if rmdir(dir) == 0 || errno == ENOENT { break }
                if attempt == 50 { try? Self.write(dir + "/cgroup.kill", "1") }
                usleep(1000)
            }
            let base = (dir as NSString).deletingLastPathComponent
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? [] {
                let parts = entry.split(separator: ".")
                guard parts.count >= 3, let pid = Int32(parts[parts.count - 2]), pid > 0,
                      kill(pid, 0) != 0 && errno == ESRCH else { continue }
                rmdir(base + "/" + entry)
            }
        }
    }
}

/// Where the apps' cgroups go in the unified hierarchy, settled at the first launch. Controllers
/// reach a cgroup only when its parent enables them for its children, and a cgroup other than
/// the root may not both hold processes and enable them (EBUSY): so on a systemd host or in a
/// container, where the launcher sits in a non-root cgroup with processes, the launcher first
/// moves itself into a leaf of its own (`mamlab-launcher`) and enables them in the cgroup it
/// left; when others still live there it tries each ancestor up to the root it can see. Apps
/// then go under `mamlab` of the first that works: a subtree delegated to the launcher is used
/// as it is.
enum Delegation {
    static let controllers = "+memory +pids +cpu"
    private static let settled = LockedValue<Result<String, LaunchError>?>(nil)

    static func base() throws -> String {
        try settled.withLock { value -> Result<String, LaunchError> in
            if let value { return value }
            let result = settle(own: ownPath())
            value = result
            return result
        }.get()
    }

    /// The launcher's cgroup as /proc/self/cgroup names it ("0::/user.slice/…").
    static func ownPath() -> String {
        let text = readProcFile("/proc/self/cgroup") ?? ""
        for line in text.split(separator: "\n") where line.hasPrefix("0::") {
            let path = String(line.dropFirst(3))
            return path.isEmpty ? "/" : path
        }
        return "/"
    }

    static func settle(own: String) -> Result<String, LaunchError> {
        var candidate = own
        var tried: [String] = []
        while true {
            let dir = candidate == "/" ? CgroupLayout.root : CgroupLayout.root + candidate
            var error = enable(dir)
            if error == EBUSY && candidate == own {
                let leaf = dir + "/mamlab-launcher"
                if mkdir(leaf, 0o755) == 0 || errno == EEXIST, (try? AppCgroup.writeValue(leaf + "/cgroup.procs", String(getpid()))) != nil {
                    error = enable(dir)
                }
            }
            if error == 0 {
                let base = dir + "/mamlab"
                if mkdir(base, 0o755) != 0 && errno != EEXIST { error = errno } else { error = enable(base) }
                if error == 0 { return .success(base) }
            }
            tried.append("\(dir): \(String(cString: strerror(error)))")
            if candidate == "/" { break }
            candidate = (candidate as NSString).deletingLastPathComponent
        }
        return .failure(LaunchError("cannot enable the memory, pids and cpu controllers for apps (\(tried.joined(separator: "; "))); run mamlaunch in a cgroup of its own with them delegated (systemd-run --scope -p Delegate=yes mamlaunch …)"))
    }

    /// 0, or why `dir` cannot enable the controllers for its children.
    private static func enable(_ dir: String) -> Int32 {
        let fd = open(dir + "/cgroup.subtree_control", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        return controllers.withCString { Glibc.write(fd, $0, strlen($0)) } >= 0 ? 0 : errno
    }
}
