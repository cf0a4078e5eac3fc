import Foundation
import Glibc

/// The UI identity on screen, kept in the app's container so a killed app comes back under the
/// identity it showed (the real SDK's app restores its screen, and the SDK that screen's
/// identity). A file of at most 4 KiB: the account as written and a line break (`"\n"` alone
/// for personal); no file for "none set". Read back as hostile input: bounded, UTF-8, and only
/// what comes before the first line break counts.
///
/// The file is opened once and then overwritten in place: in the sandbox every open for
/// writing and every rename is a round trip to the launcher's supervisor, and a live matrix
/// switches identities hundreds of times a run (writing a new file and renaming it over the
/// old cost two round trips per switch). A name shorter than the last leaves the old name's
/// tail after its line break until the file is cut to length, and a kill in between loses
/// nothing: the reader stops at the first break.
package final class ScreenState: Sendable {
    package let path: String
    /// The open file, or -1 (none yet, or removed).
    private let file = Locked<Int32>(-1)

    package init(directory: String = FileManager.default.currentDirectoryPath) {
        path = (directory as NSString).appendingPathComponent(".mamkit-ui-identity")
    }

    deinit {
        let fd = file.withLock { $0 }
        if fd >= 0 { close(fd) }
    }

    package func save(_ account: String?) {
        file.withLock { fd in
            guard let account else {
                if fd >= 0 { close(fd) }
                fd = -1
                unlink(path)
                return
            }
            // A file removed under it (a wipe of the container) is made again.
            var st = stat()
            if fd >= 0, fstat(fd, &st) != 0 || st.st_nlink == 0 {
                close(fd)
                fd = -1
            }
            if fd < 0 { fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600) }
            guard fd >= 0 else { return }
            let bytes = Array(account.utf8) + [0x0A]
            let written = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
            if written == bytes.count {
                _ = ftruncate(fd, off_t(bytes.count))
            } else {
                // Half a name must not come back: nothing set rather than a wrong identity.
                close(fd)
                fd = -1
                unlink(path)
            }
        }
    }

    package func load() -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        let data: Data
        do { data = try handle.read(upToCount: 4098) ?? Data() } catch { return nil }
        // An earlier kit's file has no line break: the whole file is the name.
        let line = data.firstIndex(of: 0x0A).map { data[data.startIndex..<$0] } ?? data
        guard line.count <= 4096, let text = String(data: line, encoding: .utf8), !text.contains(where: { $0.isNewline }) else { return nil }
        return text
    }
}
