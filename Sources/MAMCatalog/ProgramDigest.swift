import Crypto
import Foundation

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
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        var hash = SHA256()
        while true {
            // (Foundation answers the end of the file with nil or an empty piece.)
            let chunk: Data?
            do { chunk = try handle.read(upToCount: 1 << 20) } catch { return nil }
            guard let chunk, !chunk.isEmpty else { break }
            hash.update(data: chunk)
        }
        return hash.finalize().map { String(format: "%02x", $0) }.joined()
    }

    /// The digests of an installed app as the broker expects them: its manifest file and the
    /// executable built for it beside the tools (`.build/<configuration>/<executable>`).
    public static func installed(_ app: CatalogApp, toolDirectory: String = Catalog.toolDirectory) -> (manifest: String?, executable: String?) {
        (realPath(app.file).flatMap(sha256(ofFile:)), app.builtExecutable(in: toolDirectory).flatMap(realPath).flatMap(sha256(ofFile:)))
    }
}
