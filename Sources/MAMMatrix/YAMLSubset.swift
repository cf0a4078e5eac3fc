import Foundation
import MAMPolicy

/// Reads the YAML an experiment file needs into the same `Node` tree JSON is read into, so one
/// loader checks both and every problem names its line: block mappings and sequences by
/// indentation, `- key: value` items, flow sequences of scalars (`[a, "b"]`), plain, single- and
/// double-quoted scalars, `true`/`false`/`null`/numbers, comments and a leading `---`.
/// Anchors, tags, flow mappings and multi-line scalars are refused with their line.
enum YAMLSubset {
    struct Line {
        var number: Int
        var indent: Int
        var text: Substring
    }

    static func document(_ data: Data, file: String) throws(LoadFailure) -> Located {
        guard let text = String(data: data, encoding: .utf8) else {
            throw LoadFailure([Diagnostic(.error, file: file, path: "", message: "not UTF-8 text")])
        }
        var lines: [Line] = []
        for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var s = raw
            if s.hasSuffix("\r") { s = s.dropLast() }
            if s.contains("\t") && s.prefix(while: { $0 == " " || $0 == "\t" }).contains("\t") {
                throw fail(file, i + 1, 1, "a tab in the indentation; YAML indents with spaces")
            }
            let content = stripComment(s)
            let indent = content.prefix(while: { $0 == " " }).count
            let body = content.dropFirst(indent)
            if body.isEmpty || (lines.isEmpty && body == "---") { continue }
            lines.append(Line(number: i + 1, indent: indent, text: body))
        }
        guard !lines.isEmpty else { throw fail(file, 1, 1, "the document is empty") }
        var parser = Parser(lines: lines, file: file)
        let node = try parser.block(indent: lines[0].indent)
        if parser.i < lines.count {
            let l = lines[parser.i]
            throw fail(file, l.number, l.indent + 1, "unexpected indentation")
        }
        return Located(node, path: "$", file: file)
    }

    static func fail(_ file: String, _ line: Int, _ column: Int, _ message: String) -> LoadFailure {
        LoadFailure([Diagnostic(.error, file: file, path: "", position: SourcePosition(line: line, column: column, offset: 0), message: message)])
    }

    /// The line without a comment (`#` at the start or after a space, outside quotes).
    static func stripComment(_ s: Substring) -> Substring {
        var quote: Character?
        var previous: Character = " "
        for i in s.indices {
            let c = s[i]
            if let q = quote {
                if c == q { quote = nil }
            } else if c == "\"" || c == "'" {
                quote = c
            } else if c == "#" && previous == " " {
                var out = s[..<i]
                while out.last == " " { out = out.dropLast() }
                return out
            }
            previous = c
        }
        var out = s
        while out.last == " " { out = out.dropLast() }
        return out
    }

    struct Parser {
        var lines: [Line]
        let file: String
        var i = 0
        /// Mappings and sequences open around the line being read: deeper documents are refused
        /// before the stack runs out, as JSONParser refuses them (3,000 levels ended the process).
        var depth = 0
        static let maximumDepth = JSONParser.maximumDepth
        /// Flow lists within flow lists: each level reads the rest of its line again, so the
        /// bound is low (an experiment's lists hold scalars; a line of brackets took time as its
        /// square, then the stack).
        static let maximumFlowDepth = 16

        mutating func enter(_ l: Line) throws(LoadFailure) {
            depth += 1
            if depth > Self.maximumDepth { throw fail(file, l.number, l.indent + 1, "nesting deeper than \(Self.maximumDepth) levels") }
        }

        func position(_ l: Line, column: Int? = nil) -> SourcePosition {
            SourcePosition(line: l.number, column: column ?? l.indent + 1, offset: 0)
        }

        mutating func block(indent: Int) throws(LoadFailure) -> Node {
            let l = lines[i]
            if l.text == "-" || l.text.hasPrefix("- ") { return try sequence(indent: indent) }
            return try mapping(indent: indent)
        }

        mutating func sequence(indent: Int) throws(LoadFailure) -> Node {
            let start = lines[i]
            try enter(start)
            defer { depth -= 1 }
            var items: [Node] = []
            while i < lines.count, lines[i].indent == indent, lines[i].text == "-" || lines[i].text.hasPrefix("- ") {
                let l = lines[i]
                let rest = l.text.dropFirst(1).drop(while: { $0 == " " })
                if rest.isEmpty {
                    i += 1
                    guard i < lines.count, lines[i].indent > indent else { items.append(Node(.null, position: position(l))); continue }
                    items.append(try block(indent: lines[i].indent))
                } else if Self.keyEnd(rest) != nil {
                    // `- key: value`: a mapping whose lines sit where `key` starts.
                    let column = indent + (l.text.count - rest.count)
                    lines[i] = Line(number: l.number, indent: column, text: rest)
                    items.append(try mapping(indent: column))
                } else {
                    items.append(try scalar(rest, l, column: indent + (l.text.count - rest.count) + 1))
                    i += 1
                }
            }
            return Node(.array(items), position: position(start))
        }

        mutating func mapping(indent: Int) throws(LoadFailure) -> Node {
            let start = lines[i]
            try enter(start)
            defer { depth -= 1 }
            var pairs: [(key: String, value: Node)] = []
            var keys = Set<String>()
            while i < lines.count, lines[i].indent == indent {
                let l = lines[i]
                if l.text == "-" || l.text.hasPrefix("- ") { break }
                guard let end = Self.keyEnd(l.text) else {
                    throw fail(file, l.number, l.indent + 1, "expected `key: value` (or `- item` in a list)")
                }
                let keyText = l.text[..<end]
                let key = try unquote(keyText, l, column: l.indent + 1)
                if !keys.insert(key).inserted { throw fail(file, l.number, l.indent + 1, "a second \"\(key)\" in one mapping") }
                let rest = l.text[l.text.index(after: end)...].drop(while: { $0 == " " })
                i += 1
                if rest.isEmpty {
                    if i < lines.count, lines[i].indent > indent {
                        pairs.append((key, try block(indent: lines[i].indent)))
                    } else if i < lines.count, lines[i].indent == indent, lines[i].text == "-" || lines[i].text.hasPrefix("- ") {
                        pairs.append((key, try sequence(indent: indent)))
                    } else {
                        pairs.append((key, Node(.null, position: position(l))))
                    }
                } else {
                    pairs.append((key, try scalar(rest, l, column: l.indent + (l.text.count - rest.count) + 1)))
                }
            }
            return Node(.object(pairs), position: position(start))
        }

        /// Where the `:` that ends a key is (outside quotes, followed by a space or the end).
        static func keyEnd(_ s: Substring) -> Substring.Index? {
            var quote: Character?
            var i = s.startIndex
            if let f = s.first, f == "\"" || f == "'" { quote = f; i = s.index(after: i) }
            while i < s.endIndex {
                let c = s[i]
                if let q = quote {
                    if c == q { quote = nil }
                } else if c == ":" {
                    let next = s.index(after: i)
                    if next == s.endIndex || s[next] == " " { return i }
                } else if c == "[" || c == "{" || c == "\"" {
                    if i == s.startIndex { return nil }
                }
                i = s.index(after: i)
            }
            return nil
        }

        func unquote(_ s: Substring, _ l: Line, column: Int) throws(LoadFailure) -> String {
            if s.hasPrefix("\"") {
                guard s.count >= 2, s.hasSuffix("\""), case let .string(text)? = try? JSONParser.parse(Data(s.utf8)).value else {
                    throw fail(file, l.number, column, "a double-quoted string that does not end, or a bad escape")
                }
                return text
            }
            if s.hasPrefix("'") {
                guard s.count >= 2, s.hasSuffix("'") else { throw fail(file, l.number, column, "a single-quoted string that does not end") }
                return String(s.dropFirst().dropLast()).replacingOccurrences(of: "''", with: "'")
            }
            return String(s)
        }

        /// `flowDepth`: the flow lists this scalar sits in.
        func scalar(_ s: Substring, _ l: Line, column: Int, flowDepth: Int = 0) throws(LoadFailure) -> Node {
            let at = position(l, column: column)
            if let f = s.first, "{&*!|>%@`".contains(f) {
                throw fail(file, l.number, column, "\(f) starts YAML this reader does not take (flow mappings, anchors, tags, block scalars); write JSON, or quote the value")
            }
            if s.hasPrefix("[") {
                guard flowDepth < Self.maximumFlowDepth else { throw fail(file, l.number, column, "lists nested deeper than \(Self.maximumFlowDepth) levels") }
                guard s.hasSuffix("]") else { throw fail(file, l.number, column, "a flow list that does not end on its line") }
                let inner = s.dropFirst().dropLast()
                var items: [Node] = []
                var current = ""
                var quote: Character?
                var offset = column + 1
                var itemColumn = offset
                for c in inner {
                    if let q = quote {
                        current.append(c)
                        if c == q { quote = nil }
                    } else if c == "\"" || c == "'" {
                        quote = c
                        current.append(c)
                    } else if c == "," {
                        items.append(try scalar(Substring(current.trimmingCharacters(in: .whitespaces)), l, column: itemColumn, flowDepth: flowDepth + 1))
                        current = ""
                        itemColumn = offset + 1
                    } else {
                        current.append(c)
                    }
                    offset += 1
                }
                let last = current.trimmingCharacters(in: .whitespaces)
                if !last.isEmpty || !items.isEmpty { items.append(try scalar(Substring(last), l, column: itemColumn, flowDepth: flowDepth + 1)) }
                return Node(.array(items), position: at)
            }
            if s.hasPrefix("\"") || s.hasPrefix("'") { return Node(.string(try unquote(s, l, column: column)), position: at) }
            switch s {
            case "true", "True", "TRUE": return Node(.bool(true), position: at)
            case "false", "False", "FALSE": return Node(.bool(false), position: at)
            case "null", "Null", "NULL", "~": return Node(.null, position: at)
            default: break
            }
            if let n = Int(s) { return Node(.integer(n), position: at) }
            if s.contains("."), let d = Double(s) { return Node(.real(d), position: at) }
            return Node(.string(String(s)), position: at)
        }
    }
}
