import Foundation
import Glibc

/// Hands a kept container's contents to the uid the app runs under this time.
///
/// Each launch takes the first free uid of the launcher's range (`AppUser`), so a container kept
/// from an earlier run may hold files of another app uid, mode 0600: the relaunched app could
/// not read what it kept (its registered accounts, the identity it showed). The launcher, as
/// root, gives them to the new uid first. The container is the app's, so hostile: the walk
/// never follows a link (every step `openat` with `O_NOFOLLOW`; an entry is checked and changed
/// through one `O_PATH` descriptor), stays on the container's file system, changes only entries an app
/// uid owns (a file of root or of a person is never given away, whatever link put it there),
/// skips a regular file with more than one link, and stops after `limit` entries or `depth`
/// levels.
enum ContainerOwner {
    static let limit = 100_000
    static let depth = 64

    /// Gives what `directory` (an open container) holds to `uid`; returns how many entries changed.
    @discardableResult
    static func hand(_ directory: Int32, to uid: uid_t) -> Int {
        var root = stat()
        guard fstat(directory, &root) == 0 else { return 0 }
        var budget = limit
        return walk(directory, device: root.st_dev, to: uid, level: 0, budget: &budget)
    }

    static func isAppUID(_ uid: uid_t) -> Bool { uid >= AppUser.first && uid < AppUser.first &+ AppUser.count }

    private static func walk(_ directory: Int32, device: dev_t, to uid: uid_t, level: Int, budget: inout Int) -> Int {
        guard level < depth else { return 0 }
        // A descriptor of its own for reading: fdopendir takes it over.
        let reading = openat(directory, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
        guard reading >= 0, let stream = fdopendir(reading) else {
            if reading >= 0 { close(reading) }
            return 0
        }
        defer { closedir(stream) }
        var changed = 0
        while budget > 0, let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name == "." || name == ".." { continue }
            budget -= 1
            // Checked and changed through one descriptor (O_PATH, the link itself for a link): a
            // running instance of the app cannot swap the name for another inode in between.
            let node = openat(directory, name, oPath | O_NOFOLLOW | O_CLOEXEC)
            guard node >= 0 else { continue }
            defer { close(node) }
            var s = stat()
            guard fstat(node, &s) == 0, s.st_dev == device else { continue }
            let kind = s.st_mode & S_IFMT
            if isAppUID(s.st_uid), s.st_uid != uid, kind != S_IFREG || s.st_nlink == 1 {
                if fchownat(node, "", uid, uid, atEmptyPath | AT_SYMLINK_NOFOLLOW) == 0 { changed += 1 }
            }
            if kind == S_IFDIR {
                let child = openat(directory, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
                guard child >= 0 else { continue }
                changed += walk(child, device: device, to: uid, level: level + 1, budget: &budget)
                close(child)
            }
        }
        return changed
    }
}

/// The one running instance of an app that keeps its container on disk (`--limit disk=none`).
///
/// The on-disk container (mode 0700) is handed to the uid of the instance that uses it. A second
/// instance keeping it too would take a uid of its own, and handing it the folder would lock the
/// running one out of its own files (and give them to the newcomer). Joining the running one's
/// uid instead would share that uid's `RLIMIT_NPROC` count: one instance's processes would stop
/// the other's forks and threads, and a uid found by the app's name alone was joined across
/// unrelated containers roots. So one instance at a time keeps the folder, and another that
/// asks to is refused; an instance with its container in memory (the default) never touches it.
/// A claim is an exclusive lock on a root-only file named after the folder's device and inode,
/// held for as long as the app runs; a crashed launcher frees it.
struct ContainerClaim {
    static let lockDirectory = "/run/mamlab/containers"
    /// The lock's descriptor; closing it ends the claim.
    let lock: Int32

    /// Claims the container open at `container` (`path` and `bundleID` name it in the refusal).
    /// Needs root (the lock folder is root's).
    static func take(_ container: Int32, path: String, bundleID: String) throws -> ContainerClaim {
        var folder = stat()
        guard fstat(container, &folder) == 0 else { throw LaunchError("\(path): \(String(cString: strerror(errno)))") }
        try FileManager.default.createDirectory(atPath: lockDirectory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let file = "\(lockDirectory)/\(folder.st_dev)-\(folder.st_ino)"
        let fd = open(file, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw LaunchError("cannot claim \(path): \(file): \(String(cString: strerror(errno)))") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno
            close(fd)
            guard reason == EWOULDBLOCK else { throw LaunchError("cannot claim \(path): \(file): \(String(cString: strerror(reason)))") }
            throw LaunchError("cannot launch \(bundleID): a running instance of it keeps its container \(path) on disk"
                              + " (--limit disk=none), and this one would take the folder from it; start this one with its"
                              + " container in memory (without disk=none), or after the other ends")
        }
        return ContainerClaim(lock: fd)
    }

    func release() { close(lock) }
}
