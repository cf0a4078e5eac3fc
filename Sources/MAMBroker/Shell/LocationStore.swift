import CMAMWire
import Foundation
import Glibc
import MAMBrokerCore
import MAMWire

/// The storage locations on disk: `DIR/locations/<folder>[/<account>]/<name>`. Every open,
/// create and rename happens beneath the locations directory's descriptor with openat2
/// (`RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`), so no name, symlink or
/// `..` can lead the broker (root) outside it, and only regular files are ever opened.
final class LocationStore: @unchecked Sendable {
    let root: Int32
    let path: String

    struct Failure: Error, CustomStringConvertible {
        var description: String
        var missing = false
    }

    init(path: String) throws {
        self.path = path
        // Root's own, or refused (TrustedPath); what is beneath it is resolved strictly.
        do { root = try TrustedPath.folder(path, mode: 0o700).release() } catch {
            throw BrokerError("cannot keep the storage locations in \(error)")
        }
        for folder in BrokerCore.locationFolders where mam_mkdir_beneath(root, folder, 0o700) != 0 {
            throw BrokerError("cannot make \(path)/\(folder): \(String(cString: strerror(errno)))")
        }
        removeLeftovers()
    }

    /// A broker killed in the middle of a save leaves its `.partial-*` file behind; nothing
    /// refers to it, so it goes at the next start.
    private func removeLeftovers() {
        let fm = FileManager.default
        for folder in BrokerCore.locationFolders {
            let dirs = [folder] + ((try? fm.contentsOfDirectory(atPath: path + "/" + folder)) ?? []).filter { !$0.hasPrefix(".") }.map { folder + "/" + $0 }
            for dir in dirs {
                let fd = mam_wire_open_beneath(root, dir, O_RDONLY | O_DIRECTORY, 0)
                guard fd >= 0 else { continue }
                for name in (try? fm.contentsOfDirectory(atPath: path + "/" + dir)) ?? [] where name.hasPrefix(".partial-") {
                    _ = mam_unlink_in(fd, name)
                }
                close(fd)
            }
        }
    }

    deinit { close(root) }

    /// The directory of a stored file, made when missing; the caller closes it.
    private func directory(_ key: StoredFileKey, create: Bool) throws(Failure) -> Int32 {
        var dir = mam_wire_open_beneath(root, key.folder, O_RDONLY | O_DIRECTORY, 0)
        guard dir >= 0 else { throw Failure(description: "\(key.folder): \(String(cString: strerror(errno)))") }
        if let account = key.accountFolder {
            if create && mam_mkdir_beneath(dir, account, 0o700) != 0 {
                let e = errno
                close(dir)
                throw Failure(description: "\(key.folder)/\(account): \(String(cString: strerror(e)))")
            }
            let sub = mam_wire_open_beneath(dir, account, O_RDONLY | O_DIRECTORY, 0)
            let e = errno
            close(dir)
            guard sub >= 0 else { throw Failure(description: "\(key.folder)/\(account): \(String(cString: strerror(e)))", missing: e == ENOENT) }
            dir = sub
        }
        return dir
    }

    /// Copies `size` bytes of `source` from offset 0 with the kernel (never through the broker's
    /// memory) into the file, which appears whole or not at all: written under a fresh
    /// `O_EXCL` name beside it, then renamed over. Not fsynced: a kill of the broker at any
    /// moment leaves the old file or the new one, and an fsync per save let one app's flood of
    /// large saves stall every other app's audit append behind ext4's journal commits.
    func store(_ key: StoredFileKey, from source: Int32, size: Int) throws(Failure) {
        let dir = try directory(key, create: true)
        defer { close(dir) }
        var temporary = ""
        var out: Int32 = -1
        for _ in 0..<8 {
            temporary = ".partial-\(UInt64.random(in: 0...UInt64.max))"
            out = mam_wire_open_beneath(dir, temporary, O_WRONLY | O_CREAT | O_EXCL, 0o600)
            if out >= 0 || errno != EEXIST { break }
        }
        guard out >= 0 else { throw Failure(description: "\(key): cannot create a temporary file: \(String(cString: strerror(errno)))") }
        let copied = mam_copy_range(out, source, 0, Int64(size))
        let synced = copied == Int64(size)
        close(out)
        guard synced, mam_rename_in(dir, temporary, key.name) == 0 else {
            let e = errno
            _ = mam_unlink_in(dir, temporary)
            throw Failure(description: "\(key): \(copied == Int64(size) ? String(cString: strerror(e)) : "copied \(copied) of \(size) bytes")")
        }
    }

    /// Opens a stored file read-only. A FIFO, a device, a directory or a symlink put in its
    /// place gets an error, never a descriptor.
    func open(_ key: StoredFileKey) throws(Failure) -> Int32 {
        let dir = try directory(key, create: false)
        defer { close(dir) }
        let fd = mam_wire_open_beneath(dir, key.name, O_RDONLY, 0)
        guard fd >= 0 else {
            let e = errno
            throw Failure(description: "\(key): \(String(cString: strerror(e)))", missing: e == ENOENT)
        }
        guard mam_regular_file(fd, nil, nil) == 1 else {
            close(fd)
            throw Failure(description: "\(key) is not a regular file")
        }
        return fd
    }
}
