#if canImport(Glibc)
import Glibc

/// A new file beside `path` that replaces it only once complete: created with O_EXCL under a
/// random name in the same directory, flushed, then renamed over `path` and the directory
/// flushed, so a crash leaves either the old file or the new one, never half of either.
struct ReplacementFile {
    let path: String
    let fd: Int32
    private let directory: Int32
    private let name: String
    private let temporaryName: String

    init(replacing path: String, permissions: mode_t) throws(FileProtectionError) {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard !name.isEmpty, name != ".", name != ".." else { throw .invalidArgument("\(path): not a file name") }
        let directory = try SystemCall.open(folder, O_RDONLY | O_DIRECTORY)
        let temporaryName = ".\(name.prefix(100)).\(randomBytes(8).map { String($0, radix: 16) }.joined()).mamlab-tmp"
        do throws(FileProtectionError) {
            fd = try SystemCall.open(temporaryName, O_RDWR | O_CREAT | O_EXCL, mode: permissions, at: directory)
        } catch {
            Glibc.close(directory)
            throw error
        }
        self.path = path
        self.directory = directory
        self.name = name
        self.temporaryName = temporaryName
    }

    /// Flushes the new file and renames it over `path`.
    func commit() throws(FileProtectionError) {
        do throws(FileProtectionError) {
            try SystemCall.sync(fd, path)
            guard renameat(directory, temporaryName, directory, name) == 0 else { throw SystemCall.failure("rename", path) }
            _ = fsync(directory)
            Glibc.close(fd)
            Glibc.close(directory)
        } catch {
            abandon()
            throw error
        }
    }

    /// Removes the new file; `path` stays as it was.
    func abandon() {
        _ = unlinkat(directory, temporaryName, 0)
        Glibc.close(fd)
        Glibc.close(directory)
    }
}
#endif
