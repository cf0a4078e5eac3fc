import Foundation
import MAMFuzzing
import MAMPolicy

/// The JSON reader every author's file goes through (tenants, Graph policies, catalogs,
/// experiments): a refusal points at the byte it is about, a value read is where it says it is,
/// and what it read writes out and reads back the same.
@_cdecl("LLVMFuzzerTestOneInput")
public func json(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = FuzzTarget.bytes(data, size)
    let text = SourceText(bytes)
    let node: Node
    do {
        node = try JSONParser.parse(Data(bytes))
    } catch {
        FuzzCheck.require(!error.message.isEmpty, "a syntax error with no message")
        text.requireInside(error.position, error.description)
        do {
            _ = try JSONParser.document(Data(bytes), file: "fuzz.json")
            FuzzCheck.require(false, "parse refused what document accepted")
        } catch {
            FuzzCheck.require(error.diagnostics.count == 1, "a syntax error is one diagnostic: \(error)")
            FuzzCheck.failure(error, file: "fuzz.json", in: text)
        }
        return 0
    }
    var positions = 0
    walk(node) { n in
        // Every value knows where it starts (checked for the first thousand: each is a search).
        positions += 1
        guard positions <= 1000 else { return }
        FuzzCheck.require(n.position != nil, "a JSON value with no position")
        if let p = n.position { text.requireInside(p, "a value's position") }
    }
    if let written = JSONWriting.text(node) {
        let again: Node
        do { again = try JSONParser.parse(Data(written.utf8)) } catch {
            FuzzCheck.require(false, "what was read does not read back once written: \(error) in \(written)")
            return 0
        }
        FuzzCheck.require(again == node, "a value changed on the way back: \(written)")
    }
    return 0
}

func walk(_ node: Node, _ visit: (Node) -> Void) {
    visit(node)
    switch node.value {
    case let .array(items): for i in items { walk(i, visit) }
    case let .object(pairs): for (_, v) in pairs { walk(v, visit) }
    default: break
    }
}

/// A plain writer for the values the reader returns; nil for a number JSON cannot say.
enum JSONWriting {
    static func text(_ node: Node) -> String? {
        var out = ""
        return write(node, into: &out) ? out : nil
    }

    static func write(_ node: Node, into out: inout String) -> Bool {
        switch node.value {
        case .null: out += "null"
        case let .bool(b): out += b ? "true" : "false"
        case let .integer(i): out += String(i)
        case let .real(r):
            guard r.isFinite else { return false }
            out += "\(r)"
        case let .string(s): string(s, into: &out)
        case let .array(items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                guard write(item, into: &out) else { return false }
            }
            out += "]"
        case let .object(pairs):
            out += "{"
            for (i, pair) in pairs.enumerated() {
                if i > 0 { out += "," }
                string(pair.key, into: &out)
                out += ":"
                guard write(pair.value, into: &out) else { return false }
            }
            out += "}"
        case .data, .date: return false
        }
        return true
    }

    static func string(_ s: String, into out: inout String) {
        out += "\""
        for c in s.unicodeScalars {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where c.value < 0x20: out += String(format: "\\u%04x", c.value)
            default: out.unicodeScalars.append(c)
            }
        }
        out += "\""
    }
}

@main enum JSONFuzz {
    static func main() { FuzzTarget.main(json) }
}
