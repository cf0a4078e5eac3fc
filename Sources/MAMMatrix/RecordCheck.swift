import MAMScript

/// The broker's record of a cell's decision, held field by field against what the app was told
/// and against the parties the engine predicted with. A cell whose record disagrees fails even
/// when what arrived matches the prediction: the broker decided with other inputs than the
/// prediction did (another party, an app it treats as unmanaged), and the next cell may not
/// be so lucky.
public enum RecordCheck {
    /// The channel the broker logs a cell's deciding request under; nil for the account
    /// channels, whose answer is the app's managed state, not one decision.
    public static func auditChannel(_ channel: Channel) -> String? {
        switch channel {
        case .send, .receive, .openIn: "open-in"
        case .import: "import"
        case .paste: "paste"
        case .openURL: "open-url"
        case .saveTo: "save-to"
        case .openFrom: "open-from"
        case .login, .logout: nil
        }
    }

    /// The record of the cell's decision among those written while it ran: the last one of its
    /// channel from the cell's app (for an open from a location, to it; when the source's save
    /// was refused, nothing was opened, and the save's record is the cell's). The cells running
    /// beside it use other apps (CellSchedule), so theirs never match.
    public static func record(for channel: Channel, source: String, target: String?, in records: [BrokerRecord]) -> BrokerRecord? {
        guard let name = auditChannel(channel) else { return nil }
        if channel == .openFrom {
            return records.last { $0.channel == name && $0.target.map { same($0.app, target) } ?? false }
                ?? record(for: .saveTo, source: source, target: nil, in: records)
        }
        return records.last { $0.channel == name && same($0.source.app, source) }
    }

    /// Where the record disagrees with the decision the app was told (`told`, the `decision`
    /// object of the deciding result) or with the prediction's parties; empty when it agrees,
    /// or when the app was told no decision (the cell then fails on its own account).
    ///
    /// - Parameters:
    ///   - source, target: the bundle ids of the cell's apps.
    public static func disagreements(_ result: CellResult, told: JSONValue?, source: String, target: String?,
                                     records: [BrokerRecord]) -> [String] {
        let channel = result.cell.channel.channel
        guard let name = auditChannel(channel), let told, let toldOutcome = told["outcome"]?.string else { return [] }
        guard let r = record(for: channel, source: source, target: target, in: records) else {
            return ["the broker wrote no \(name) record of the decision the app was told (\(toldOutcome))"]
        }
        var out: [String] = []
        func differ(_ field: String, record: String, other: String, says: String) {
            out.append("\(field): the broker's record says \(record), \(says) \(other)")
        }
        if r.outcome != toldOutcome { differ("outcome", record: r.outcome, other: toldOutcome, says: "the app was told") }
        if let rule = told["rule"]?.string, r.rule != rule { differ("rule", record: r.rule, other: rule, says: "the app was told") }
        if let a = r.ruleName, let b = told["ruleName"]?.string, !a.isEmpty, !b.isEmpty, a != b {
            differ("ruleName", record: a, other: b, says: "the app was told")
        }
        // The receiving app: a link may go to another app (the managed browser, a dialer);
        // what arrived judges that, so only the other channels name their receiver here.
        if channel != .openURL, let target, let t = r.target, !t.isLocation, !same(t.app, target) {
            differ("target", record: t.app, other: target, says: "the cell's target is")
        }
        // Managed or not, as the prediction built the parties: org data is the source's.
        if channel != .openFrom, r.source.managed != result.orgData {
            differ("source managed", record: "\(r.source.managed)", other: "\(result.orgData)", says: "the prediction has")
        }
        if let predicted = result.targetManaged, let t = r.target, !t.isLocation, same(t.app, target), t.managed != predicted {
            differ("target managed", record: "\(t.managed)", other: "\(predicted)", says: "the prediction has")
        }
        return out
    }

    /// Holds the records written while the cell ran (every app's: those naming neither of the
    /// cell's apps are left out, those the reader could not read kept) against the cell's live
    /// verdict: a disagreement fails the cell. Whether there was one.
    public static func judge(_ r: inout CellResult, told: JSONValue?, source: String, target: String?, records: [BrokerRecord]) -> Bool {
        guard told != nil, var live = r.live else { return false }
        let apps = Set([source] + (target.map { [$0] } ?? []))
        let mine = records.filter { $0.channel == "malformed" || $0.names(apps) }
        var problems = disagreements(r, told: told, source: source, target: target, records: mine)
        problems += mine.filter { $0.channel == "malformed" }.map { "the broker's log holds a line that is not a record: \($0.detail ?? "")" }
        guard !problems.isEmpty else { return false }
        live.recordDisagreements = problems
        live.note = (live.note.map { $0 + "; " } ?? "") + problems.joined(separator: "; ")
        r.live = live
        return true
    }

    static func same(_ a: String, _ b: String?) -> Bool { b.map { a.lowercased() == $0.lowercased() } ?? false }
}
