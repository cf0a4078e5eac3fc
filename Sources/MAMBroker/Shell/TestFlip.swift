import MAMBrokerCore
import MAMPolicy
import MAMWire

/// Test-only (mambroker's hidden --test-flip paste): the broker does the opposite of what the
/// engine decided for every paste from a non-empty pasteboard, in the reply and in the audit
/// alike, so a test can show `mamlaunch matrix` catches a broker that disagrees with the
/// engine. With `paste-record`, in the audit alone: a broker whose log is not what it did. It lives here, in the shell, rewriting what the core sends: the core has no switch
/// for it. Set only by whoever starts the broker; nothing an app sends reaches it.
struct PasteFlip {
    /// The pasteboard's text as last copied (nil: nothing was ever copied, and a paste from an
    /// empty pasteboard is not flipped).
    var text: String?
    /// The replies are flipped too, not only the audit records.
    var replies = true

    /// Follows the pasteboard through the core's writes of it.
    mutating func copied(_ change: StateChange) {
        if case let .pasteboard(state) = change { text = state.text }
    }

    /// A paste's reply, the other way round: an allowed paste gets the user's message instead of
    /// the text, a blocked one the text.
    func flipped(_ frame: Frame) -> Frame {
        guard let text, case let .pasteResult(decision, _) = frame.message else { return frame }
        var d = decision
        d.allowed.toggle()
        d.outcome = (d.allowed ? WireOutcome.allowed : .blocked).rawValue
        d.message = d.allowed ? "" : UserMessage.paste
        return Frame(id: frame.id, .pasteResult(decision: d, text: d.allowed ? text : UserMessage.paste))
    }

    /// A paste's audit line, with the outcome its reply got.
    func flipped(_ entry: AuditEntry) -> AuditEntry {
        guard text != nil, entry.channel == "paste", let outcome = Outcome(rawValue: entry.outcome) else { return entry }
        var e = entry
        e.outcome = (outcome.delivers ? Outcome.blocked : .allowed).rawValue
        return e
    }
}
