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
