/// One command line of an app's scripted mode (docs/SCRIPTING.md): a name and its arguments.
///
/// Words are separated by single spaces; a word that is empty or holds a space, a quote, a
/// backslash, a control character or anything outside ASCII is written as a JSON string literal.
/// The same rules serve both ends: `mamlaunch matrix` writes lines with `line`, an app reads them
/// with `parse`, so a payload survives the trip byte for byte.
public struct ScriptCommand: Sendable, Hashable, CustomStringConvertible {
    /// The command's first word (`open-url`, `paste`, ...).
    public var name: String
    public var arguments: [String]

    public init(_ name: String, _ arguments: [String] = []) {
        self.name = name
        self.arguments = arguments
    }

    /// The longest line an app accepts, newline excluded.
    public static let maximumLineBytes = 65_536

    /// The command as one line (no newline).
    public var line: String { ([name] + arguments).map(Self.word).joined(separator: " ") }
    public var description: String { line }

    /// A word as it is written on a line: bare when that reads back the same, else quoted.
    public static func word(_ text: String) -> String {
        let bare = !text.isEmpty && text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C }
        return bare ? text : JSONValue.string(text).json
    }

    /// Reads one line. Throws with the byte offset of the first thing that is wrong.
    public static func parse(_ line: String) throws(ScriptSyntaxError) -> ScriptCommand {
        let bytes = Array(line.utf8)
        guard bytes.count <= maximumLineBytes else {
            throw ScriptSyntaxError(offset: maximumLineBytes, reason: "the line is \(bytes.count) bytes; at most \(maximumLineBytes)")
        }
        var words: [String] = []
        var i = 0
        while i < bytes.count {
            if bytes[i] == 0x20 {
                guard i + 1 < bytes.count, bytes[i + 1] != 0x20, !words.isEmpty else {
                    throw ScriptSyntaxError(offset: i, reason: "words are separated by one space")
                }
                i += 1
                continue
            }
            if bytes[i] == 0x22 {
                let (text, end) = try quoted(bytes, from: i)
                words.append(text)
                i = end
            } else {
                var j = i
                while j < bytes.count, bytes[j] != 0x20 {
                    guard bytes[j] > 0x20, bytes[j] < 0x7F, bytes[j] != 0x5C, bytes[j] != 0x22 else {
                        throw ScriptSyntaxError(offset: j, reason: "a word with this byte (0x\(String(bytes[j], radix: 16))) must be written as a JSON string")
                    }
                    j += 1
                }
                words.append(String(decoding: bytes[i..<j], as: UTF8.self))
                i = j
            }
            if i < bytes.count, bytes[i] != 0x20 {
                throw ScriptSyntaxError(offset: i, reason: "expected a space after a quoted word")
            }
        }
        guard let first = words.first else { throw ScriptSyntaxError(offset: 0, reason: "empty line") }
        return ScriptCommand(first, Array(words.dropFirst()))
    }

    /// A JSON string literal starting at `start`; returns its text and the offset after it.
    private static func quoted(_ bytes: [UInt8], from start: Int) throws(ScriptSyntaxError) -> (String, Int) {
        var j = start + 1
        var escaped = false
        while j < bytes.count {
            if escaped { escaped = false } else if bytes[j] == 0x5C { escaped = true } else if bytes[j] == 0x22 { break }
            j += 1
        }
        guard j < bytes.count else { throw ScriptSyntaxError(offset: start, reason: "unterminated string") }
        guard case let .string(text)? = try? JSONValue.parse(bytes[start...j]) else {
            throw ScriptSyntaxError(offset: start, reason: "not a valid JSON string")
        }
        return (text, j + 1)
    }
}

/// A command line that does not parse: where and why.
public struct ScriptSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Byte offset in the line.
    public var offset: Int
    public var reason: String
    public var description: String { "byte \(offset): \(reason)" }
}
