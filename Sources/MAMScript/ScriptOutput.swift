import Foundation

/// Writes an app's scripted-mode lines to stdout: one JSON object per line, flushed at once, so
/// that a reader on the other end of a pipe sees each result as soon as it exists.
///
/// One lock orders results and events written from different tasks (an event may arrive while a
/// command runs).
public final class ScriptOutput: @unchecked Sendable {
    private let lock = NSLock()
    private let write: @Sendable (String) -> Void

    /// Writes to stdout by default; tests pass a collector.
    public init(write: @escaping @Sendable (String) -> Void = { line in
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }) {
        self.write = write
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
