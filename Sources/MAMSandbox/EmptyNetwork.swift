import CMAMSandbox
import Foundation
import Glibc

/// The empty network namespace apps run in: one the launcher owns, made once and kept at
/// `/run/mamlab/netns` (the way `ip netns` keeps one), which each app joins with setns.
///
/// Making a network namespace per launch costs about half a millisecond here, and apps cannot
/// use one anyway: the filter refuses `socket` and `socketpair`, so no app can open a socket in
/// it, and one app sees nothing of another through it (no interface but a loopback that is down,
/// no sockets in /proc/net). What it takes away is the host's: its interfaces, its abstract
/// socket names and its /proc/net/unix listing.
enum EmptyNetwork {
    static let directory = "/run/mamlab"
    static let path = directory + "/netns"

    /// A descriptor of the namespace, made and pinned first if need be (needs root).
    static func open() throws -> Int32 {
        if let fd = existing() { return fd }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        // One launcher makes it; others wait for the lock and then find it.
        let lock = Glibc.open(directory + "/netns.lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard lock >= 0 else { throw LaunchError("\(directory)/netns.lock: \(String(cString: strerror(errno)))") }
        defer { close(lock) }
        flock(lock, LOCK_EX)
        if let fd = existing() { return fd }
        let file = Glibc.open(path, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard file >= 0 else { throw LaunchError("\(path): \(String(cString: strerror(errno)))") }
        close(file)
        guard mam_pin_empty_net_namespace(path) == 0 else {
            throw LaunchError("cannot make the apps' network namespace at \(path): \(String(cString: strerror(errno)))")
        }
        guard let fd = existing() else { throw LaunchError("\(path) is not a network namespace after binding one there") }
        return fd
    }

    private static func existing() -> Int32? {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        if mam_is_net_namespace(fd) != 0 { return fd }
        close(fd)
        return nil
    }
}
