import Crypto
import Foundation
import Glibc

/// Program digests remembered from one run to the next, by the file's stamp.
///
/// A live matrix's launcher and its broker each hashed the three sample programs (about 55 MB
/// in a release build) at every run, before the first app could be adopted: a tenth of a
/// framework run's first quarter-second. A file whose device, inode, size, modification and
/// change times are those it had when it was hashed holds the same bytes when only root can write
/// it (a write moves the change time, and nobody can set it back; but a store through a mapping
/// already written does not: `vouches(for:)`), so its digest is kept under that stamp.
///
/// The memo is root's: one small file per stamp in a folder of mode 0700 under /run (gone at
/// boot, when inodes may be reused). The broker trusts what it reads there as much as its own
/// hashing, so an entry counts only when the folder and the file belong to this process's user,
/// are not links, and no one else may write them; anything else is hashed again. A process of
/// another user (a non-root launcher) hashes as before.
public struct DigestMemo: Sendable {
    public static let shared = DigestMemo(folder: "/run/mamlab/digests")
    public let folder: String
    /// Entries kept at most: the folder is emptied when a new entry would pass it (each rebuild
    /// of a program adds one).
    public static let limit = 256

    public init(folder: String) {
        self.folder = folder
    }

    /// Whether a file's stamp may stand for its bytes: only when root alone can write it. Its
    /// owner can otherwise change it without moving its times, through a shared writable mapping
    /// whose pages it had written before the stamp was taken (a store to such a page does not
    /// fault, so the kernel does not update the times), and have another program remembered as
    /// the one hashed. The sample programs, root's builds, are what the memo is for.
    public static func vouches(for st: stat) -> Bool {
        st.st_uid == 0 && st.st_mode & 0o022 == 0
    }

    /// The stamp of a file from its `stat`: device, inode, size, modification and change times.
    public static func stamp(_ st: stat) -> String {
        "\(st.st_dev):\(st.st_ino):\(st.st_size):\(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec):\(st.st_ctim.tv_sec).\(st.st_ctim.tv_nsec)"
    }

    /// The digest remembered for `stamp`, when an entry this process can trust holds one.
    public func recall(_ stamp: String) -> String? {
        guard let dir = openFolder(create: false) else { return nil }
        defer { close(dir) }
        let fd = openat(dir, Self.entryName(stamp), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_uid == geteuid(), st.st_mode & 0o077 == 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: 65)
        let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n == 64 else { return nil }
        let digest = bytes.prefix(64)
        guard digest.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else { return nil }
        return String(decoding: digest, as: UTF8.self)
    }

    /// Keeps `digest` (64 lower-case hex digits) under `stamp`; nothing when the folder cannot
    /// be made or trusted.
    public func remember(_ stamp: String, _ digest: String) {
        guard digest.utf8.count == 64, digest.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
              let dir = openFolder(create: true) else { return }
        defer { close(dir) }
        if Self.entries(dir) >= Self.limit { Self.empty(dir) }
        // Written whole under a name of its own, then renamed into place: a reader never sees
        // half an entry, and two writers of the same stamp write the same bytes.
        let name = Self.entryName(stamp)
        let temporary = ".\(name).\(getpid()).\(UInt32.random(in: 0...UInt32.max))"
        let fd = openat(dir, temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return }
        let bytes = Array(digest.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        if written != bytes.count || renameat(dir, temporary, dir, name) != 0 { unlinkat(dir, temporary, 0) }
    }

    /// An entry's name: the stamp's SHA-256 (a fixed length, and nothing of the path in it).
    public static func entryName(_ stamp: String) -> String {
        SHA256.hash(data: Array(stamp.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// The folder, opened without following a link, when it is this user's and no one else's.
    private func openFolder(create: Bool) -> Int32? {
        if create {
            let parent = (folder as NSString).deletingLastPathComponent
            // The parent is made as the other root-only folders under /run/mamlab are.
            try? FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            _ = mkdir(folder, 0o700)
        }
        let dir = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
        guard dir >= 0 else { return nil }
        var st = stat()
        guard fstat(dir, &st) == 0, st.st_uid == geteuid(), st.st_mode & 0o077 == 0 else {
            close(dir)
            return nil
        }
        return dir
    }

    private static func names(_ dir: Int32) -> [String] {
        let copy = dup(dir)
        guard copy >= 0, let stream = fdopendir(copy) else {
            if copy >= 0 { close(copy) }
            return []
        }
        defer { closedir(stream) }
        // The copy shares the folder's position with `dir`: from the start each time.
        rewinddir(stream)
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafePointer(to: entry.pointee.d_name) { String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self)) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    private static func entries(_ dir: Int32) -> Int { names(dir).count }

    private static func empty(_ dir: Int32) {
        for name in names(dir) { unlinkat(dir, name, 0) }
    }
}
