import Foundation
import Glibc

/// The UI identity on screen, kept in the app's container so a killed app comes back under the
/// identity it showed (the real SDK's app restores its screen, and the SDK that screen's
/// identity). A file of at most 4 KiB: the account as written, `""` for personal; no file for
/// "none set". Read back as hostile input: bounded, UTF-8, one line.
final class ScreenState: Sendable {
    let path: String

    init(directory: String = FileManager.default.currentDirectoryPath) {
        path = (directory as NSString).appendingPathComponent(".mamkit-ui-identity")
    }

    func save(_ account: String?) {
        guard let account else {
            unlink(path)
            return
        }
        // Written whole to a new file, then renamed over the old: a kill never leaves half a name.
        let temporary = path + ".new"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return }
        let bytes = Array(account.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == bytes.count else {
            unlink(temporary)
            return
        }
        _ = rename(temporary, path)
    }

    func load() -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        // An empty file is the personal identity (reading it gives no data at all, not an error).
        let data: Data
        do { data = try handle.read(upToCount: 4097) ?? Data() } catch { return nil }
        guard data.count <= 4096, let text = String(data: data, encoding: .utf8), !text.contains(where: { $0.isNewline }) else { return nil }
        return text
    }
}
