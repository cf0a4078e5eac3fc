import MAMPolicy

/// What changes from policy to policy, two or more in order (a column each): the cells (matched
/// by source, target, channel and account) whose answer is not the same under all of them, each
/// with the settings that changed it, and the changes grouped by setting and outcome. A change
/// of the rule alone (the same outcome, another rule) is counted and listed only when asked.
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

    /// One cell under each policy, in the diff's order.
    public struct Change: Sendable {
        public var cells: [CellResult]
        public var a: CellResult { cells[0] }
        public var b: CellResult { cells[cells.count - 1] }

        /// The target, or each one in turn when a web link opens in another app under a later policy.
        public var target: String {
            var names: [String] = []
            for c in cells {
                let name = c.cell.target?.name ?? c.cell.account ?? "-"
                if names.last != name { names.append(name) }
            }
            return names.joined(separator: " → ")
        }

        /// The outcomes in order ("allowed → blocked"), each once where it stays.
        public var outcomes: String {
            var said: [String] = []
            for c in cells where said.last != c.shown.outcome.rawValue { said.append(c.shown.outcome.rawValue) }
            return said.joined(separator: " → ")
        }

        static func differs(_ x: CellResult, _ y: CellResult) -> Bool {
            let v = x.shown, w = y.shown
            return v.outcome != w.outcome || v.identity != w.identity || v.managed != w.managed || x.cell.target?.name != y.cell.target?.name
        }

        /// Only the rule differs somewhere; what happens to the data does not.
        public var ruleOnly: Bool {
            !zip(cells, cells.dropFirst()).contains { Self.differs($0, $1) }
        }
    }

    /// Changes that share the settings behind them and the outcomes they go through.
    public struct Group: Sendable {
        public var settings: [String]
        public var outcomes: String
        public var changes: [Change]
    }

    public var policies: [String]
    public var policyA: String { policies[0] }
    public var policyB: String { policies[policies.count - 1] }
    /// The cells whose answer changes: the outcome, the identity, the management or the target;
    /// and, with `includeRuleOnly`, those where only the rule does.
    public var changes: [Change]
    /// Changes of the rule alone, left out of `changes` unless asked for.
    public var ruleOnly: [Change]
    public var includesRuleOnly: Bool
    /// How many cells were compared (present under every policy).
    public var compared: Int
    /// Each policy's settings as Graph properties and their values written out, by label
    /// (empty for `tenant`, which may hold several policies): what names a change's cause.
    public var settings: [String: [String: String]]

    public init(_ results: [CellResult], policyA: String, policyB: String, settings: [String: [String: String]] = [:],
                includeRuleOnly: Bool = true) {
        self.init(results, policies: [policyA, policyB], settings: settings, includeRuleOnly: includeRuleOnly)
    }

    public init(_ results: [CellResult], policies: [String], settings: [String: [String: String]] = [:], includeRuleOnly: Bool = false) {
        precondition(policies.count >= 2, "a diff compares two policies or more")
        self.policies = policies
        self.settings = settings
        self.includesRuleOnly = includeRuleOnly
        let first = Set(results.filter { $0.cell.policy == policies[0] }.map(\.cell.key))
        // Each later policy's cells by key, and (a web link opens in one app, the device's choice,
        // which a policy may move: the managed browser's rewrite) a link cell with no partner
        // under the first policy by its source and link instead.
        let later = policies.dropFirst().map { p -> (byKey: [String: CellResult], byLink: [String: CellResult]) in
            let mine = results.filter { $0.cell.policy == p }
            return (Dictionary(mine.map { ($0.cell.key, $0) }, uniquingKeysWith: { a, _ in a }),
                    Dictionary(mine.filter { Self.linkKey($0.cell) != nil && !first.contains($0.cell.key) }.map { (Self.linkKey($0.cell)!, $0) },
                               uniquingKeysWith: { a, _ in a }))
        }
        var changes: [Change] = [], ruleOnly: [Change] = []
        var compared = 0
        for a in results where a.cell.policy == policies[0] {
            let link = Self.linkKey(a.cell)
            let partners = later.map { policy in policy.byKey[a.cell.key] ?? link.flatMap { policy.byLink[$0] } }
            guard !partners.contains(where: { $0 == nil }) else { continue }
            compared += 1
            let change = Change(cells: [a] + partners.map { $0! })
            if !change.ruleOnly { changes.append(change) } else if zip(change.cells, change.cells.dropFirst()).contains(where: { $0.shown.rule != $1.shown.rule }) {
                ruleOnly.append(change)
            }
        }
        self.changes = includeRuleOnly ? Self.inOrder(changes + ruleOnly) : changes
        self.ruleOnly = ruleOnly
        self.compared = compared
    }

    static func inOrder(_ changes: [Change]) -> [Change] { changes.sorted { $0.a.cell.id < $1.a.cell.id } }

    /// The settings behind a change: at each step where the cell changes, of the Graph
    /// properties either side's rule reads, those whose values differ between the two policies
    /// ("saveAsBlocked: false → true"; with more than two policies, prefixed by the step). When
    /// none differ (the parties' own state decided, or the policies are not files), the
    /// properties the rules read, marked unchanged; empty when no rule reads a setting.
    public func reasons(_ change: Change) -> [String] {
        var out: [String] = []
        for i in 0..<(change.cells.count - 1) {
            let x = change.cells[i], y = change.cells[i + 1]
            guard Change.differs(x, y) || x.shown.rule != y.shown.rule else { continue }
            let said = reasons(x, y, policyA: policies[i], policyB: policies[i + 1])
            if policies.count == 2 { out += said } else if !said.isEmpty { out.append("\(policies[i]) → \(policies[i + 1]): " + said.joined(separator: ", ")) }
        }
        return out
    }

    func reasons(_ x: CellResult, _ y: CellResult, policyA: String, policyB: String) -> [String] {
        let fields = Self.fieldsRead(x, y)
        guard let a = settings[policyA], let b = settings[policyB] else { return fields }
        let changed = changedSettings(x, y, policyA: policyA, policyB: policyB)
        if changed.isEmpty { return fields.map { "\($0) (unchanged: \(a[$0] ?? "not set"))" } }
        return changed.map { "\($0.name): \(a[$0.name] ?? "not set") → \(b[$0.name] ?? "not set")" }
    }

    /// The Graph properties the two sides' rules read.
    static func fieldsRead(_ x: CellResult, _ y: CellResult) -> [String] {
        var fields: [String] = []
        for name in [x.shown.ruleName, y.shown.ruleName] {
            for f in Rule(rawValue: name)?.fields ?? [] where !fields.contains(f) { fields.append(f) }
        }
        return fields
    }

    /// Of the properties the two sides' rules read, those whose values differ between the two
    /// policies (none when either policy's settings are unknown).
    public func changedSettings(_ x: CellResult, _ y: CellResult, policyA: String, policyB: String) -> [(name: String, before: String?, after: String?)] {
        guard let a = settings[policyA], let b = settings[policyB] else { return [] }
        return Self.fieldsRead(x, y).filter { a[$0] != b[$0] }.map { ($0, a[$0], b[$0]) }
    }

    /// The changes grouped by the settings behind them and the outcomes they go through, the
    /// largest group first: what an admin reads before the cells.
    public var groups: [Group] {
        var order: [String] = []
        var byKey: [String: Group] = [:]
        for c in changes {
            let settings = reasons(c)
            let key = settings.joined(separator: "\n") + "\u{1}" + c.outcomes
            if byKey[key] == nil { order.append(key); byKey[key] = Group(settings: settings, outcomes: c.outcomes, changes: []) }
            byKey[key]!.changes.append(c)
        }
        return order.map { byKey[$0]! }.enumerated().sorted { ($0.element.changes.count, -$0.offset) > ($1.element.changes.count, -$1.offset) }.map(\.element)
    }

    /// The one line under every form of the diff: how much changed, and what was folded away.
    public var summary: String {
        let span = policies.count == 2 ? "from \(policyA) to \(policyB)" : "across \(policies.joined(separator: ", "))"
        let folded = includesRuleOnly || ruleOnly.isEmpty ? ""
            : "; \(ruleOnly.count) more change only the rule that decides (--diff-rules lists them)"
        return "\(changes.count) of \(compared) cells change \(span)\(folded)"
    }

    public var table: String {
        var out = ""
        let groups = self.groups
        if !groups.isEmpty {
            var rows: [[String]] = [["cells", "outcome", "setting that changed it"]]
            for g in groups { rows.append(["\(g.changes.count)", g.outcomes, g.settings.isEmpty ? "-" : g.settings.joined(separator: "; ")]) }
            out += MatrixReport.align(rows) + "\n\n"
        }
        var rows: [[String]] = [["source", "channel", "target"] + policies + ["setting"]]
        for c in changes {
            rows.append([c.a.cell.source.name, c.a.cell.channel.description, c.target] + c.cells.map(\.shown.short) + [reasons(c).joined(separator: "; ")])
        }
        return out + MatrixReport.align(rows) + "\n" + summary
    }
}
