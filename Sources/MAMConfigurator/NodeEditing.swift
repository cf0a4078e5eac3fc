import MAMPolicy

/// Small edits on ordered property-list trees: replace a value where it stands, or append it.
extension Node {
    var strings: [String]? {
        guard case let .array(items) = value else { return nil }
        let out = items.compactMap { n -> String? in if case let .string(s) = n.value { return s } else { return nil } }
        return out.count == items.count ? out : nil
    }

    var pairs: [(key: String, value: Node)]? {
        if case let .object(p) = value { return p }
        return nil
    }

    var items: [Node]? {
        if case let .array(i) = value { return i }
        return nil
    }

    var string: String? {
        if case let .string(s) = value { return s }
        return nil
    }

    var bool: Bool? {
        if case let .bool(b) = value { return b }
        return nil
    }

    /// Sets `key` to `newValue`, keeping its place when it exists; new keys go last.
    mutating func set(_ key: String, _ newValue: Node) {
        guard case var .object(p) = value else { return }
        if let i = p.firstIndex(where: { $0.key == key }) {
            p[i].value = newValue
        } else {
            p.append((key, newValue))
        }
        value = .object(p)
    }

    /// Edits the value at `key` in place, if it exists.
    mutating func update(_ key: String, _ edit: (inout Node) -> Void) {
        guard case var .object(p) = value, let i = p.firstIndex(where: { $0.key == key }) else { return }
        edit(&p[i].value)
        value = .object(p)
    }

    /// Edits each element of an array in place.
    mutating func updateEach(_ edit: (Int, inout Node) -> Void) {
        guard case var .array(items) = value else { return }
        for i in items.indices { edit(i, &items[i]) }
        value = .array(items)
    }

    public static func strings(_ list: [String]) -> Node { Node(.array(list.map { Node(.string($0)) })) }
}
