import CMAMSandbox

/// Namespaces by name: clone(2)'s `CLONE_NEW*` flags, their values taken from the kernel's
/// header (isolation.c), never spelled as numbers here.
public struct Namespaces: OptionSet, Sendable, Hashable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let mount = Namespaces(rawValue: mam_clone_newns)
    public static let cgroup = Namespaces(rawValue: mam_clone_newcgroup)
    public static let uts = Namespaces(rawValue: mam_clone_newuts)
    public static let ipc = Namespaces(rawValue: mam_clone_newipc)
    public static let user = Namespaces(rawValue: mam_clone_newuser)
    public static let pid = Namespaces(rawValue: mam_clone_newpid)
    public static let network = Namespaces(rawValue: mam_clone_newnet)
    public static let time = Namespaces(rawValue: mam_clone_newtime)

    /// Each one alone, with its flag's name and its entry in `/proc/self/ns`.
    public static let all: [(namespaces: Namespaces, flag: String, procName: String)] = [
        (.mount, "CLONE_NEWNS", "mnt"), (.cgroup, "CLONE_NEWCGROUP", "cgroup"), (.uts, "CLONE_NEWUTS", "uts"),
        (.ipc, "CLONE_NEWIPC", "ipc"), (.user, "CLONE_NEWUSER", "user"), (.pid, "CLONE_NEWPID", "pid"),
        (.network, "CLONE_NEWNET", "net"), (.time, "CLONE_NEWTIME", "time"),
    ]

    /// The namespaces named in `procNames` (`/proc/self/ns` entries).
    public init(procNames: [String]) {
        self = Namespaces(Self.all.filter { procNames.contains($0.procName) }.map(\.namespaces))
    }
}
