import MAMPolicy
import MAMWire

/// An answer about data, exactly as the engine gave it: from the broker for an action, from
/// the engine in this process for a policy query. Never decided by the kit.
public struct SharingDecision: Sendable, Hashable, CustomStringConvertible {
    public var outcome: Outcome
    /// The rule of docs/SEMANTICS.md that decided.
    public var rule: String
    public var tag: Tag
    /// What the user sees when blocked; empty otherwise.
    public var message: String
    /// What the outcome changed: the URL as delivered, the receiving identity, the delivered type.
    public var detail: String
    /// The deciding rule itself (`sendOpenInEncrypted`); `rule` is its section, which several share.
    public var ruleName: String = ""
    /// The engine's file and line that chose the rule (`MAMPolicy/Transfer.swift:56`).
    public var decidedAt: String = ""

    public var allowed: Bool { outcome.delivers }

    public init(outcome: Outcome, rule: String, tag: Tag, message: String, detail: String) {
        self.outcome = outcome
        self.rule = rule
        self.tag = tag
        self.message = message
        self.detail = detail
    }

    /// As the broker sent it.
    init(_ record: DecisionRecord) {
        let outcomes = Outcome.allCases
        outcome = Int(record.outcome) < outcomes.count ? outcomes[Int(record.outcome)] : .blocked
        rule = record.rule
        tag = record.tag == 0 ? .doc : record.tag == 1 ? .observed : .chosen
        message = record.message
        detail = record.detail
        ruleName = record.ruleName
        decidedAt = record.decidedAt
    }

    /// As the engine in this process gave it.
    init(_ d: Decision) {
        outcome = d.outcome
        rule = d.rule.id
        tag = d.tag
        message = d.message
        detail = d.url ?? d.receivingIdentity?.description ?? d.deliveredType ?? ""
        ruleName = d.rule.rawValue
        decidedAt = d.site.description
    }

    public var description: String { "\(outcome.rawValue) (\(rule))" }
}
