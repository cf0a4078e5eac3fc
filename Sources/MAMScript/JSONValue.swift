import Foundation

/// A JSON value: what a scripted app writes per line and what the matrix reads back.
///
/// Objects encode with sorted keys and without escaped slashes, so two runs that saw the same
/// thing write the same bytes (the matrix diffs them).
public enum JSONValue: Sendable, Hashable, Codable, CustomStringConvertible {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null } else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let n = try? c.decode(Double.self) { self = .number(n) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([JSONValue].self) { self = .array(a) }
        else { self = .object(try c.decode([String: JSONValue].self)) }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case let .bool(b): try c.encode(b)
        case let .number(n):
            if n.rounded() == n, abs(n) < 9.0e15 { try c.encode(Int64(n)) } else { try c.encode(n) }
        case let .string(s): try c.encode(s)
        case let .array(a): try c.encode(a)
        case let .object(o): try c.encode(o)
        }
    }

    /// One line of JSON, no newline.
    public var json: String {
        if let text = JSONText.write(self) { return text }
        return encodedByFoundation
    }

    /// What JSONEncoder writes (the form JSONText matches).
    var encodedByFoundation: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a JSONValue cannot fail: every case maps to a JSON value.
        return String(decoding: (try? encoder.encode(self)) ?? Data("null".utf8), as: UTF8.self)
    }

    public var description: String { json }

    /// Reads one JSON value; throws with the byte offset of what is wrong.
    public static func parse<Bytes: Collection>(_ bytes: Bytes) throws -> JSONValue where Bytes.Element == UInt8 {
        if let value = try bytes.withContiguousStorageIfAvailable({ b throws(JSONText.Failure) in try JSONText.parse(b) }) { return value }
        let copy = Array(bytes)
        return try copy.withUnsafeBufferPointer { b throws(JSONText.Failure) in try JSONText.parse(b) }
    }

    // Reading fields of a result or event object.
    public subscript(key: String) -> JSONValue? {
        if case let .object(o) = self { return o[key] }
        return nil
    }
    public var string: String? { if case let .string(s) = self { return s }; return nil }
    public var bool: Bool? { if case let .bool(b) = self { return b }; return nil }
    public var number: Double? { if case let .number(n) = self { return n }; return nil }
    public var array: [JSONValue]? { if case let .array(a) = self { return a }; return nil }
    public var isNull: Bool { self == .null }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, b in b }))
    }
    public init(nilLiteral: ()) { self = .null }
    /// A string, or null for nil.
    public init(_ text: String?) { self = text.map { .string($0) } ?? .null }
}
