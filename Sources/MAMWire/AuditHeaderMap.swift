import CMAMWire
import Glibc

/// An audit log's header, mapped read-only and shared with the broker that writes it: the
/// committed length read with no system call (the live matrix reads it before and after every
/// cell, and opening the file for it was two thirds of the launcher's system calls per cell).
///
/// The mapping follows the file it was made from: once the broker sets that log aside, it says
/// how far the set-aside log goes, which no longer grows.
public final class AuditHeaderMap: @unchecked Sendable {
    /// Never written through (mapped read-only); its page is the broker's own.
    private let header: UnsafeMutableRawPointer

    /// nil when the file is missing, is not a regular file, or does not start with a header.
    public init?(path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        // A file shorter than its header would fault at the read (SIGBUS): refused here. The
        // broker never shortens its log.
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_size >= AuditFile.headerSize,
              let p = mmap(nil, AuditFile.headerSize, PROT_READ, MAP_SHARED, fd, 0), p != MAP_FAILED else { return nil }
        header = p
        let whole = UnsafeRawBufferPointer(start: p, count: AuditFile.headerSize)
        guard AuditFile.committed(whole) != nil else {
            munmap(p, AuditFile.headerSize)
            return nil
        }
    }

    deinit { munmap(header, AuditFile.headerSize) }

    /// Where the committed records end: one acquire load of the field the broker raises with
    /// one release store after each whole record.
    public var committed: Int? {
        let word = mam_load_acquire_u64(header + AuditFile.committedOffset)
        return withUnsafeBytes(of: word) { AuditFile.committed(field: $0) }
    }
}
