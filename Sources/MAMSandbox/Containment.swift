import Foundation

/// Containment by layers: for each class of attack the sandbox defends, the mechanisms that
/// cover it on the kernel at hand. A class is covered while any one of its layers is present;
/// a newer mechanism that repeats another layer's cover (Landlock ABI 6 abstract-socket scoping
/// while seccomp refuses socket(), signal scoping while the app is alone in its PID namespace)
/// is used when the kernel has it and never required. The launcher refuses only when a class
/// is left with no layer at all, and names the class, what the kernel lacks and the remedy.
public struct Containment: Sendable, Equatable {
    /// One mechanism, whether this kernel offers it, and what to do when it does not.
    public struct Layer: Sendable, Equatable {
        public var name: String
        public var present: Bool
        public var lack: String

        init(_ name: String, _ present: Bool, lack: String) {
            self.name = name
            self.present = present
            self.lack = lack
        }
    }

    public struct Row: Sendable, Equatable {
        public var attack: String
        /// Every layer that can cover the class, strongest first.
        public var layers: [Layer]
        public var coveredBy: [String] { layers.filter(\.present).map(\.name) }
        public var covered: Bool { layers.contains(where: \.present) }
        /// What the kernel lacks, for a class with no layer left.
        public var lacking: String {
            var seen: Set<String> = []
            return layers.filter { !$0.present }.map(\.lack).filter { seen.insert($0).inserted }.joined(separator: "; ")
        }
        public var status: String { covered ? "covered" : "UNCOVERED: \(lacking)" }
    }

    public var rows: [Row]

    public var uncovered: [Row] { rows.filter { !$0.covered } }

    /// The strength a launch runs at, stated by every command that launches apps.
    public enum Strength: String, Sendable {
        /// Every layer of every class.
        case full
        /// Every class covered; some layers that only repeat another's cover are absent.
        case layered
        /// A class has no cover: runs only with --allow-weaker-sandbox.
        case weaker
    }

    public var strength: Strength {
        if !uncovered.isEmpty { return .weaker }
        return rows.allSatisfy { $0.layers.allSatisfy(\.present) } ? .full : .layered
    }

    /// Why a launch is refused, naming each uncovered class, what is missing and the remedy.
    public var refusal: String? {
        guard !uncovered.isEmpty else { return nil }
        return uncovered.map { "\($0.attack) has no cover (\($0.lacking))" }.joined(separator: "; ")
    }

    /// The table for the kernel `support` describes (a probe of this one, or one written out in a test).
    public init(_ s: SandboxSupport) {
        let root = s.privileged
        func ns(_ name: String) -> Bool { root && s.namespaces.contains(name) }
        let rootLack = s.isolationProblem.map(Self.privilegeLack) ?? "root (run mamlaunch as root)"
        let landlock = Layer("Landlock filesystem", s.landlockABI != nil,
                             lack: "Landlock (kernel built without it or not in lsm=; add landlock to lsm= on the kernel command line)")
        let landlockNet = Layer("Landlock TCP (ABI 4)", (s.landlockABI ?? 0) >= 4, lack: "Landlock ABI 4 (kernel 6.7)")
        let scopeSocket = Layer("Landlock abstract-socket scope (ABI 6)", (s.landlockABI ?? 0) >= 6, lack: "Landlock ABI 6 (kernel 6.12)")
        let scopeSignal = Layer("Landlock signal scope (ABI 6)", (s.landlockABI ?? 0) >= 6, lack: "Landlock ABI 6 (kernel 6.12)")
        let seccomp = Layer("seccomp filter", s.seccompFilter, lack: "seccomp filters (CONFIG_SECCOMP_FILTER)")
        let notify = Layer("seccomp notify", s.seccompFilter && s.seccompNotify,
                           lack: "seccomp user notification (kernel 5.5 and libseccomp 2.5)")
        let uid = Layer("own uid", root, lack: rootLack)
        let pid = Layer("PID namespace", ns("pid"), lack: root ? "PID namespaces (CONFIG_PID_NS)" : rootLack)
        let mnt = Layer("mount namespace", ns("mnt"), lack: root ? "mount namespaces" : rootLack)
        let ipc = Layer("IPC namespace", ns("ipc"), lack: root ? "IPC namespaces (CONFIG_IPC_NS)" : rootLack)
        let net = Layer("network namespace", ns("net"), lack: root ? "network namespaces (CONFIG_NET_NS)" : rootLack)
        let cgroupLack: String
        switch s.cgroups {
        case .success: cgroupLack = rootLack
        case let .failure(why): cgroupLack = "cgroup memory, pids and cpu controllers (\(why.description))"
        }
        let cgroups = Layer("cgroups", root && (try? s.cgroups.get()) != nil, lack: cgroupLack)
        let rlimits = Layer("rlimits per uid", root, lack: rootLack)
        let always = { (name: String) in Layer(name, true, lack: "") }
        rows = [
            Row(attack: "files outside the grant", layers: [landlock, Layer("mount namespace + own uid", mnt.present && uid.present, lack: rootLack)]),
            Row(attack: "writes outside the container", layers: [landlock, notify]),
            Row(attack: "running other programs", layers: [notify, landlock]),
            Row(attack: "other apps' files", layers: [mnt, uid, landlock]),
            Row(attack: "other apps' processes", layers: [pid, uid]),
            Row(attack: "signals", layers: [pid, notify, scopeSignal]),
            Row(attack: "ptrace and process memory", layers: [seccomp, pid, uid]),
            Row(attack: "abstract sockets", layers: [seccomp, scopeSocket]),
            Row(attack: "path sockets", layers: [seccomp, landlock]),
            Row(attack: "network", layers: [net, seccomp, landlockNet]),
            Row(attack: "IPC (SysV, POSIX shared memory)", layers: [ipc, mnt]),
            Row(attack: "new namespaces", layers: [seccomp]),
            Row(attack: "mounts and kernel interfaces", layers: [seccomp]),
            Row(attack: "the terminal", layers: [always("own session + launcher pseudo-terminal")]),
            Row(attack: "setuid programs", layers: [always("no_new_privs")]),
            Row(attack: "resources", layers: [cgroups, rlimits]),
            Row(attack: "the broker folder", layers: [mnt, landlock]),
            // Landlock has no right for these; the supervisor confines them to the container.
            Row(attack: "locks and watches between apps (flock, inotify, fanotify)", layers: [notify]),
            Row(attack: "attributes and times of host files", layers: [notify]),
            Row(attack: "the host's boot id, command line and cgroup names", layers: [mnt]),
        ]
    }

    /// What root lacks where it cannot isolate apps (`SandboxSupport.isolationProblem`), and the remedy.
    public static func privilegeLack(_ problem: String) -> String {
        "root's privileges (here: \(problem); in a container, give it CAP_SYS_ADMIN and CAP_SYS_PTRACE, docs/SANDBOX.md \"In a container\")"
    }

    /// The table as doctor prints it and docs/SANDBOX.md carries it.
    public var table: String {
        var lines = ["| attack class | covered by | status |", "|---|---|---|"]
        for r in rows {
            let absent = r.layers.filter { !$0.present }.map(\.name)
            let by = r.coveredBy.isEmpty ? "-" : r.coveredBy.joined(separator: ", ")
            let status = r.covered ? (absent.isEmpty ? "covered" : "covered (absent: \(absent.joined(separator: ", ")))") : r.status
            lines.append("| \(r.attack) | \(by) | \(status) |")
        }
        lines.append("")
        lines.append("strength: \(strength.rawValue)")
        return lines.joined(separator: "\n")
    }
}
