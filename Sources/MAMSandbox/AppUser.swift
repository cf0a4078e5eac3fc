import Foundation
import Glibc

/// The uid an app runs under: one per running app, from a range only the launcher hands out.
///
/// A uid of its own keeps an app's files, processes and `RLIMIT_NPROC` count apart from every
/// other app's: with all apps as `nobody`, one app could chmod another's container or exhaust
/// the process limit they shared. A slot is held by an exclusive lock on a file under
/// `/run/mamlab/uids`; the lock lasts as long as the launcher holds the descriptor, so a crashed
/// launcher frees its slot (and its app died with it: it is killed with the launcher).
public struct AppUser: Sendable {
    /// The launcher's range: far above the uids a distribution hands out (and above the
    /// 65,536-wide subordinate ranges container tools use by default).
    public static let first: uid_t = 1_800_000_000
    public static let count: uid_t = 16_384
    static let lockDirectory = "/run/mamlab/uids"

    public let uid: uid_t
    /// The lock's descriptor; closing it frees the slot.
    let lock: Int32

    /// Takes the first free uid of the range. Needs root (the lock folder is root's).
    static func acquire() throws -> AppUser {
        try FileManager.default.createDirectory(atPath: lockDirectory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        for slot in 0..<count {
            let uid = first + slot
            let fd = open("\(lockDirectory)/\(uid)", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard fd >= 0 else { throw LaunchError("cannot take an app uid: \(lockDirectory)/\(uid): \(String(cString: strerror(errno)))") }
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { return AppUser(uid: uid, lock: fd) }
            close(fd)
        }
        throw LaunchError("cannot take an app uid: all \(count) uids from \(first) are held by running apps")
    }

    func release() { close(lock) }
}
