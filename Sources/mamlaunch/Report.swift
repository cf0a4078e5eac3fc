import Foundation
import MAMPolicy

/// How `explain` shows a decision.
struct Report {
    var decision: Decision
    var channel: String
    var from: Party?
    var to: Party?
    /// The party whose policy an `.owner` rule read.
    var ownerSide: Party?
    var notes: [String]

    private func party(for side: PolicySide) -> Party? {
        switch side {
        case .sender: return from
        case .receiver: return to ?? ownerSide
        case .owner: return ownerSide
        case .none: return nil
        }
    }

    /// The deciding fields and their values in the deciding party's policy.
    private func fields(of rule: Rule) -> [(String, String)] {
        guard let p = party(for: rule.side), p.isManaged, let policy = p.policy else { return [] }
        let graph = GraphPolicy.write(policy)
        return rule.fields.map { ($0, graph[$0].map(render) ?? "-") }
    }

    /// A list of named entries (Graph's `{"name": …}` objects) by their names alone.
    private func render(_ node: Node) -> String {
        guard case let .array(items) = node.value else { return node.settingText }
        return "[" + items.map { n in (n["name"] ?? n).settingText }.joined(separator: ", ") + "]"
    }

    private func describe(_ p: Party?) -> String {
        guard let p else { return "-" }
        let state = p.isManaged ? "managed" : "unmanaged"
        return "\(p.app.bundleID) as \(p.identityDescription) (\(state))"
    }

    /// Where a policy comes from, for the reader: its file, or what a policy that no file
    /// gives is (the lock-down policy of a view of several accounts is MAMLab's own; its empty
    /// origin was printed as "()").
    static func origin(of policy: Policy) -> String {
        if let file = [policy.settingsFile, policy.origin.file].compactMap({ $0 }).first(where: { !$0.isEmpty }) { return file }
        if policy.id == Policy.lockDown.id {
            return "MAMLab's own, no file: a view that shows a managed account beside others gets every restriction at its strictest, docs/SEMANTICS.md §1.view"
        }
        return "no file"
    }

    func text() -> String {
        let d = decision
        // The first line names the deciding rule itself (its section below is shared by several)
        // and the engine's line that chose it: one step from the answer to the code.
        var lines = ["\(d.outcome.rawValue.uppercased())  \(channel)  \(describe(from)) → \(describe(to))  by \(d.rule.rawValue) at \(d.site)"]
        lines.append("  rule      \(d.rule.id) \(d.source.label) \(d.rule.summary)")
        if !d.message.isEmpty { lines.append("  message   \(d.message)") }
        if let id = d.receivingIdentity { lines.append("  identity  received as \(id)") }
        if let url = d.url { lines.append("  url       \(url)") }
        if let t = d.deliveredType { lines.append("  type      delivered as \(t)") }
        if let r = d.replacementText { lines.append("  pasted    \"\(r)\"") }
        if let p = party(for: d.rule.side), p.isManaged, let policy = p.policy {
            lines.append("  policy    \"\(policy.displayName)\" (\(Self.origin(of: policy))) on \(p.app.bundleID) for \(p.enrolled?.name ?? "-")")
            for (k, v) in fields(of: d.rule) { lines.append("            \(k) = \(v)") }
        }
        if let s = d.senderRule {
            lines.append("  sender    \(s.id) \(s.source.label) \(s.summary)")
            for (k, v) in fields(of: s) { lines.append("            \(k) = \(v)") }
        }
        let sections = [d.rule.id] + (d.senderRule.map { [$0.id] } ?? [])
        lines.append("  see       docs/SEMANTICS.md §" + Array(Set(sections)).sorted().joined(separator: ", §"))
        lines += notes.map { "  \($0)" }
        return lines.joined(separator: "\n")
    }

    /// `explain --json`'s object: its keys as a type, so a key cannot be misspelled or carry a
    /// value of another kind. Absent values are left out, but `from`/`to`'s `enrolled` is `null`.
    struct JSON: Encodable {
        struct Side: Encodable {
            var app: String
            /// An account, `personal`, or `none` (no identity set yet).
            var identity: String
            var identitySet: Bool
            var managed: Bool
            var enrolled: String?

            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: CodingKeys.self)
                try c.encode(app, forKey: .app)
                try c.encode(identity, forKey: .identity)
                try c.encode(identitySet, forKey: .identitySet)
                try c.encode(managed, forKey: .managed)
                try c.encode(enrolled, forKey: .enrolled)  // null when there is none, as before
            }

            private enum CodingKeys: String, CodingKey { case app, identity, identitySet, managed, enrolled }
        }

        var allowed: Bool
        var outcome: String
        var rule: String
        var tag: String
        var source: String
        var message: String
        var ruleName: String
        var decidedAt: String
        var summary: String
        var channel: String
        var fields: [String: String]
        var from: Side?
        var to: Side?
        var receivingIdentity: String?
        var url: String?
        var deliveredType: String?
        var replacementText: String?
        var senderRule: String?
        var senderRuleName: String?
        var senderTag: String?
        var senderSource: String?
        var notes: [String]?
    }

    private func side(_ p: Party) -> JSON.Side {
        JSON.Side(app: p.app.bundleID, identity: p.identityIsSet ? p.identity.description : "none",
                  identitySet: p.identityIsSet, managed: p.isManaged, enrolled: p.enrolled?.name)
    }

    func json() -> String {
        let d = decision
        let object = JSON(
            allowed: d.allowed, outcome: d.outcome.rawValue, rule: d.rule.id, tag: d.tag.rawValue, source: d.source.description,
            message: d.message, ruleName: d.rule.rawValue, decidedAt: d.site.description, summary: d.rule.summary, channel: channel,
            fields: Dictionary(fields(of: d.rule), uniquingKeysWith: { a, _ in a }), from: from.map(side), to: to.map(side),
            receivingIdentity: d.receivingIdentity?.description, url: d.url, deliveredType: d.deliveredType,
            replacementText: d.replacementText, senderRule: d.senderRule?.id, senderRuleName: d.senderRule?.rawValue,
            senderTag: d.senderRule?.tag.rawValue, senderSource: d.senderRule?.source.description, notes: notes.isEmpty ? nil : notes)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Strings, booleans and their lists only: encoding cannot fail.
        return String(decoding: (try? encoder.encode(object)) ?? Data(), as: UTF8.self)
    }
}
