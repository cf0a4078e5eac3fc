#if canImport(Glibc)
import Glibc

/// What `removeFiles(ownedBy:under:)` did: the files it removed and what it passed over, with
/// paths relative to the folder it walked.
public struct FileRemovalReport: Sendable, Equatable {
    public struct Skipped: Sendable, Equatable {
        public var path: String
        public var reason: String
    }

    public var removed: [String] = []
    public var skipped: [Skipped] = []
}

extension FileOwnership {
    /// How many directories deep `removeFiles` goes below the folder it is given.
    public static let maximumDepth = 64

    /// Removes every regular file under `folder` whose owner attribute names `owner`'s account:
    /// what the SDK does on a selective wipe when the app leaves the removal to it. Personal
    /// files and other accounts' files stay.
    ///
    /// The walk goes from descriptor to descriptor (openat, fstatat, unlinkat), so a symbolic
    /// link is never followed, whether it was there before or swapped in during the walk; it
    /// does not cross into another mounted file system and stops `maximumDepth` levels down.
    /// A file whose owner attribute is unreadable or malformed is left and reported as skipped.
    public static func removeFiles(ownedBy owner: DataOwner, under folder: String) throws(FileProtectionError) -> FileRemovalReport {
        guard !owner.isNobody else { throw .unmanagedIdentity(path: folder) }
        let root = try SystemCall.open(folder, O_RDONLY | O_DIRECTORY)
        let device = try SystemCall.stat(root, folder).st_dev
        var report = FileRemovalReport()
        var walk = Walk(owner: owner, device: device, report: report)
        walk.visit(directory: root, path: "", depth: 0)
        report = walk.report
        return report
    }

    private struct Walk {
        let owner: DataOwner
        let device: dev_t
        var report: FileRemovalReport

        /// Visits the open directory `fd` (and closes it).
        mutating func visit(directory fd: Int32, path: String, depth: Int) {
            guard let stream = fdopendir(fd) else {
                close(fd)
                return skip(path, "cannot list: \(SystemCall.message(errno))")
            }
            defer { closedir(stream) }
            let dfd = dirfd(stream)
            for name in names(stream) {
                let child = path.isEmpty ? display(name) : path + "/" + display(name)
                var st = stat()
                guard fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else { skip(child, "fstatat: \(SystemCall.message(errno))"); continue }
                let kind = st.st_mode & S_IFMT
                guard kind == S_IFDIR || kind == S_IFREG else { continue }
                guard st.st_dev == device else { skip(child, "on another file system"); continue }
                if kind == S_IFDIR {
                    guard depth < maximumDepth else { skip(child, "deeper than \(maximumDepth) levels"); continue }
                    guard let sub = open(name, in: dfd, like: st, flags: O_RDONLY | O_DIRECTORY, child) else { continue }
                    visit(directory: sub, path: child, depth: depth + 1)
                } else {
                    guard let file = open(name, in: dfd, like: st, flags: O_RDONLY, child) else { continue }
                    let found: DataOwner
                    do throws(FileProtectionError) { found = try FileOwnership.owner(of: file, path: child) } catch {
                        close(file)
                        skip(child, "\(error)")
                        continue
                    }
                    close(file)
                    guard found.isSameAccount(as: owner) else { continue }
                    if unlinkat(dfd, name, 0) == 0 { report.removed.append(child) } else { skip(child, "unlink: \(SystemCall.message(errno))") }
                }
            }
        }

        /// Opens `name` without following a link and checks it is still what fstatat saw: a
        /// swap between the two is skipped, not followed.
        mutating func open(_ name: [CChar], in dfd: Int32, like st: stat, flags: Int32, _ path: String) -> Int32? {
            let fd = openat(dfd, name, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
            guard fd >= 0 else { skip(path, "open: \(SystemCall.message(errno))"); return nil }
            var now = stat()
            guard fstat(fd, &now) == 0, now.st_dev == st.st_dev, now.st_ino == st.st_ino else {
                close(fd)
                skip(path, "changed while being walked")
                return nil
            }
            return fd
        }

        /// The directory's entries as raw names (not necessarily UTF-8), without "." and "..".
        func names(_ stream: OpaquePointer) -> [[CChar]] {
            var out: [[CChar]] = []
            while let entry = readdir(stream) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    Array(raw.bindMemory(to: CChar.self).prefix(while: { $0 != 0 })) + [0]
                }
                if name == [0x2e, 0] || name == [0x2e, 0x2e, 0] { continue }
                out.append(name)
            }
            return out
        }

        func display(_ name: [CChar]) -> String {
            String(decoding: name.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }

        mutating func skip(_ path: String, _ reason: String) {
            report.skipped.append(.init(path: path.isEmpty ? "." : path, reason: reason))
        }
    }
}
#endif
