import CMAMSandbox

/// What one launch does, in order, as values (the way bubblewrap's setup is a list of
/// operations): the child cloned into `clone`'s namespaces applies exactly these steps, in this
/// order (spawn.c, `run_child`), and then executes the app. `Sandbox.launch` gathers what the
/// steps need (the app's root, its uid, its cgroups, its Landlock rules, its filter) and makes
/// the plan without a process; `LaunchExecutor` hands it to the child.
struct LaunchPlan: Equatable {
    struct Limit: Equatable {
        var resource: Int32
        var value: UInt64
    }

    enum Container: Equatable {
        /// A tmpfs of its own (size, inodes, mode and owner in the options).
        case tmpfs(options: String)
        /// The on-disk folder (launcher's path), bound in.
        case onDisk(String)
    }

    enum Cgroups: Equatable {
        /// cgroup v2: the launcher moves the child by pid meanwhile; the child waits for it.
        case placedByLauncher
        /// cgroup v1: the child writes itself into each of `count` `tasks` files.
        case joinedByChild(count: Int)
    }

    enum Program: Equatable {
        /// The descriptor the launcher opened and hashed (`execveat(fd, "", AT_EMPTY_PATH)`).
        case descriptor
        /// By path (a `#!` script: its interpreter starts in the same call).
        case path(String)
    }

    enum Step: Equatable {
        case clone(Namespaces)
        /// `PR_SET_PDEATHSIG`, and the launcher checked alive.
        case dieWithLauncher
        /// `setsid`; every signal at its default, none blocked.
        case ownSession
        /// The launcher's empty network namespace (`setns`).
        case joinNetwork
        /// Its own root (AppRoot), its container at `at`, a /proc of its own; `pivot_root`.
        case ownRoot(AppRoot, container: Container, at: String)
        case cgroups(Cgroups)
        /// Its cgroups become its cgroup namespace's root.
        case cgroupNamespace
        /// stdin, stdout, stderr; the broker connection on descriptor 3.
        case standardDescriptors(broker: Bool)
        /// Per process, all but the limit on open files (it comes last, below).
        case resourceLimits([Limit])
        case workingDirectory(String)
        /// setgroups, setresgid, setresuid (then the parent-death signal again).
        case identity(uid: UInt32, gid: UInt32)
        case noNewPrivileges
        case landlock(LandlockPolicy)
        /// The filter (`instructions` long), its listener passed to the launcher.
        case seccomp(instructions: Int)
        case openFilesLimit(UInt64)
        /// Everything above descriptor 3 close-on-exec.
        case closeOtherDescriptors
        case exec(Program, arguments: [String], environment: [String])
    }

    var steps: [Step]

    /// The plan for one app. `namespaces` empty: no isolation (the invoking user's own uid, no
    /// root, no cgroups).
    static func make(namespaces: Namespaces, joinsNetwork: Bool, root: AppRoot, container: String, containerInApp: String,
                     containerTmpfs: String?, cgroups: Cgroups?, broker: Bool, limits: [Limit], identity: (uid: UInt32, gid: UInt32)?,
                     landlock: LandlockPolicy?, seccompInstructions: Int?, program: Program, arguments: [String],
                     environment: [String]) -> LaunchPlan {
        var steps: [Step] = [.clone(namespaces), .dieWithLauncher, .ownSession]
        if joinsNetwork { steps.append(.joinNetwork) }
        if namespaces.contains(.mount) {
            steps.append(.ownRoot(root, container: containerTmpfs.map { .tmpfs(options: $0) } ?? .onDisk(container), at: containerInApp))
        }
        if let cgroups { steps += [.cgroups(cgroups), .cgroupNamespace] }
        steps.append(.standardDescriptors(broker: broker))
        steps.append(.resourceLimits(limits.filter { $0.resource != mam_rlimit_nofile }))
        steps.append(.workingDirectory(namespaces.contains(.mount) ? containerInApp : container))
        if let identity { steps.append(.identity(uid: identity.uid, gid: identity.gid)) }
        steps.append(.noNewPrivileges)
        if let landlock { steps.append(.landlock(landlock)) }
        if let seccompInstructions { steps.append(.seccomp(instructions: seccompInstructions)) }
        if let files = limits.first(where: { $0.resource == mam_rlimit_nofile }) { steps.append(.openFilesLimit(files.value)) }
        steps += [.closeOtherDescriptors, .exec(program, arguments: arguments, environment: environment)]
        return LaunchPlan(steps: steps)
    }
}

extension LandlockPolicy: Equatable {
    public static func == (a: LandlockPolicy, b: LandlockPolicy) -> Bool {
        a.abi == b.abi && a.rules.map(\.path) == b.rules.map(\.path) && a.rules.map(\.access) == b.rules.map(\.access)
    }
}
