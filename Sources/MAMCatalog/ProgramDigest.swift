import Crypto
import Foundation
import MAMWire

/// The SHA-256 of a file: what binds an installed app's bundle id to the program built for it
/// and to its manifest (docs/PROTOCOL.md, "Launcher hand-off"). The launcher sends the digests
/// of what it runs; the broker compares them with the installed app's.
public enum ProgramDigest {
    /// The real path of `path`: every symbolic link resolved, so that a link to an installed
    /// app's manifest or program is judged as what it points at, and named as that.
    public static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Lower-case hex SHA-256 of the file's bytes, read in pieces; nil when it cannot be read.
    public static func sha256(ofFile path: String) -> String? {
        OpenProgram(path)?.sha256()
    }

    /// Lower-case hex SHA-256 of `data` (a stand-in's generated manifest).
    public static func sha256(of data: Data) -> String {
        SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }

    /// The digests of an installed app as the broker expects them: its manifest file and the
    /// executable built for it beside the tools (`.build/<configuration>/<executable>`).
    public static func installed(_ app: CatalogApp, toolDirectory: String = Catalog.toolDirectory) -> (manifest: String?, executable: String?) {
        (realPath(app.file).flatMap(sha256(ofFile:)), app.builtExecutable(in: toolDirectory).flatMap(realPath).flatMap(sha256(ofFile:)))
    }
}

/// A program opened once, so that the file hashed is the file run: the launcher executes the
/// descriptor (`LaunchConfiguration.executableDescriptor`), and a name swapped between the hash
/// and the exec no longer decides what runs under an installed app's identity.
public final class OpenProgram: @unchecked Sendable {
    /// Read-only and close-on-exec; the kernel still executes it (execveat reads the program
    /// before it closes the descriptor).
    public let descriptor: Descriptor
    /// An ELF file, which runs from its descriptor; a `#!` script does not (its interpreter would
    /// be handed a /dev/fd name), runs by its path, and so is given no digest to claim an app with.
    public let isNative: Bool

    /// Opens the real file at `path` (links followed); nil when it is not a readable regular file.
    public init?(_ path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            return nil
        }
        var magic = [UInt8](repeating: 0, count: 4)
        isNative = pread(fd, &magic, 4, 0) == 4 && magic == [0x7F, 0x45, 0x4C, 0x46]
        descriptor = Descriptor(adopting: fd)
    }

    /// Lower-case hex SHA-256 of the file's bytes now, read from the descriptor by offset (the
    /// exec does not share a file position with it); nil on a read error.
    public func sha256() -> String? {
        var hash = SHA256()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset: off_t = 0
        while true {
            let n = buffer.withUnsafeMutableBytes { pread(descriptor.rawValue, $0.baseAddress, $0.count, offset) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { return nil }
            if n == 0 { break }
            hash.update(data: buffer[0..<n])
            offset += off_t(n)
        }
        return hash.finalize().map { String(format: "%02x", $0) }.joined()
    }
}
