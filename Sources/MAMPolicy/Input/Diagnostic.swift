/// One problem found in an input file, printed like a compiler message:
/// `FILE:LINE:COLUMN: error: PATH: MESSAGE` (line and column when the format has them).
public struct Diagnostic: Error, Sendable, Equatable, Hashable, CustomStringConvertible {
    public enum Severity: String, Sendable, Hashable { case error, warning }

    public var severity: Severity
    public var file: String
    /// JSON path (`$.policies[0].displayName`) or property-list key path (`IntuneMAMSettings.MultiIdentity`).
    public var path: String
    public var position: SourcePosition?
    public var message: String

    public init(_ severity: Severity, file: String, path: String, position: SourcePosition? = nil, message: String) {
        self.severity = severity
        self.file = file
        self.path = path
        self.position = position
        self.message = message
    }

    public var description: String {
        var where_ = file
        if let p = position { where_ += ":\(p.line):\(p.column)" }
        let at = path.isEmpty ? "" : "\(path): "
        return "\(where_): \(severity.rawValue): \(at)\(message)"
    }
}

/// Everything a load found; thrown when it holds at least one error.
public struct LoadFailure: Error, Sendable, CustomStringConvertible {
    public var diagnostics: [Diagnostic]
    public init(_ diagnostics: [Diagnostic]) { self.diagnostics = diagnostics }
    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}

/// Collects diagnostics while a loader walks a document.
public struct DiagnosticLog: Sendable {
    public private(set) var items: [Diagnostic] = []
    public init() {}
    public var hasErrors: Bool { items.contains { $0.severity == .error } }
    public mutating func append(_ d: Diagnostic) { items.append(d) }
    public mutating func append(contentsOf ds: [Diagnostic]) { items.append(contentsOf: ds) }
}

/// A node together with where it sits, so that checks can report precisely.
public struct Located: Sendable {
    public var node: Node
    public var path: String
    public var file: String

    public init(_ node: Node, path: String, file: String) {
        self.node = node
        self.path = path
        self.file = file
    }

    /// Path of a child; JSON paths start at `$`, property-list key paths at the first key.
    public func child(_ key: String) -> String {
        if path.isEmpty { return key }
        return "\(path).\(key)"
    }

    public func member(_ key: String) -> Located? {
        node[key].map { Located($0, path: child(key), file: file) }
    }

    public func element(_ i: Int, _ n: Node) -> Located {
        Located(n, path: "\(path)[\(i)]", file: file)
    }

    public func problem(_ severity: Diagnostic.Severity, _ message: String) -> Diagnostic {
        Diagnostic(severity, file: file, path: path, position: node.position, message: message)
    }

    public func problem(_ message: String) -> Diagnostic { problem(.error, message) }

    /// The items of an array, or of a pasted Graph list response `{"value": [...]}`; nil, with
    /// the error logged, when the node is neither. `what` names the items for the message.
    public func listOrGraphResponse(of what: String, _ log: inout DiagnosticLog) -> [Located]? {
        if let value = member("value") { return value.array(&log) ?? [] }
        if case .array = node.value { return array(&log) ?? [] }
        log.append(wrongType("an array of \(what) or a Graph list response {\"value\": [...]}"))
        return nil
    }

    public func wrongType(_ expected: String) -> Diagnostic {
        problem("expected \(expected), found \(node.typeName)\(preview)")
    }

    private var preview: String {
        switch node.value {
        case let .string(s): return " \"\(s.prefix(60))\""
        case let .integer(i): return " \(i)"
        case let .bool(b): return " \(b)"
        case let .real(r): return " \(r)"
        default: return ""
        }
    }

    // Typed readers: each returns nil and logs one diagnostic on a type mismatch.

    public func string(_ log: inout DiagnosticLog) -> String? {
        if case let .string(s) = node.value { return s }
        log.append(wrongType("a string")); return nil
    }

    public func bool(_ log: inout DiagnosticLog) -> Bool? {
        if case let .bool(b) = node.value { return b }
        log.append(wrongType("a boolean")); return nil
    }

    public func integer(_ log: inout DiagnosticLog, minimum: Int? = nil) -> Int? {
        guard case let .integer(i) = node.value else { log.append(wrongType("an integer")); return nil }
        if let m = minimum, i < m { log.append(problem("value \(i) is out of range; expected an integer ≥ \(m)")); return nil }
        return i
    }

    public func number(_ log: inout DiagnosticLog) -> Double? {
        switch node.value {
        case let .integer(i): return Double(i)
        case let .real(r): return r
        default: log.append(wrongType("a number")); return nil
        }
    }

    public func array(_ log: inout DiagnosticLog) -> [Located]? {
        guard case let .array(items) = node.value else { log.append(wrongType("an array")); return nil }
        return items.enumerated().map { element($0.offset, $0.element) }
    }

    public func object(_ log: inout DiagnosticLog) -> [(key: String, value: Located)]? {
        guard case let .object(pairs) = node.value else { log.append(wrongType("an object")); return nil }
        return pairs.map { ($0.key, Located($0.value, path: child($0.key), file: file)) }
    }

    public func strings(_ log: inout DiagnosticLog) -> [String]? {
        guard let items = array(&log) else { return nil }
        let values = items.compactMap { $0.string(&log) }
        return values.count == items.count ? values : nil
    }

    /// Reads a string that must be one of an enumeration's raw values, naming the allowed ones.
    public func enumeration<E: RawRepresentable & CaseIterable>(_: E.Type, _ log: inout DiagnosticLog) -> E?
    where E.RawValue == String {
        guard let s = string(&log) else { return nil }
        if let e = E(rawValue: s) { return e }
        let allowed = E.allCases.map(\.rawValue).joined(separator: ", ")
        log.append(problem("unknown value \"\(s)\"; allowed values: \(allowed)"))
        return nil
    }
}
