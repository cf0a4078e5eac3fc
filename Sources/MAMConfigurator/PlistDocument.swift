import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import MAMPolicy

/// A property-list file read with its key order, so that a rewrite changes only what it must.
///
/// `PropertyListSerialization` hands dictionaries back unordered; an Info.plist edited by a
/// tool should keep the order its author chose. XML plists are therefore read and written here;
/// binary plists (whose order no tool shows) go through Foundation.
public struct PlistDocument: Sendable, Equatable {
    public enum Format: String, Sendable { case xml, binary }

    public var root: Node
    public var format: Format

    public init(root: Node, format: Format) {
        self.root = root
        self.format = format
    }

    public static func read(_ data: Data, file: String) throws(LoadFailure) -> PlistDocument {
        if data.starts(with: Array("bplist".utf8)) {
            if let problem = BinaryPropertyList.problem(data) {
                throw LoadFailure([Diagnostic(.error, file: file, path: "", message: "not a valid binary property list: \(problem)")])
            }
            let object: Any
            do {
                object = try PropertyListSerialization.propertyList(from: data, format: nil)
            } catch {
                throw LoadFailure([Diagnostic(.error, file: file, path: "", message: "not a valid binary property list")])
            }
            let root = Node(propertyList: object)
            // A null here is a value a Node does not hold (a binary null or a keyed archive's
            // UID): a rewrite would drop it, so the file is refused rather than changed.
            guard !root.holdsNull else {
                throw LoadFailure([Diagnostic(.error, file: file, path: "",
                                              message: "not a property list mamconfigurator can rewrite: it holds a null or a keyed archive's UID")])
            }
            return PlistDocument(root: root, format: .binary)
        }
        if let problem = XMLPlistReader.unsafeMarkup(data) {
            throw LoadFailure([Diagnostic(.error, file: file, path: "", message: "not a valid XML property list: \(problem)")])
        }
        let reader = XMLPlistReader(data: data)
        do {
            return PlistDocument(root: try reader.read(), format: .xml)
        } catch let problem as XMLPlistReader.Problem {
            let position = problem.line.map { SourcePosition(line: $0, column: problem.column ?? 1, offset: 0) }
            throw LoadFailure([Diagnostic(.error, file: file, path: "", position: position,
                                          message: "not a valid XML property list: \(problem.message)")])
        } catch {
            throw LoadFailure([Diagnostic(.error, file: file, path: "", message: "not a valid XML property list: \(error)")])
        }
    }

    public func data() throws -> Data {
        switch format {
        case .xml:
            return Data(XMLPlistWriter.write(root).utf8)
        case .binary:
            guard let object = root.propertyListObject else { throw CocoaError(.propertyListWriteInvalid) }
            return try PropertyListSerialization.data(fromPropertyList: object, format: .binary, options: 0)
        }
    }
}

