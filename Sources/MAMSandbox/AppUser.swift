import Foundation
import Glibc

/// The uid an app runs under: one per running app (its instances share it), from a range only
/// the launcher hands out.
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

    /// The uid for an instance of `bundleID` whose on-disk container `containerOwner` owns: the
    /// uid a running instance of the same app holds, else the first free uid of the range. A
    /// second instance of a running app shares its uid: were it given a new one, handing it the
    /// container (mode 0700) would lock the running instance out of its own files. Needs root
    /// (the lock folder is root's).
    ///
    /// A slot's lock file names the app holding it; its holders keep a shared lock, so a free
    /// slot is one whose exclusive lock can be had.
    static func acquire(for bundleID: String, containerOwner: uid_t?) throws -> AppUser {
        try FileManager.default.createDirectory(atPath: lockDirectory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        if let owner = containerOwner, ContainerOwner.isAppUID(owner), let shared = join(owner, bundleID: bundleID) { return shared }
        for slot in 0..<count {
            let uid = first + slot
            let fd = open("\(lockDirectory)/\(uid)", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard fd >= 0 else { throw LaunchError("cannot take an app uid: \(lockDirectory)/\(uid): \(String(cString: strerror(errno)))") }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { close(fd); continue }
            // Named while held alone, then shared with later instances of the app. (Linux drops
            // the lock while converting it: a launcher that took the slot meanwhile keeps it.)
            let name = Array(bundleID.utf8)
            guard ftruncate(fd, 0) == 0, pwrite(fd, name, name.count, 0) == name.count, flock(fd, LOCK_SH | LOCK_NB) == 0 else {
                close(fd)
                continue
            }
            return AppUser(uid: uid, lock: fd)
        }
        throw LaunchError("cannot take an app uid: all \(count) uids from \(first) are held by running apps")
    }

    /// `uid`, shared, when running instances of `bundleID` hold it; nil when it is free or
    /// another app's.
    static func join(_ uid: uid_t, bundleID: String) -> AppUser? {
        let fd = open("\(lockDirectory)/\(uid)", O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        // Held (no exclusive lock to be had), and shared (not being named by a new holder).
        guard flock(fd, LOCK_EX | LOCK_NB) != 0, flock(fd, LOCK_SH | LOCK_NB) == 0 else {
            close(fd)
            return nil
        }
        var bytes = [UInt8](repeating: 0, count: 256)
        let n = pread(fd, &bytes, bytes.count, 0)
        guard n > 0, String(decoding: bytes.prefix(n), as: UTF8.self) == bundleID else {
            close(fd)
            return nil
        }
        return AppUser(uid: uid, lock: fd)
    }

    func release() { close(lock) }
}
