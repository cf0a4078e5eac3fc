/// JSONValue's own text form, written and read without Foundation's coders: every scripted
/// app writes a line per result and event, and the matrix reads each back, so the coders'
/// generic machinery (a `try` per case tried while decoding, boxed containers while encoding)
/// was a tenth of a live matrix's CPU. The bytes are those JSONEncoder wrote with `.sortedKeys`
/// and `.withoutEscapingSlashes` (JSONTextTests compares them).
enum JSONText {
    // MARK: Writing

    /// nil when the value holds a number JSON cannot say (NaN, infinity) or a key that is not
    /// plain (isPlainKey): the caller then asks JSONEncoder.
    static func write(_ value: JSONValue) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        guard write(value, into: &out) else { return nil }
        return String(decoding: out, as: UTF8.self)
    }

    private static func write(_ value: JSONValue, into out: inout [UInt8]) -> Bool {
        switch value {
        case .null: out += "null".utf8
        case let .bool(b): out += (b ? "true" : "false").utf8
        case let .number(n):
            guard n.isFinite else { return false }
            // Whole numbers as integers, as the Codable form encodes them.
            if n.rounded() == n, abs(n) < 9.0e15 { out += String(Int64(n)).utf8 } else { out += n.description.utf8 }
        case let .string(s): string(s, into: &out)
        case let .array(a):
            out.append(0x5B)
            for (i, v) in a.enumerated() {
                if i > 0 { out.append(0x2C) }
                guard write(v, into: &out) else { return false }
            }
            out.append(0x5D)
        case let .object(o):
            out.append(0x7B)
            guard o.keys.allSatisfy(isPlainKey) else { return false }
            for (i, key) in o.keys.sorted(by: ordered).enumerated() {
                if i > 0 { out.append(0x2C) }
                string(key, into: &out)
                out.append(0x3A)
                guard write(o[key]!, into: &out) else { return false }
            }
            out.append(0x7D)
        }
        return true
    }

    /// JSONEncoder's `.sortedKeys` order for ASCII keys (the keys of every line the apps
    /// write): by their bytes. Other keys, which it orders by Unicode's rules, are left to it.
    static func ordered(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

    static func isPlainKey(_ key: String) -> Bool { key.utf8.allSatisfy { $0 < 0x80 } }

    private static let hex = Array("0123456789abcdef".utf8)

    private static func string(_ s: String, into out: inout [UInt8]) {
        out.append(0x22)
        for c in s.utf8 {
            switch c {
            case 0x22: out += [0x5C, 0x22]
            case 0x5C: out += [0x5C, 0x5C]
            case 0x0A: out += [0x5C, 0x6E]
            case 0x0D: out += [0x5C, 0x72]
            case 0x09: out += [0x5C, 0x74]
            case 0x08: out += [0x5C, 0x62]
            case 0x0C: out += [0x5C, 0x66]
            case 0..<0x20: out += [0x5C, 0x75, 0x30, 0x30, hex[Int(c >> 4)], hex[Int(c & 0xF)]]
            default: out.append(c)
            }
        }
        out.append(0x22)
    }

    // MARK: Reading

    struct Failure: Error, CustomStringConvertible {
        var offset: Int
        var reason: String
        var description: String { "byte \(offset): \(reason)" }
    }

    /// Nesting deeper than this is refused: the matrix reads what apps write, and an app may be
    /// hostile; a parser that recursed as deep as a line nests would end on the stack's guard.
    static let maximumDepth = 256

    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(Failure) -> JSONValue {
        var reader = Reader(bytes: bytes)
        reader.skipSpace()
        let value = try reader.value(depth: 0)
        reader.skipSpace()
        guard reader.at == bytes.count else { throw Failure(offset: reader.at, reason: "text after the value") }
        return value
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var at = 0

        mutating func skipSpace() {
            while at < bytes.count, bytes[at] == 0x20 || bytes[at] == 0x0A || bytes[at] == 0x0D || bytes[at] == 0x09 { at += 1 }
        }

        func fail(_ reason: String) -> Failure { Failure(offset: at, reason: reason) }

        mutating func literal(_ word: String, _ value: JSONValue) throws(Failure) -> JSONValue {
            let start = at
            for c in word.utf8 {
                guard at < bytes.count, bytes[at] == c else { throw Failure(offset: start, reason: "not a JSON value") }
                at += 1
            }
            return value
        }

        mutating func value(depth: Int) throws(Failure) -> JSONValue {
            guard depth < JSONText.maximumDepth else { throw fail("nested deeper than \(JSONText.maximumDepth) levels") }
            guard at < bytes.count else { throw fail("the text ends where a value should be") }
            switch bytes[at] {
            case 0x6E: return try literal("null", .null)
            case 0x74: return try literal("true", .bool(true))
            case 0x66: return try literal("false", .bool(false))
            case 0x22: return .string(try string())
            case 0x5B:
                at += 1
                var items: [JSONValue] = []
                skipSpace()
                if at < bytes.count, bytes[at] == 0x5D { at += 1; return .array(items) }
                while true {
                    skipSpace()
                    items.append(try value(depth: depth + 1))
                    skipSpace()
                    guard at < bytes.count else { throw fail("unterminated array") }
                    if bytes[at] == 0x5D { at += 1; return .array(items) }
                    guard bytes[at] == 0x2C else { throw fail("expected ',' or ']'") }
                    at += 1
                }
            case 0x7B:
                at += 1
                // Gathered first and made a dictionary once, at its size: inserting one by one
                // grew each object's table several times over (rehashing every key), a third of
                // the reading of a decision record. A repeated key keeps its last value.
                var fields: [(String, JSONValue)] = []
                skipSpace()
                if at < bytes.count, bytes[at] == 0x7D { at += 1; return .object([:]) }
                while true {
                    skipSpace()
                    guard at < bytes.count, bytes[at] == 0x22 else { throw fail("expected a key") }
                    let key = try string()
                    skipSpace()
                    guard at < bytes.count, bytes[at] == 0x3A else { throw fail("expected ':'") }
                    at += 1
                    skipSpace()
                    fields.append((key, try value(depth: depth + 1)))
                    skipSpace()
                    guard at < bytes.count else { throw fail("unterminated object") }
                    if bytes[at] == 0x7D { at += 1; return .object(Dictionary(fields, uniquingKeysWith: { _, last in last })) }
                    guard bytes[at] == 0x2C else { throw fail("expected ',' or '}'") }
                    at += 1
                }
            case 0x2D, 0x30...0x39: return .number(try number())
            default: throw fail("not a JSON value")
            }
        }

        mutating func number() throws(Failure) -> Double {
            let start = at
            func digits() -> Int {
                let from = at
                while at < bytes.count, bytes[at] >= 0x30, bytes[at] <= 0x39 { at += 1 }
                return at - from
            }
            if bytes[at] == 0x2D { at += 1 }
            let whole = at
            guard digits() > 0 else { throw fail("a number needs digits") }
            guard bytes[whole] != 0x30 || at - whole == 1 else { throw Failure(offset: whole, reason: "a number does not start with 0") }
            if at < bytes.count, bytes[at] == 0x2E {
                at += 1
                guard digits() > 0 else { throw fail("a fraction needs digits") }
            }
            if at < bytes.count, bytes[at] == 0x65 || bytes[at] == 0x45 {
                at += 1
                if at < bytes.count, bytes[at] == 0x2B || bytes[at] == 0x2D { at += 1 }
                guard digits() > 0 else { throw fail("an exponent needs digits") }
            }
            // A whole number of up to 15 digits (counts, ids, sizes: most numbers read) is exact
            // as a Double and needs no text made for Double's parser.
            if at - start <= 15, !bytes[start..<at].contains(where: { $0 == 0x2E || $0 == 0x65 || $0 == 0x45 }) {
                var n: Int64 = 0
                for c in bytes[(bytes[start] == 0x2D ? start + 1 : start)..<at] { n = n * 10 + Int64(c - 0x30) }
                return Double(bytes[start] == 0x2D ? -n : n)
            }
            guard let n = Double(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<at]), as: UTF8.self)), n.isFinite else {
                throw Failure(offset: start, reason: "a number out of range")
            }
            return n
        }

        /// A string literal at `at` (its opening quote).
        mutating func string() throws(Failure) -> String {
            at += 1
            let start = at
            // No escapes: the common case, one copy.
            while at < bytes.count, bytes[at] != 0x22, bytes[at] != 0x5C, bytes[at] >= 0x20 { at += 1 }
            guard at < bytes.count else { throw fail("unterminated string") }
            if bytes[at] == 0x22 {
                let text = try utf8(start, at)
                at += 1
                return text
            }
            var out = Array(UnsafeBufferPointer(rebasing: bytes[start..<at]))
            while true {
                guard at < bytes.count else { throw fail("unterminated string") }
                let c = bytes[at]
                switch c {
                case 0x22:
                    at += 1
                    guard let text = String(validating: out, as: UTF8.self) else { throw Failure(offset: start, reason: "a string that is not UTF-8") }
                    return text
                case 0x5C:
                    at += 1
                    guard at < bytes.count else { throw fail("unterminated string") }
                    let e = bytes[at]
                    at += 1
                    switch e {
                    case 0x22, 0x5C, 0x2F: out.append(e)
                    case 0x62: out.append(0x08)
                    case 0x66: out.append(0x0C)
                    case 0x6E: out.append(0x0A)
                    case 0x72: out.append(0x0D)
                    case 0x74: out.append(0x09)
                    case 0x75:
                        var scalar = try hex4()
                        if (0xD800..<0xDC00).contains(scalar) {
                            guard at + 1 < bytes.count, bytes[at] == 0x5C, bytes[at + 1] == 0x75 else { throw fail("a lone surrogate") }
                            at += 2
                            let low = try hex4()
                            guard (0xDC00..<0xE000).contains(low) else { throw fail("a lone surrogate") }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard let u = Unicode.Scalar(scalar) else { throw fail("a lone surrogate") }
                        out += Array(String(Character(u)).utf8)
                    default: throw Failure(offset: at - 1, reason: "an unknown escape")
                    }
                case 0..<0x20: throw fail("a control character in a string")
                default:
                    out.append(c)
                    at += 1
                }
            }
        }

        mutating func hex4() throws(Failure) -> UInt32 {
            guard at + 4 <= bytes.count else { throw fail("\\u needs four hex digits") }
            var v: UInt32 = 0
            for _ in 0..<4 {
                let c = bytes[at]
                let d: UInt8
                switch c {
                case 0x30...0x39: d = c - 0x30
                case 0x41...0x46: d = c - 0x41 + 10
                case 0x61...0x66: d = c - 0x61 + 10
                default: throw fail("\\u needs four hex digits")
                }
                v = v << 4 | UInt32(d)
                at += 1
            }
            return v
        }

        func utf8(_ from: Int, _ to: Int) throws(Failure) -> String {
            // ASCII (nearly every string read) is valid UTF-8 as it stands: made without the
            // generic validation, which looked up type metadata at every string.
            let slice = UnsafeBufferPointer(rebasing: bytes[from..<to])
            if slice.allSatisfy({ $0 < 0x80 }) { return String(decoding: slice, as: UTF8.self) }
            guard let text = String(validating: UnsafeBufferPointer(rebasing: bytes[from..<to]), as: UTF8.self) else {
                throw Failure(offset: from, reason: "a string that is not UTF-8")
            }
            return text
        }
    }
}
