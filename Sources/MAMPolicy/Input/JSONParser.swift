import Foundation

/// A strict RFC 8259 JSON reader that keeps the line and column of every value.
///
/// Foundation's JSON readers say only "the data is not in the correct format"; a policy author
/// needs to know where. This reader reports the byte offset, line and column of the first
/// problem and records the position of each value so later checks can point at it too.
public struct JSONParser {
    public struct SyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
        public var position: SourcePosition
        public var message: String
        public var description: String { "\(position.line):\(position.column): \(message)" }
    }

    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var lineStart = 0
    private var depth = 0
    /// Deeper documents are refused instead of exhausting the stack.
    public static let maximumDepth = 256

    public static func parse(_ data: Data) throws(SyntaxError) -> Node {
        var parser = JSONParser(bytes: Array(data))
        parser.skipByteOrderMark()
        parser.skipWhitespace()
        let node = try parser.parseValue()
        parser.skipWhitespace()
        if parser.index < parser.bytes.count {
            throw parser.error("unexpected text after the end of the document")
        }
        return node
    }

    /// Parses a whole file for a loader: a syntax error becomes the file's one diagnostic.
    public static func document(_ data: Data, file: String) throws(LoadFailure) -> Located {
        do {
            return Located(try parse(data), path: "$", file: file)
        } catch {
            throw LoadFailure([Diagnostic(.error, file: file, path: "", position: error.position, message: error.message)])
        }
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private var position: SourcePosition {
        SourcePosition(line: line, column: index - lineStart + 1, offset: index)
    }

    private func error(_ message: String) -> SyntaxError {
        SyntaxError(position: position, message: message)
    }

    private mutating func skipByteOrderMark() {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3; lineStart = 3 }
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0D: index += 1
            case 0x0A: index += 1; line += 1; lineStart = index
            default: return
            }
        }
    }

    private mutating func parseValue() throws(SyntaxError) -> Node {
        guard index < bytes.count else { throw error("unexpected end of document; expected a value") }
        let start = position
        switch bytes[index] {
        case UInt8(ascii: "{"): return Node(try parseObject(), position: start)
        case UInt8(ascii: "["): return Node(try parseArray(), position: start)
        case UInt8(ascii: "\""): return Node(.string(try parseString()), position: start)
        case UInt8(ascii: "t"): try expectWord("true"); return Node(.bool(true), position: start)
        case UInt8(ascii: "f"): try expectWord("false"); return Node(.bool(false), position: start)
        case UInt8(ascii: "n"): try expectWord("null"); return Node(.null, position: start)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return Node(try parseNumber(), position: start)
        default:
            throw error("unexpected character \(describe(bytes[index])); expected a value")
        }
    }

    private func describe(_ byte: UInt8) -> String {
        if byte >= 0x20 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x" + String(byte, radix: 16, uppercase: true)
    }

    private mutating func expectWord(_ word: String) throws(SyntaxError) {
        let start = position
        for b in word.utf8 {
            guard index < bytes.count, bytes[index] == b else {
                throw SyntaxError(position: start, message: "invalid literal; expected '\(word)'")
            }
            index += 1
        }
    }

    private mutating func enter() throws(SyntaxError) {
        depth += 1
        if depth > Self.maximumDepth { throw error("nesting deeper than \(Self.maximumDepth) levels") }
    }

    private mutating func parseObject() throws(SyntaxError) -> Node.Value {
        try enter()
        defer { depth -= 1 }
        index += 1
        var pairs: [(key: String, value: Node)] = []
        // The keys so far, for the duplicate check: a search of `pairs` per key made an object
        // of 50,000 keys take minutes (a tenant file the broker reads on its loop).
        var keys = Set<String>()
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(pairs) }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw error("expected a quoted key")
            }
            let keyPosition = position
            let key = try parseString()
            if !keys.insert(key).inserted {
                throw SyntaxError(position: keyPosition, message: "duplicate key \"\(key)\"")
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':' after key") }
            index += 1
            skipWhitespace()
            pairs.append((key, try parseValue()))
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of document inside an object") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(pairs) }
            throw error("expected ',' or '}' in an object, found \(describe(bytes[index]))")
        }
    }

    private mutating func parseArray() throws(SyntaxError) -> Node.Value {
        try enter()
        defer { depth -= 1 }
        index += 1
        var items: [Node] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
        while true {
            skipWhitespace()
            items.append(try parseValue())
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of document inside an array") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
            throw error("expected ',' or ']' in an array, found \(describe(bytes[index]))")
        }
    }

    private mutating func parseString() throws(SyntaxError) -> String {
        index += 1
        var scalars = String.UnicodeScalarView()
        var runStart = index
        func flush(_ end: Int) throws(SyntaxError) {
            guard runStart < end else { return }
            guard let run = String(validating: bytes[runStart..<end], as: UTF8.self) else {
                throw SyntaxError(position: position, message: "string is not valid UTF-8")
            }
            scalars.append(contentsOf: run.unicodeScalars)
        }
        while true {
            guard index < bytes.count else { throw error("unterminated string") }
            let b = bytes[index]
            if b == UInt8(ascii: "\"") {
                try flush(index)
                index += 1
                return String(scalars)
            }
            if b < 0x20 { throw error("control character \(describe(b)) inside a string; escape it") }
            if b == UInt8(ascii: "\\") {
                try flush(index)
                index += 1
                guard index < bytes.count else { throw error("unterminated escape") }
                let e = bytes[index]
                index += 1
                switch e {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var code = try parseHex4()
                    if (0xD800...0xDBFF).contains(code) {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                            throw error("unpaired UTF-16 surrogate in \\u escape")
                        }
                        index += 2
                        let low = try parseHex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw error("invalid UTF-16 low surrogate") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw error("\\u escape is not a Unicode scalar") }
                    scalars.append(scalar)
                default:
                    index -= 1
                    throw error("invalid escape \\\(Character(Unicode.Scalar(e)))")
                }
                runStart = index
                continue
            }
            index += 1
        }
    }

    private mutating func parseHex4() throws(SyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[index]
            let digit: UInt8
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = b - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = b - UInt8(ascii: "A") + 10
            default: throw error("invalid hex digit in \\u escape")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func parseNumber() throws(SyntaxError) -> Node.Value {
        let start = index
        var isInteger = true
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        func digits() -> Int {
            let s = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index - s
        }
        guard index < bytes.count else { throw error("truncated number") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                throw error("numbers may not have leading zeros")
            }
        } else if digits() == 0 {
            throw error("invalid number")
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            if digits() == 0 { throw error("expected digits after the decimal point") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            if digits() == 0 { throw error("expected digits in the exponent") }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isInteger, let i = Int(text) { return .integer(i) }
        guard let d = Double(text) else { throw error("number out of range") }
        return .real(d)
    }
}
