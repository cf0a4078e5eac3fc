#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The few system calls file protection makes, each retried on EINTR and turned into a
/// `FileProtectionError` naming the call and the path, so no caller checks `errno` itself.
enum SystemCall {
    static func message(_ e: Int32) -> String { String(cString: strerror(e)) }

    static func failure(_ call: String, _ path: String, _ e: Int32 = errno) -> FileProtectionError {
        switch e {
        case ENOENT: .fileNotFound(path: path)
        case ELOOP: .symbolicLink(path: path)
        case EISDIR: .operationOnDirectory(path: path)
        default: .system(call: call, path: path, errno: e)
        }
    }

    /// Opens `path` without following a symbolic link in its last component, close-on-exec, and
    /// without blocking should a FIFO have been put there.
    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o600, at directory: Int32 = AT_FDCWD) throws(FileProtectionError) -> Int32 {
        while true {
            let fd = openat(directory, path, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, mode)
            if fd >= 0 { return fd }
            let e = errno
            if e == EINTR { continue }
            // O_DIRECTORY reports a link as "not a directory"; name it for what it is.
            var st = Glibc.stat()
            if e == ENOTDIR && fstatat(directory, path, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_mode & S_IFMT == S_IFLNK {
                throw .symbolicLink(path: path)
            }
            throw failure("open", path, e)
        }
    }

    static func stat(_ fd: Int32, _ path: String) throws(FileProtectionError) -> stat {
        var st = Glibc.stat()
        guard fstat(fd, &st) == 0 else { throw failure("fstat", path) }
        return st
    }

    /// Throws unless `fd` is a regular file.
    static func requireRegular(_ fd: Int32, _ path: String) throws(FileProtectionError) -> stat {
        let st = try stat(fd, path)
        switch st.st_mode & S_IFMT {
        case S_IFREG: return st
        case S_IFDIR: throw .operationOnDirectory(path: path)
        default: throw .notRegularFile(path: path)
        }
    }

    /// Reads up to `count` bytes at `offset`, fewer only at the end of the file.
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int, _ path: String) throws(FileProtectionError) -> Int {
        var done = 0
        while done < buffer.count {
            let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
            if n < 0 { if errno == EINTR { continue }; throw failure("pread", path) }
            if n == 0 { break }
            done += n
        }
        return done
    }

    static func read(_ fd: Int32, count: Int, at offset: Int, _ path: String) throws(FileProtectionError) -> [UInt8] {
        var failure: FileProtectionError?
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, got in
            do throws(FileProtectionError) { got = try read(fd, into: UnsafeMutableRawBufferPointer(buffer), at: offset, path) } catch { failure = error; got = 0 }
        }
        if let failure { throw failure }
        return bytes
    }

    static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int, _ path: String) throws(FileProtectionError) {
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset + done))
            if n < 0 { if errno == EINTR { continue }; throw failure("pwrite", path) }
            done += n
        }
    }

    static func write(_ fd: Int32, _ bytes: [UInt8], at offset: Int, _ path: String) throws(FileProtectionError) {
        var failure: FileProtectionError?
        bytes.withUnsafeBytes { raw in
            do throws(FileProtectionError) { try write(fd, raw, at: offset, path) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    static func truncate(_ fd: Int32, to size: Int, _ path: String) throws(FileProtectionError) {
        while ftruncate(fd, off_t(size)) != 0 {
            if errno == EINTR { continue }
            throw failure("ftruncate", path)
        }
    }

    static func sync(_ fd: Int32, _ path: String) throws(FileProtectionError) {
        while fsync(fd) != 0 {
            if errno == EINTR { continue }
            throw failure("fsync", path)
        }
    }
}
