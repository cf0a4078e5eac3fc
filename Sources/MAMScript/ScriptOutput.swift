import Foundation
import Glibc

/// Writes an app's scripted-mode lines to stdout: one JSON object per line, flushed at once, so
/// that a reader on the other end of a pipe sees each result as soon as it exists.
///
/// One lock orders results and events written from different tasks (an event may arrive while a
/// command runs).
public final class ScriptOutput: @unchecked Sendable {
    private let lock = NSLock()
    private let write: @Sendable (String) -> Void

    /// Writes to stdout by default; tests pass a collector.
    public init(write: @escaping @Sendable (String) -> Void = ScriptOutput.standardOutput) {
        self.write = write
    }

    /// One line to descriptor 1 with bare `write` calls (FileHandle's wrapping and a Data per
    /// line were a fifth of an app's cost of answering a command). A reader that has gone away
    /// ends the app as a failed FileHandle write did: SIGPIPE, or the error here.
    public static let standardOutput: @Sendable (String) -> Void = { line in
        var text = line + "\n"
        text.withUTF8 { bytes in
            var at = 0
            while at < bytes.count {
                let n = Glibc.write(1, bytes.baseAddress! + at, bytes.count - at)
                if n < 0 {
                    if errno == EINTR { continue }
                    fatalError("stdout: \(String(cString: strerror(errno)))")
                }
                at += n
            }
        }
    }

    /// The result of command number `id` (fields besides `id` and `command`).
    public func result(_ id: Int, _ command: ScriptCommand, _ fields: [String: JSONValue]) {
        var object = fields
        object["id"] = .number(Double(id))
        object["command"] = .string(command.name)
        emit(.object(object))
    }

    /// A command that failed: one clear line.
    public func failure(_ id: Int, command: String, _ message: String) {
        emit(["id": .number(Double(id)), "command": .string(command), "error": .string(message)])
    }

    /// Something that arrived unasked (a URL, a document, a notice).
    public func event(_ kind: String, _ fields: [String: JSONValue]) {
        var object = fields
        object["event"] = .string(kind)
        emit(.object(object))
    }

    public func emit(_ value: JSONValue) {
        lock.lock()
        defer { lock.unlock() }
        write(value.json)
    }
}
