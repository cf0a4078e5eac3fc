import MAMPolicy

/// What the broker's audit line needs from a conditional-access decision: the channel, who asked,
/// the outcome, the reason's id and tag, and the detail a person reads.
public struct ConditionalAccessAudit: Sendable, Hashable, CustomStringConvertible {
    /// `ca.token`, `ca.remediate` (the request) or `ca.compliance` (the result).
    public var channel: String
    public var app: String
    public var account: String
    public var outcome: String
    public var rule: String
    public var tag: Tag
    public var detail: String

    public var description: String { "\(channel) \(app) \(account): \(outcome) (\(rule) [\(tag.rawValue)]) \(detail)" }
}

extension TokenDecision {
    public var audit: ConditionalAccessAudit {
        ConditionalAccessAudit(channel: "ca.token", app: app, account: account.name, outcome: outcome.rawValue,
                               rule: reason.id, tag: reason.tag, detail: detail)
    }
}

extension RemediationRequestDecision {
    public var audit: ConditionalAccessAudit {
        ConditionalAccessAudit(channel: "ca.remediate", app: app, account: account.name, outcome: outcome.rawValue,
                               rule: reason.id, tag: reason.tag, detail: detail)
    }
}

extension RemediationResult {
    public var audit: ConditionalAccessAudit {
        ConditionalAccessAudit(channel: "ca.compliance", app: app, account: accountId, outcome: outcome.status.name,
                               rule: outcome.reason.id, tag: outcome.reason.tag, detail: outcome.detail)
    }
}
