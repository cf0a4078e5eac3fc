import Glibc

/// What the supervisor does with a system call the filter sends it.
public enum SyscallAction: Sendable, Equatable {
    /// Fail the call with this errno; the app sees an ordinary error and carries on.
    case deny(Int32)
    /// Fail the call, report it, and kill the app.
    case kill
}

/// The system calls an app may not make, and what happens when it tries (docs/SANDBOX.md).
///
/// Every listed call goes to the supervisor (seccomp user notification) rather than being
/// answered by the kernel alone, so each attempt is reported by name and the app cannot
/// silence the report.
public enum SyscallPolicy {
    /// Calls that ordinary programs probe and handle: refused with an errno.
    public static let denied: [(String, Int32)] = [
        // No new sockets or connections of any family: the broker connection is the only way out.
        ("socket", EPERM), ("socketpair", EPERM), ("connect", EPERM), ("bind", EPERM), ("listen", EPERM),
        ("accept", EPERM), ("accept4", EPERM),
        // Kernel surfaces a sandboxed app has no use for; libraries fall back when they fail.
        ("io_uring_setup", ENOSYS), ("io_uring_enter", ENOSYS), ("io_uring_register", ENOSYS),
        ("perf_event_open", EACCES), ("userfaultfd", EPERM),
        ("keyctl", ENOSYS), ("add_key", ENOSYS), ("request_key", ENOSYS),
        // A filter of the app's own could answer its notifications once the launcher's listener
        // is gone; an app has no business with seccomp at all.
        ("seccomp", EPERM),
        // fanotify sees every file event of a mount or a whole file system: new names in host
        // folders Landlock keeps unlistable, and a channel between apps. (inotify is confined below.)
        ("fanotify_init", EPERM), ("fanotify_mark", EPERM),
    ]

    /// `fcntl` record-lock commands (<fcntl.h>), confined as `flock` is: a read lock, which a
    /// read-only descriptor may take, shows to another app's F_GETLK query for a write lock,
    /// and that carries a bit.
    public static let lockCommands: [(name: String, command: Int32)] = [
        ("F_GETLK", 5), ("F_SETLK", 6), ("F_SETLKW", 7), ("F_OFD_GETLK", 36), ("F_OFD_SETLK", 37), ("F_OFD_SETLKW", 38),
    ]

    /// `fcntl` commands refused (and reported): `F_NOTIFY` (dnotify) watches a folder the app
    /// may only read and is told of every read and new name in it, so another app reading a
    /// shared system file would carry a bit; it is no Landlock right.
    public static let refusedFcntl: [(name: String, command: Int32)] = [("F_NOTIFY", 1026)]  // <fcntl.h>

    /// Calls allowed on the app's own files only (its container, /dev/null), refused with EACCES
    /// and reported elsewhere; every file a call names must qualify. The supervisor performs
    /// them itself on the file it judged (PerformedCalls.swift), never letting the app's call
    /// run after the check.
    ///
    /// Landlock has no right for the first group, so an app could otherwise pass bits to another
    /// through `flock` on a read-only system file both can open, learn new names in host folders
    /// through `inotify`, or stamp attributes and times on any host file its uid may write (a
    /// world-writable one). Landlock refuses the second group outside the grant, but silently:
    /// here each attempt is reported by name and path.
    public static let confined: [String] = [
        "flock", "inotify_add_watch",
        "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
        "utimensat", "futimesat", "utimes", "utime",
        // Changes to names, which Landlock's write rights cover.
        "mkdir", "mkdirat", "rmdir", "unlink", "unlinkat", "mknod", "mknodat",
        "rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat",
        "truncate",
    ]

    /// `prctl` options refused (and reported): the app may neither clear its parent-death
    /// signal (it would outlive the launcher) nor install a filter through the old interface.
    public static let refusedPrctl: [(name: String, option: Int32)] = [
        ("PR_SET_PDEATHSIG", 1), ("PR_SET_SECCOMP", 22),  // <linux/prctl.h>
    ]

    /// `clone` with any of these flags makes a namespace, in which the app would hold every
    /// capability: the app is killed. `clone3` hides its flags in memory a filter cannot read, so
    /// the kernel answers it ENOSYS and the C library falls back to `clone`.
    public static let namespaceFlags: [(name: String, flag: Int32)] = Namespaces.all.map { ($0.flag, $0.namespaces.rawValue) }

    /// Calls whose only use here is an attack on the host or another process: the app is killed.
    public static let fatal: [String] = [
        "ptrace", "process_vm_readv", "process_vm_writev",
        "mount", "umount2", "pivot_root", "unshare", "setns", "fsopen", "fsmount", "move_mount", "open_tree",
        "bpf", "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
        "reboot", "swapon", "swapoff", "open_by_handle_at",
    ]

    /// The app's own exec is let through once; any later exec is refused (Landlock's execute
    /// right cannot stop `ld.so /bin/sh`, this can).
    public static let exec = ["execve", "execveat"]

    /// Signals: allowed inside the app's own process group, reported elsewhere (Landlock's
    /// signal scope refuses them either way on ABI 6).
    public static let signals = ["kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_send_signal"]

    public static func action(for name: String) -> SyscallAction? {
        if let d = denied.first(where: { $0.0 == name }) { return .deny(d.1) }
        if fatal.contains(name) { return .kill }
        return nil
    }
}
