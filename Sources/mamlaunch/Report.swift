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
            lines.append("  policy    \"\(policy.displayName)\" (\(policy.settingsFile ?? policy.origin.file)) on \(p.app.bundleID) for \(p.enrolled?.name ?? "-")")
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

    /// A party in --json: `identity` is an account, `personal` or `none` (no identity set yet).
    private func side(_ p: Party) -> [String: Any] {
        ["app": p.app.bundleID, "identity": p.identityIsSet ? p.identity.description : "none",
         "identitySet": p.identityIsSet, "managed": p.isManaged, "enrolled": p.enrolled?.name ?? NSNull()]
    }

    func json() -> String {
        let d = decision
        var object: [String: Any] = [
            "allowed": d.allowed,
            "outcome": d.outcome.rawValue,
            "rule": d.rule.id,
            "tag": d.tag.rawValue,
            "source": d.source.description,
            "message": d.message,
            "ruleName": d.rule.rawValue,
            "decidedAt": d.site.description,
            "summary": d.rule.summary,
            "channel": channel,
            "fields": Dictionary(fields(of: d.rule), uniquingKeysWith: { a, _ in a }),
        ]
        if let from { object["from"] = side(from) }
        if let to { object["to"] = side(to) }
        if let id = d.receivingIdentity { object["receivingIdentity"] = id.description }
        if let url = d.url { object["url"] = url }
        if let t = d.deliveredType { object["deliveredType"] = t }
        if let r = d.replacementText { object["replacementText"] = r }
        if let s = d.senderRule {
            object["senderRule"] = s.id
            object["senderRuleName"] = s.rawValue
            object["senderTag"] = s.tag.rawValue
            object["senderSource"] = s.source.description
        }
        if !notes.isEmpty { object["notes"] = notes }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
