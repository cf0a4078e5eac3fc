import Foundation
import MAMScript

/// A JSON Schema checker for the subset MAMLab's schemas use (docs/*.schema.json): `type`
/// (one or a list), `enum`, `properties`, `required`, `additionalProperties: false`, `items`,
/// `minItems`, `minLength`, `pattern`, `anyOf`, and `$ref` to `#/$defs/NAME`. A keyword outside
/// the subset is reported, so a schema cannot silently ask for more than is checked.
struct SchemaChecker {
    let root: [String: Any]
    static let known: Set<String> = ["$schema", "$id", "title", "description", "type", "enum", "properties", "required",
                                     "additionalProperties", "items", "minItems", "minLength", "pattern", "anyOf", "$ref", "$defs"]

    init(file: String) throws {
        root = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as! [String: Any]
    }

    /// Problems, each with the JSON path where it is; empty when the value conforms.
    func check(_ value: JSONValue) -> [String] {
        var problems: [String] = []
        check(value, root, "$", &problems)
        return problems
    }

    private func check(_ value: JSONValue, _ schema: [String: Any], _ path: String, _ out: inout [String]) {
        for key in schema.keys where !Self.known.contains(key) { out.append("\(path): schema keyword \(key) is outside the checked subset") }
        if let ref = schema["$ref"] as? String {
            let name = String(ref.dropFirst("#/$defs/".count))
            guard ref.hasPrefix("#/$defs/"), let defs = root["$defs"] as? [String: Any], let target = defs[name] as? [String: Any] else {
                out.append("\(path): unresolvable $ref \(ref)"); return
            }
            check(value, target, path, &out)
        }
        if let anyOf = schema["anyOf"] as? [[String: Any]] {
            let ok = anyOf.contains { s in var p: [String] = []; check(value, s, path, &p); return p.isEmpty }
            if !ok { out.append("\(path): matches none of anyOf") }
        }
        if let types = schema["type"] {
            let list = (types as? [String]) ?? [types as! String]
            if !list.contains(where: { Self.matches(value, $0) }) { out.append("\(path): expected \(list.joined(separator: "|")), found \(value.json.prefix(60))") ; return }
        }
        if let options = schema["enum"] as? [Any] {
            let allowed = options.compactMap { $0 as? String }
            if value.string.map({ !allowed.contains($0) }) ?? true { out.append("\(path): \(value.json.prefix(60)) not in enum") }
        }
        if let s = value.string {
            if let min = schema["minLength"] as? Int, s.count < min { out.append("\(path): shorter than \(min)") }
            if let pattern = schema["pattern"] as? String, s.range(of: pattern, options: .regularExpression) == nil {
                out.append("\(path): \"\(s.prefix(60))\" does not match \(pattern)")
            }
        }
        if let items = value.array {
            if let min = schema["minItems"] as? Int, items.count < min { out.append("\(path): fewer than \(min) items") }
            if let itemSchema = schema["items"] as? [String: Any] {
                for (i, item) in items.enumerated() { check(item, itemSchema, "\(path)[\(i)]", &out) }
            }
        }
        if case let .object(members) = value {
            let properties = schema["properties"] as? [String: Any] ?? [:]
            for r in schema["required"] as? [String] ?? [] where members[r] == nil { out.append("\(path): missing \(r)") }
            for (k, v) in members {
                if let p = properties[k] as? [String: Any] { check(v, p, "\(path).\(k)", &out) }
                else if (schema["additionalProperties"] as? Bool) == false { out.append("\(path): unexpected key \(k)") }
            }
        }
    }

    static func matches(_ v: JSONValue, _ type: String) -> Bool {
        switch (type, v) {
        case ("string", .string), ("boolean", .bool), ("array", .array), ("object", .object), ("null", .null), ("number", .number): return true
        case let ("integer", .number(n)): return n.rounded() == n
        default: return false
        }
    }
}