/// Writes the XML form Xcode writes: tab indentation, one element a line.
enum XMLPlistWriter {
    static func write(_ root: Node) -> String {
        var out = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">

        """
        emit(root, depth: 0, into: &out)
        out += "</plist>\n"
        return out
    }

    private static func emit(_ node: Node, depth: Int, into out: inout String) {
        let indent = String(repeating: "\t", count: depth)
        switch node.value {
        case .null: out += "\(indent)<string></string>\n"
        case let .bool(b): out += "\(indent)<\(b ? "true" : "false")/>\n"
        case let .integer(i): out += "\(indent)<integer>\(i)</integer>\n"
        case let .real(r): out += "\(indent)<real>\(r)</real>\n"
        case let .string(s): out += "\(indent)<string>\(escape(s))</string>\n"
        case let .data(d): out += "\(indent)<data>\(d.base64EncodedString())</data>\n"
        case let .date(d): out += "\(indent)<date>\(ISO8601DateFormatter().string(from: d))</date>\n"
        case let .array(items):
            if items.isEmpty { out += "\(indent)<array/>\n"; return }
            out += "\(indent)<array>\n"
            for item in items { emit(item, depth: depth + 1, into: &out) }
            out += "\(indent)</array>\n"
        case let .object(pairs):
            if pairs.isEmpty { out += "\(indent)<dict/>\n"; return }
            out += "\(indent)<dict>\n"
            for (key, value) in pairs {
                out += "\(indent)\t<key>\(escape(key))</key>\n"
                emit(value, depth: depth + 1, into: &out)
            }
            out += "\(indent)</dict>\n"
        }
    }

    static func escape(_ s: String) -> String {
        var out = ""
        for c in s.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }
}

/// Reads an XML property list into ordered nodes with Foundation's SAX parser.
final class XMLPlistReader: NSObject, XMLParserDelegate {
    struct Problem: Error {
        var message: String
        var line: Int?
        var column: Int?
    }

    private let data: Data
    private var parser: XMLParser?
    /// Open containers: arrays collect nodes, dictionaries collect (key, node) pairs.
    private enum Frame {
        case array([Node])
        case dict([(key: String, value: Node)], pendingKey: String?)
    }
    private var stack: [Frame] = []
    private var text = ""
    private var result: Node?
    private var failure: Problem?
    private var sawPlist = false

    init(data: Data) { self.data = data }

    /// What FoundationXML must not be handed, or nil. It crashes the process on an element name
    /// that is not UTF-8 (it force-unwraps the name libxml2 hands it) and on a processing
    /// instruction with no data (it reads the missing text); an entity declaration could make
    /// either out of character references, or expand to gigabytes. No property list needs one.
    static func unsafeMarkup(_ data: Data) -> String? {
        guard String(validating: data, as: UTF8.self) != nil else { return "the text is not UTF-8" }
        var bytes = [UInt8](data)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        // The XML declaration may open the file; any other `<?` is a processing instruction.
        if bytes.starts(with: Array("<?xml".utf8)), let end = bytes.firstRange(of: Array("?>".utf8)) {
            bytes.removeSubrange(..<end.upperBound)
        }
        if bytes.firstRange(of: Array("<?".utf8)) != nil { return "a processing instruction, which no property list holds" }
        if bytes.firstRange(of: Array("<!ENTITY".utf8)) != nil { return "an entity declaration, which no property list needs" }
        return nil
    }

    func read() throws -> Node {
        let parser = XMLParser(data: data)
        self.parser = parser
        parser.delegate = self
        parser.shouldResolveExternalEntities = false
        let ok = parser.parse()
        if let failure { throw failure }
        if !ok {
            throw Problem(message: parser.parserError.map { "\($0.localizedDescription)" } ?? "malformed XML",
                          line: parser.lineNumber, column: parser.columnNumber)
        }
        guard sawPlist, let result else { throw Problem(message: "no <plist> root element with a value", line: nil, column: nil) }
        return result
    }

    private func fail(_ message: String) {
        guard failure == nil else { return }
        failure = Problem(message: message, line: parser?.lineNumber, column: parser?.columnNumber)
        parser?.abortParsing()
    }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        text = ""
        // As deep as the JSON reader goes: the writer and every walk of the tree recurse, and
        // 10,000 nested arrays ended the process on its stack.
        if (name == "array" || name == "dict") && stack.count >= JSONParser.maximumDepth {
            return fail("nesting deeper than \(JSONParser.maximumDepth) levels")
        }
        switch name {
        case "plist": sawPlist = true
        case "array": stack.append(.array([]))
        case "dict": stack.append(.dict([], pendingKey: nil))
        case "key", "string", "integer", "real", "true", "false", "date", "data": break
        default: fail("unknown element <\(name)>")
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        switch name {
        case "plist": return
        case "key":
            guard case let .dict(pairs, pending)? = stack.last, pending == nil else { return fail("<key> outside a <dict> or twice in a row") }
            stack[stack.count - 1] = .dict(pairs, pendingKey: text)
            return
        case "array":
            guard case let .array(items)? = stack.popLast() else { return fail("unbalanced </array>") }
            add(Node(.array(items)))
        case "dict":
            guard case let .dict(pairs, pending)? = stack.popLast() else { return fail("unbalanced </dict>") }
            if let pending { return fail("<key>\(pending)</key> has no value") }
            add(Node(.object(pairs)))
        case "string": add(Node(.string(text)))
        case "integer":
            guard let i = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) else { return fail("\"\(text)\" is not an integer") }
            add(Node(.integer(i)))
        case "real":
            guard let r = Double(text.trimmingCharacters(in: .whitespacesAndNewlines)) else { return fail("\"\(text)\" is not a real number") }
            add(Node(.real(r)))
        case "true": add(Node(.bool(true)))
        case "false": add(Node(.bool(false)))
        case "date":
            guard let d = ISO8601DateFormatter().date(from: text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                return fail("\"\(text)\" is not an ISO 8601 date")
            }
            add(Node(.date(d)))
        case "data":
            let compact = text.filter { !$0.isWhitespace }
            guard let d = Data(base64Encoded: compact) else { return fail("<data> is not base64") }
            add(Node(.data(d)))
        default: break
        }
        text = ""
    }

    private func add(_ node: Node) {
        guard let top = stack.popLast() else {
            if result != nil { return fail("more than one value at the top level") }
            result = node
            return
        }
        switch top {
        case var .array(items):
            items.append(node)
            stack.append(.array(items))
        case var .dict(pairs, pending):
            guard let key = pending else { stack.append(top); return fail("a value in a <dict> without its <key>") }
            if pairs.contains(where: { $0.key == key }) { stack.append(top); return fail("duplicate key \"\(key)\"") }
            pairs.append((key, node))
            pending = nil
            stack.append(.dict(pairs, pendingKey: pending))
        }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
        if failure == nil {
            failure = Problem(message: "malformed XML (\((parseError as NSError).code))", line: parser.lineNumber, column: parser.columnNumber)
        }
    }
}

extension Node {
    /// Whether a null sits anywhere in the tree.
    var holdsNull: Bool {
        switch value {
        case .null: return true
        case let .array(items): return items.contains { $0.holdsNull }
        case let .object(pairs): return pairs.contains { $0.value.holdsNull }
        default: return false
        }
    }
}
