import Foundation

/// One value of a configuration document (JSON or property list), with where it was found.
///
/// Both input formats are read into this one tree so that every validator walks the same type
/// and every problem can name its key path, and for JSON its line and column.
public struct Node: Sendable, Hashable {
    public indirect enum Value: Sendable, Hashable {
        case null
        case bool(Bool)
        case integer(Int)
        case real(Double)
        case string(String)
        case data(Data)
        case date(Date)
        case array([Node])
        /// Keys in document order; property lists have no order, so theirs are sorted.
        case object([(key: String, value: Node)])

        public static func == (lhs: Value, rhs: Value) -> Bool {
            switch (lhs, rhs) {
            case (.null, .null): return true
            case let (.bool(a), .bool(b)): return a == b
            case let (.integer(a), .integer(b)): return a == b
            case let (.real(a), .real(b)): return a == b
            case let (.string(a), .string(b)): return a == b
            case let (.data(a), .data(b)): return a == b
            case let (.date(a), .date(b)): return a == b
            case let (.array(a), .array(b)): return a == b
            case let (.object(a), .object(b)):
                return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
            default: return false
            }
        }

        public func hash(into hasher: inout Hasher) {
            switch self {
            case .null: hasher.combine(0)
            case let .bool(b): hasher.combine(b)
            case let .integer(i): hasher.combine(i)
            case let .real(r): hasher.combine(r)
            case let .string(s): hasher.combine(s)
            case let .data(d): hasher.combine(d)
            case let .date(d): hasher.combine(d)
            case let .array(a): hasher.combine(a)
            case let .object(pairs):
                for (k, v) in pairs { hasher.combine(k); hasher.combine(v) }
            }
        }
    }

    public static func == (a: Node, b: Node) -> Bool { a.value == b.value }
    /// Position is where a value was found, not part of what it is.
    public func hash(into hasher: inout Hasher) { hasher.combine(value) }

    public var value: Value
    /// Where the value starts in its source text (1-based); nil for binary property lists.
    public var position: SourcePosition?

    public init(_ value: Value, position: SourcePosition? = nil) {
        self.value = value
        self.position = position
    }

    /// The name of the value's type as a person would say it in an error message.
    public var typeName: String {
        switch value {
        case .null: return "null"
        case .bool: return "boolean"
        case .integer: return "integer"
        case .real: return "number"
        case .string: return "string"
        case .data: return "data"
        case .date: return "date"
        case .array: return "array"
        case .object: return "object"
        }
    }

    public subscript(key: String) -> Node? {
        guard case let .object(pairs) = value else { return nil }
        return pairs.first(where: { $0.key == key })?.value
    }

    /// The value on one line, as a setting is shown to an admin (`managedApps`, `[box, sharePoint]`,
    /// `{name: skype}`); data and dates, which no setting holds, as `…`.
    public var settingText: String {
        switch value {
        case .null: return "null"
        case let .bool(b): return String(b)
        case let .integer(i): return String(i)
        case let .real(r): return String(r)
        case let .string(s): return s
        case let .array(items): return "[" + items.map(\.settingText).joined(separator: ", ") + "]"
        case let .object(pairs): return "{" + pairs.map { "\($0.key): \($0.value.settingText)" }.joined(separator: ", ") + "}"
        case .data, .date: return "…"
        }
    }
}

/// A place in a text document.
public struct SourcePosition: Sendable, Equatable, Hashable, Codable {
    public var line: Int
    public var column: Int
    public var offset: Int
    public init(line: Int, column: Int, offset: Int) {
        self.line = line
        self.column = column
        self.offset = offset
    }
}

extension Node {
    /// Converts what `PropertyListSerialization` returns into a `Node`.
    ///
    /// Foundation hands back `NSNumber` for both `<integer>` and `<true/>` in some cases, and an
    /// `NSNumber` answers `is Bool` for any 0 or 1; the Objective-C type code tells them apart.
    public init(propertyList object: Any) {
        switch object {
        case let s as String: self.init(.string(s))
        case let d as Data: self.init(.data(d))
        case let d as Date: self.init(.date(d))
        case let a as [Any]: self.init(.array(a.map { Node(propertyList: $0) }))
        case let dict as [String: Any]:
            self.init(.object(dict.keys.sorted().map { ($0, Node(propertyList: dict[$0]!)) }))
        default:
            if type(of: object) == Bool.self, let b = object as? Bool {
                self.init(.bool(b))
            } else if let n = object as? NSNumber {
                let code = String(cString: n.objCType)
                if code == "c" || code == "B" {
                    self.init(.bool(n.boolValue))
                } else if code == "d" || code == "f" {
                    self.init(.real(n.doubleValue))
                } else {
                    self.init(.integer(n.intValue))
                }
            } else {
                self.init(.null)
            }
        }
    }

    /// The Foundation object a property-list writer takes. Nulls have no plist form and are dropped.
    public var propertyListObject: Any? {
        switch value {
        case .null: return nil
        case let .bool(b): return b
        case let .integer(i): return i
        case let .real(r): return r
        case let .string(s): return s
        case let .data(d): return d
        case let .date(d): return d
        case let .array(a): return a.compactMap(\.propertyListObject)
        case let .object(pairs):
            var dict: [String: Any] = [:]
            for (k, v) in pairs { if let o = v.propertyListObject { dict[k] = o } }
            return dict
        }
    }
}
