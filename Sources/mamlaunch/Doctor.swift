import ArgumentParser
import Foundation
import Glibc
import MAMSandbox

struct Doctor: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Report what this kernel offers the sandbox.",
        discussion: """
            Prints each mechanism the sandbox uses and whether it is available here: Landlock \
            (and its ABI), seccomp filters and user notification, the libseccomp version, the \
            app's own session and terminal, whether Landlock's rules hold on the tool folder's \
            file system (not on one whose inodes change at each lookup: 9p without a cache, \
            some FUSE), PID, mount, IPC and network namespaces, the \
            launcher's uid range, cgroups (memory, tasks, CPU) and the size-bounded container; \
            then, per attack class, the layers that cover it here and its status. Exit status 1 \
            when a class has no cover at all (every command that launches apps then refuses \
            unless --allow-weaker-sandbox is given); a missing layer another one covers is not \
            a failure. Exit status 1 too when Landlock's rules do not hold on the tool folder.
            """
    )

    func run() throws {
        let s = SandboxSupport.probe()
        func row(_ name: String, _ value: String) { print(name.padding(toLength: 20, withPad: " ", startingAt: 0) + value) }
        row("landlock", s.landlockABI.map { "ABI \($0)" + ($0 >= 6 ? " (filesystem, TCP, abstract-socket and signal scoping)" : "") } ?? "unavailable")
        // Landlock's rules hold inodes: on a file system whose inodes change at each lookup
        // (9p without a cache, some FUSE) no grant matches, and no app here could start.
        var inodesBroken = false
        if s.landlockABI != nil, let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            let folder = (exe as NSString).deletingLastPathComponent
            // A file beside the launcher that nothing runs (an app's program, as a launch finds
            // it): the launcher's own stays cached while it runs, whatever the file system.
            let siblings = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
            let probe = (["Hostile"] + siblings).lazy.map { (folder as NSString).appendingPathComponent($0) }.first { path in
                var st = stat()
                return path != exe && stat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFREG
            } ?? exe
            switch LandlockInodes.probe(folder: folder, file: probe) {
            case let .hold(fs): row("landlock rules", "hold on the tool folder \(folder) (\(fs))")
            case let .doNotHold(fs):
                inodesBroken = true
                row("landlock rules", "DO NOT HOLD on the tool folder \(folder) (\(fs)): its inodes change at each lookup "
                    + "(9p without a cache, some FUSE), so every app there fails its exec with EACCES; mount it with a cache "
                    + "(9p: cache=loose) or build on a local file system")
            case let .unknown(why): row("landlock rules", "not tried on \(folder): \(why)")
            }
        }
        row("seccomp filters", s.seccompFilter ? "available (clone namespace flags, clone3, seccomp and PR_SET_PDEATHSIG refused)" : "unavailable")
        row("seccomp notify", s.seccompNotify ? "available" : "unavailable")
        row("libseccomp", s.libseccompVersion)
        row("terminal", "own session; pipes pass through, a terminal becomes a launcher pseudo-terminal with sanitised output")
        let root = s.privileged
        // Root that cannot use its privileges (a container without CAP_SYS_ADMIN) says why.
        let needsRoot = s.isolationProblem == nil ? "needs root" : "root here lacks the privileges, above"
        if let problem = s.isolationProblem { row("privileges", "root, but apps cannot be isolated here: \(problem); in a container, give it CAP_SYS_ADMIN and CAP_SYS_PTRACE") }
        func namespace(_ ns: String, _ what: String) -> String {
            guard root else { return "unavailable (\(needsRoot))" }
            return s.namespaces.contains(ns) ? what : "unavailable (kernel without it)"
        }
        row("pid namespace", namespace("pid", "own, the app is process 1: all it starts ends with it"))
        row("mount namespace", namespace("mnt", "own /proc; other containers, the broker folder and /dev/shm hidden"))
        row("ipc namespace", namespace("ipc", "own (SysV and POSIX IPC)"))
        row("network namespace", namespace("net", "the launcher's empty one (/run/mamlab/netns), shared; sockets refused"))
        row("app uids", root ? "one per running app, from \(AppUser.first) (\(AppUser.count) uids)" : "unavailable (\(needsRoot); apps would run as you)")
        switch s.cgroups {
        case let .success(layout): row("cgroups", root ? layout.description : "\(layout.description), unusable without root")
        case let .failure(why): row("cgroups", "unavailable: \(why.description)")
        }
        row("container", root ? "tmpfs of --limit disk (default 256 MiB), 0700, the app's uid" : "the folder itself, unbounded")
        // Each attack class and the layers that cover it here: the launcher refuses only a
        // class with none (docs/SANDBOX.md, "Containment by layers").
        let containment = s.containment
        print("")
        print(containment.table)
        if let refusal = containment.refusal {
            print("refused: \(refusal)")
            throw ExitCode(1)
        }
        if inodesBroken {
            print("refused: Landlock's rules do not hold on the tool folder's file system (see landlock rules above)")
            throw ExitCode(1)
        }
    }
}
