import MAMPolicy

/// What a policy change may not do, as a pipeline asks it (`--fail-on`): the rules a run is
/// gated on, and the findings that break them.
public enum GateRule: String, CaseIterable, Sendable, Hashable {
    /// Org data reaches a party (an app, a storage location, a browser) it did not reach under
    /// the policy before: readable where it was blocked, filtered or sealed.
    case widened
    /// Org data arrived readable where the policy forbids it (live: the leak invariant).
    case leak
    /// Any cell's answer changed (the outcome, the identity, the management or the link's app).
    case changed

    public var summary: String {
        switch self {
        case .widened: return "org data reaches a party it did not reach before"
        case .leak: return "org data arrived readable where the policy forbids it"
        case .changed: return "the answer to a cell changed"
        }
    }
}

extension CellResult {
    /// Org data arrives readable at the target: live, what arrived; predicted, an outcome that
    /// delivers it as it is (allowed, switched, rewritten).
    public var orgDataReaches: Bool {
        guard orgData else { return false }
        if let arrival = live?.arrival { return arrival.readable }
        switch shown.outcome {
        case .allowed, .switched, .rewritten: return true
        case .blocked, .filtered, .encrypted: return false
        }
    }

    /// The cell in words, as a test case or a finding names it.
    public var title: String {
        let target = cell.target?.name ?? cell.account ?? "-"
        return "\(cell.source.name) \(cell.channel) → \(target)"
    }
}

/// One cell that breaks a gate rule, with the step it broke it at and the settings behind it.
public struct GateFinding: Sendable {
    public var rule: GateRule
    /// The cell under the policy where the rule broke (for a change, the later one).
    public var cell: CellResult
    /// For a change: the cell under the policy before.
    public var before: CellResult?
    /// Of the settings the cell's rules read, those that changed at that step.
    public var settings: [(name: String, before: String?, after: String?)]

    public var message: String {
        let what = before.map { "\($0.shown.outcome.rawValue) under \($0.cell.policy) → \(cell.shown.outcome.rawValue) under \(cell.cell.policy)" }
            ?? "\(cell.shown.outcome.rawValue) under \(cell.cell.policy)"
        let why = settings.isEmpty ? "" : "; " + settings.map { "\($0.name): \($0.before ?? "not set") → \($0.after ?? "not set")" }.joined(separator: ", ")
        return "\(rule.rawValue): \(cell.title): \(what)\(why)"
    }
}

/// The gate's verdict on a run: the rules asked for and every finding.
public struct GateVerdict: Sendable {
    public var rules: [GateRule]
    public var findings: [GateFinding]
    public var passed: Bool { findings.isEmpty }

    public init(rules: [GateRule], report: MatrixReport, diff: MatrixDiff?) {
        self.rules = rules
        var found: [GateFinding] = []
        if rules.contains(.leak) {
            found += report.leaks.map { GateFinding(rule: .leak, cell: $0, before: nil, settings: []) }
        }
        for change in diff?.changes ?? [] where rules.contains(.widened) || rules.contains(.changed) {
            guard let diff else { break }
            for i in 0..<(change.cells.count - 1) {
                let x = change.cells[i], y = change.cells[i + 1]
                let settings = diff.changedSettings(x, y, policyA: diff.policies[i], policyB: diff.policies[i + 1])
                if rules.contains(.widened), y.orgDataReaches, !x.orgDataReaches {
                    found.append(GateFinding(rule: .widened, cell: y, before: x, settings: settings))
                } else if rules.contains(.changed), MatrixDiff.Change.differs(x, y) {
                    found.append(GateFinding(rule: .changed, cell: y, before: x, settings: settings))
                }
            }
        }
        findings = found
    }

    /// "gate (--fail-on widened)".
    public var name: String { "gate (--fail-on \(rules.map(\.rawValue).joined(separator: ", ")))" }

    /// What was found, rule by rule ("242 cells: org data reaches a party it did not reach before").
    public var detail: String {
        var counts: [GateRule: Int] = [:]
        for f in findings { counts[f.rule, default: 0] += 1 }
        return GateRule.allCases.compactMap { r in counts[r].map { "\($0) \($0 == 1 ? "cell" : "cells"): \(r.summary)" } }.joined(separator: "; ")
    }

    /// One line for a terminal or a pipeline's log.
    public var line: String { passed ? "\(name): passed" : "\(name): FAILED: \(detail)" }
}
