import MAMPolicy

/// What changes between two policies: the cells (matched by source, target, channel and
/// account) whose outcome or rule is not the same under both.
public struct MatrixDiff: Sendable {
    /// A Graph policy's settings written out per property, as a diff compares them.
    public static func settingValues(_ policy: Policy) -> [String: String] {
        guard case let .object(pairs) = GraphPolicy.write(policy).value else { return [:] }
        var out: [String: String] = [:]
        for (key, node) in pairs where key != "apps" && key != "assignments" { out[key] = node.settingText }
        return out
    }

    /// An open-url cell with an explicit URL, by source and link (not target).
    static func linkKey(_ cell: Cell) -> String? {
        guard cell.channel.channel == .openURL, cell.channel.url != nil else { return nil }
        return "\(cell.source.name)|\(cell.channel)|\(cell.account ?? "")"
    }

    public struct Change: Sendable {
        public var a: CellResult
        public var b: CellResult

        /// The target, or both when a web link opens in another app under policy B.
        public var target: String {
            let ta = a.cell.target?.name ?? a.cell.account ?? "-", tb = b.cell.target?.name ?? b.cell.account ?? "-"
            return ta == tb ? ta : ta + " → " + tb
        }
    }

    public var policyA: String
    public var policyB: String
    public var changes: [Change]
    /// How many cell pairs were compared.
    public var compared: Int
    /// Each policy's settings as Graph properties and their values written out, by label
    /// (empty for `tenant`, which may hold several policies): what names a change's cause.
    public var settings: [String: [String: String]]

    public init(_ results: [CellResult], policyA: String, policyB: String, settings: [String: [String: String]] = [:]) {
        self.policyA = policyA
        self.policyB = policyB
        self.settings = settings
        let inB = results.filter { $0.cell.policy == policyB }
        let bByKey = Dictionary(inB.map { ($0.cell.key, $0) }, uniquingKeysWith: { a, _ in a })
        // A web link opens in one app, the device's choice, and a policy may move it (the
        // managed browser's rewrite): a link cell with no partner is compared with the same
        // source's same link wherever it opened under the other policy.
        let aKeys = Set(results.filter { $0.cell.policy == policyA }.map(\.cell.key))
        let bByLink = Dictionary(inB.filter { Self.linkKey($0.cell) != nil && !aKeys.contains($0.cell.key) }
                                    .map { (Self.linkKey($0.cell)!, $0) }, uniquingKeysWith: { a, _ in a })
        var changes: [Change] = []
        var compared = 0
        for a in results where a.cell.policy == policyA {
            guard let b = bByKey[a.cell.key] ?? Self.linkKey(a.cell).flatMap({ bByLink[$0] }) else { continue }
            compared += 1
            let x = a.shown, y = b.shown
            if x.outcome != y.outcome || x.rule != y.rule || x.identity != y.identity || x.managed != y.managed
                || a.cell.target?.name != b.cell.target?.name {
                changes.append(Change(a: a, b: b))
            }
        }
        self.changes = changes
        self.compared = compared
    }

    /// The settings behind a change: of the Graph properties either side's rule reads, those
    /// whose values differ between the two policies ("saveAsBlocked: false → true"). When none
    /// differ (the parties' own state decided, or the policies are not files), the properties the
    /// rules read, marked unchanged; empty when no rule reads a setting.
    public func reasons(_ change: Change) -> [String] {
        var fields: [String] = []
        for name in [change.a.shown.ruleName, change.b.shown.ruleName] {
            for f in Rule(rawValue: name)?.fields ?? [] where !fields.contains(f) { fields.append(f) }
        }
        guard let a = settings[policyA], let b = settings[policyB] else { return fields }
        let changed = fields.filter { a[$0] != b[$0] }
        if changed.isEmpty { return fields.map { "\($0) (unchanged: \(a[$0] ?? "not set"))" } }
        return changed.map { "\($0): \(a[$0] ?? "not set") → \(b[$0] ?? "not set")" }
    }

    public var table: String {
        var rows: [[String]] = [["source", "channel", "target", policyA, policyB, "setting"]]
        for c in changes {
            rows.append([c.a.cell.source.name, c.a.cell.channel.description, c.target,
                         c.a.shown.short, c.b.shown.short, reasons(c).joined(separator: "; ")])
        }
        return MatrixReport.align(rows) + "\n\(changes.count) of \(compared) cells change from \(policyA) to \(policyB)"
    }
}
