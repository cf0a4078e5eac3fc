import CMAMSandbox
import Glibc

/// Runs a `LaunchPlan`: the child's configuration (spawn.c's `mam_spawn_config`) filled from
/// the plan's steps and the launcher's descriptors, then the clone. Everything the child reads
/// lives in one arena until `mam_spawn` returns (the child shares the launcher's memory until
/// its exec, which `mam_spawn` waits for).
struct LaunchExecutor {
    /// The launcher's descriptors the steps use (-1: none); they stay the caller's.
    struct Descriptors {
        var standardInput: Int32 = -1
        var standardOutput: Int32 = -1
        var standardError: Int32 = -1
        /// Bits 0-2: that standard stream is the app's own null device instead (spawn.c).
        var ownNullStreams: Int32 = 0
        var broker: Int32 = -1
        var container: Int32 = -1
        var network: Int32 = -1
        var program: Int32 = -1
        var cgroupJoins: [Int32] = []
    }

    var plan: LaunchPlan
    /// The executable's path (argv's first, and what a script is executed by).
    var executable: String
    /// The container in the launcher's view.
    var container: String
    var descriptors: Descriptors
    var seccompProgram: [UInt8] = []
    /// cgroup v2's move by pid, called on the launching thread right after the clone.
    var place: (callback: @convention(c) (UnsafeMutableRawPointer?, pid_t, UnsafeMutablePointer<CChar>?, Int) -> Int32,
                context: UnsafeMutableRawPointer)?
    /// The supervisor's answer to the first exec, called once the child's listener arrives.
    var serveFirst: (callback: @convention(c) (UnsafeMutableRawPointer?, pid_t, Int32, Int32) -> Void, context: UnsafeMutableRawPointer)?

    /// 0 (the app runs), 1 (the child failed before or at its exec) or -1 (nothing started);
    /// `error` says why.
    func run(_ result: inout mam_spawn_result, error: inout [CChar]) -> Int32 {
        let arena = Arena()
        var c = mam_spawn_config()
        c.executable = arena.string(executable)
        c.container = arena.string(container)
        c.container_fd = descriptors.container
        c.stdin_fd = descriptors.standardInput
        c.stdout_fd = descriptors.standardOutput
        c.stderr_fd = descriptors.standardError
        c.own_null_streams = descriptors.ownNullStreams
        c.broker_fd = -1
        c.net_namespace_fd = -1
        var limits: [mam_rlimit] = []
        for step in plan.steps {
            switch step {
            case let .clone(namespaces): c.clone_flags = namespaces.rawValue
            case .dieWithLauncher, .ownSession, .cgroupNamespace, .noNewPrivileges, .closeOtherDescriptors:
                break  // always the child's, in this order
            case .joinNetwork: c.net_namespace_fd = descriptors.network
            case let .ownRoot(root, container, at):
                c.binds = arena.values(root.binds.map {
                    mam_bind(source: arena.string($0.source), target: arena.string($0.target), writable: $0.writable ? 1 : 0,
                             device: $0.device ? 1 : 0)
                })
                c.bind_count = Int32(root.binds.count)
                c.link_paths = arena.constStrings(root.links.map(\.path))
                c.link_targets = arena.constStrings(root.links.map(\.target))
                c.link_count = Int32(root.links.count)
                c.hidden = arena.constStrings(root.hidden)
                c.hidden_count = Int32(root.hidden.count)
                c.app_container = arena.string(at)
                if case let .tmpfs(options) = container { c.container_tmpfs = arena.string(options) }
            case .cgroups(.placedByLauncher):
                c.place = place?.callback
                c.place_context = place?.context
            case .cgroups(.joinedByChild):
                c.join_fds = arena.values(descriptors.cgroupJoins)
                c.join_count = Int32(descriptors.cgroupJoins.count)
            case let .standardDescriptors(broker): c.broker_fd = broker ? descriptors.broker : -1
            case let .resourceLimits(list):
                limits += list.map { mam_rlimit(resource: $0.resource, soft: rlim_t($0.value), hard: rlim_t($0.value)) }
            case .workingDirectory: break  // the container: `container`, or `at` in the app's own root
            case let .identity(uid, gid):
                c.change_ids = 1
                c.uid = uid
                c.gid = gid
            case let .landlock(policy):
                c.landlock_abi = Int32(policy.abi)
                c.landlock_handled_fs = policy.handledFilesystem
                c.landlock_handled_net = policy.handledNetwork
                c.landlock_scoped = policy.scoped
                c.landlock_rules = arena.values(policy.rules.map { mam_landlock_rule(path: arena.string($0.path), access: $0.access) })
                c.landlock_rule_count = Int32(policy.rules.count)
            case .seccomp:
                c.seccomp_program = UnsafeRawPointer(arena.values(seccompProgram))
                c.seccomp_length = UInt16(seccompProgram.count / 8)
                c.serve_first = serveFirst?.callback
                c.serve_context = serveFirst?.context
            case let .openFilesLimit(value):
                limits.append(mam_rlimit(resource: mam_rlimit_nofile, soft: rlim_t(value), hard: rlim_t(value)))
            case let .exec(program, arguments, environment):
                if case .descriptor = program {
                    c.exec_by_fd = 1
                    c.executable_fd = descriptors.program
                }
                c.argv = UnsafePointer(arena.strings(arguments))
                c.envp = UnsafePointer(arena.strings(environment))
            }
        }
        c.rlimits = arena.values(limits)
        c.rlimit_count = Int32(limits.count)
        return withExtendedLifetime(arena) { mam_spawn(&c, &result, &error, error.count) }
    }
}

/// C memory for one launch, freed together.
private final class Arena {
    private var blocks: [UnsafeMutableRawPointer] = []
    deinit { blocks.forEach { free($0) } }

    func string(_ s: String) -> UnsafePointer<CChar> { UnsafePointer(copy(s)) }

    private func copy(_ s: String) -> UnsafeMutablePointer<CChar> {
        let p = strdup(s)!
        blocks.append(UnsafeMutableRawPointer(p))
        return p
    }

    /// A copy of `list`, or nil when it is empty.
    func values<T>(_ list: [T]) -> UnsafePointer<T>? {
        guard !list.isEmpty else { return nil }
        let raw = malloc(MemoryLayout<T>.stride * list.count)!
        blocks.append(raw)
        let typed = raw.bindMemory(to: T.self, capacity: list.count)
        typed.initialize(from: list, count: list.count)
        return UnsafePointer(typed)
    }

    /// A NULL-terminated array of C strings.
    func strings(_ list: [String]) -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> {
        let raw = malloc(MemoryLayout<UnsafeMutablePointer<CChar>?>.stride * (list.count + 1))!
        blocks.append(raw)
        let array = raw.bindMemory(to: UnsafeMutablePointer<CChar>?.self, capacity: list.count + 1)
        for (i, s) in list.enumerated() { array[i] = copy(s) }
        array[list.count] = nil
        return array
    }

    func constStrings(_ list: [String]) -> UnsafePointer<UnsafePointer<CChar>?> {
        UnsafePointer(OpaquePointer(strings(list)))
    }
}
