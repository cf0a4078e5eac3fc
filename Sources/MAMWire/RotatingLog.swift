import Foundation
import Glibc

/// A log file a child process writes through a pipe, kept bounded: once the file reaches
/// `limit` bytes it becomes `<name>.1` (replacing the older one) and a new file begins, so at
/// most twice the limit is ever kept however fast the child writes. The files are root's alone
/// (0600 in a 0700 folder): an app's log holds the URLs and documents names it was sent.
///
/// The pipe slows a child that writes faster than the disk takes it; it never blocks the
/// process that started the child.
public enum RotatingLog {
    /// The default bound of one file: a day of an ordinary app's output, seconds of a flood.
    public static let defaultLimit = 4 << 20

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Opens `path` (its folder made 0700 if needed) and returns the write end of a pipe into it,
    /// close-on-exec, for a child's standard output or error: give it to the child, then let it go.
    /// A thread copies what arrives until every holder of the write end has closed it.
    ///
    /// `coalesce`: seconds the copier waits after each read, so that a chatty writer's lines are
    /// copied a batch at a time instead of waking it once per line (a live matrix's apps log a
    /// line or two per cell); its pipe is then made larger, so that a writer rarely waits on it.
    public static func pipe(into path: String, limit: Int = defaultLimit, coalesce: Double = 0) throws -> Descriptor {
        let folder = (path as NSString).deletingLastPathComponent
        try privateFolder(folder)
        let file = try open(path)
        var ends: [Int32] = [-1, -1]
        // Close-on-exec at once (pipe2 is not in Glibc's Swift module): the window before
        // fcntl only matters to a fork in between, which would hold the log open a little longer.
        guard Glibc.pipe(&ends) == 0 else {
            close(file)
            throw Failure(description: "\(path): cannot make a pipe for the log: \(String(cString: strerror(errno)))")
        }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        // F_SETPIPE_SZ (1031, not in Glibc's Swift module); a pipe that stays at 64 KiB only
        // means a writer that fills it in one pause waits for the copier.
        if coalesce > 0 { _ = fcntl(ends[1], 1031, 1 << 20) }
        let reader = ends[0]
        let thread = Thread { copy(from: reader, to: file, path: path, limit: limit, coalesce: coalesce) }
        thread.name = "mam-log"
        thread.start()
        return Descriptor(adopting: ends[1])
    }

    /// Copies until every writer has closed the pipe, rotating at `limit`.
    static func copy(from reader: Int32, to first: Int32, path: String, limit: Int, coalesce: Double = 0) {
        var file = first
        var st = stat()
        var written = fstat(file, &st) == 0 ? Int(st.st_size) : 0
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(reader, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            if written > 0 && written + n > limit, let next = try? rotate(path, file) {
                file = next
                written = 0
            }
            var offset = 0
            while offset < n {
                let w = buffer.withUnsafeBytes { write(file, $0.baseAddress! + offset, n - offset) }
                if w < 0 && errno == EINTR { continue }
                if w <= 0 { break }  // a full disk: the rest of this chunk is lost, the child is not stopped
                offset += w
            }
            written += n
            if coalesce > 0, n < buffer.count { usleep(useconds_t(min(coalesce, 1) * 1_000_000)) }
        }
        close(reader)
        close(file)
    }

    /// Makes `folder` (and its parents) and leaves it 0700: a folder another user can list or
    /// enter would show the logs' names and, if it was theirs, let them swap a file for a link.
    public static func privateFolder(_ folder: String) throws {
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var st = stat()
        guard lstat(folder, &st) == 0, st.st_mode & S_IFMT == S_IFDIR else {
            throw Failure(description: "\(folder): not a folder the logs can be kept in")
        }
        guard st.st_uid == geteuid() else { throw Failure(description: "\(folder): belongs to uid \(st.st_uid), not to this process") }
        guard chmod(folder, 0o700) == 0 else { throw Failure(description: "\(folder): cannot be made private: \(String(cString: strerror(errno)))") }
    }

    /// Opens the log for appending, 0600, never through a link.
    static func open(_ path: String, truncate: Bool = false) throws -> Int32 {
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC | (truncate ? O_TRUNC : 0), 0o600)
        guard fd >= 0 else { throw Failure(description: "\(path): cannot open the log: \(String(cString: strerror(errno)))") }
        // An older file may have been made with the umask's mode.
        _ = fchmod(fd, 0o600)
        return fd
    }

    /// `path` becomes `path.1`; a new, empty `path` is returned and the old descriptor closed.
    /// On failure the old file goes on (unbounded rather than silent).
    static func rotate(_ path: String, _ file: Int32) throws -> Int32 {
        guard rename(path, path + ".1") == 0 else { throw Failure(description: "\(path): cannot rotate: \(String(cString: strerror(errno)))") }
        let next = try open(path, truncate: true)
        close(file)
        return next
    }
}
