/// What changes between two policies: the cells (matched by source, target, channel and
/// account) whose outcome or rule is not the same under both.
public struct MatrixDiff: Sendable {
    public struct Change: Sendable {
        public var a: CellResult
        public var b: CellResult
    }

    public var policyA: String
    public var policyB: String
    public var changes: [Change]
    /// How many cell pairs were compared.
    public var compared: Int

    public init(_ results: [CellResult], policyA: String, policyB: String) {
        self.policyA = policyA
        self.policyB = policyB
        let bByKey = Dictionary(results.filter { $0.cell.policy == policyB }.map { ($0.cell.key, $0) }, uniquingKeysWith: { a, _ in a })
        var changes: [Change] = []
        var compared = 0
        for a in results where a.cell.policy == policyA {
            guard let b = bByKey[a.cell.key] else { continue }
            compared += 1
            let x = a.shown, y = b.shown
            if x.outcome != y.outcome || x.rule != y.rule || x.identity != y.identity || x.managed != y.managed {
                changes.append(Change(a: a, b: b))
            }
        }
        self.changes = changes
        self.compared = compared
    }

    public var table: String {
        var rows: [[String]] = [["source", "channel", "target", policyA, policyB]]
        for c in changes {
            rows.append([c.a.cell.source.name, c.a.cell.channel.description, c.a.cell.target?.name ?? c.a.cell.account ?? "-",
                         c.a.shown.short, c.b.shown.short])
        }
        return MatrixReport.align(rows) + "\n\(changes.count) of \(compared) cells change from \(policyA) to \(policyB)"
    }
}
