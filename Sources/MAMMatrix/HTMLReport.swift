import Foundation
import MAMPolicy

/// The HTML report: one self-contained page (no network: inline style, no scripts, no fonts),
/// a heatmap per policy (rows: source party; columns: target party × channel), one colour per
/// outcome with a legend, each cell's rule, source and message on hover (`title`), and the
/// cells that change between two policies when a diff is asked for.
///
/// Every matrix cell is exactly one `div.cell` (tests count them).
struct HTMLReport {
    var report: MatrixReport
    var diff: MatrixDiff?

    static let colours: [Outcome: (background: String, letter: String)] = [
        .allowed: ("#2e9d4f", "A"), .blocked: ("#c62828", "B"), .encrypted: ("#6a3fb5", "E"),
        .filtered: ("#8d8d8d", "F"), .switched: ("#e0a000", "S"), .rewritten: ("#1e78c8", "R"),
    ]

    func render() -> String {
        var h = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"/>
            <title>Sharing matrix: \(esc(report.experiment.name))</title>
            <style>
            body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#1b1b1b;background:#fff}
            h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
            p.meta{color:#555;margin:2px 0}
            table.heat{border-collapse:collapse;margin:4px 0 12px}
            table.heat th{font-weight:600;font-size:12px;padding:3px 6px;text-align:left;vertical-align:bottom;white-space:nowrap}
            table.heat th.col{writing-mode:vertical-rl;transform:rotate(180deg)}
            table.heat td{padding:1px;border:1px solid #eee}
            div.cell,div.dcell,span.key{display:inline-block;width:26px;height:22px;line-height:22px;text-align:center;color:#fff;font-weight:700;font-size:12px;border-radius:3px}
            div.fail{outline:3px solid #000;outline-offset:-3px}
            .legend{margin:8px 0 16px}.legend span.item{margin-right:14px;white-space:nowrap}
            .summary{font-weight:600}
            table.list{border-collapse:collapse;font-size:13px}table.list td,table.list th{border:1px solid #ddd;padding:3px 6px;text-align:left}
            </style></head><body>
            <h1>Sharing matrix: \(esc(report.experiment.name))</h1>

            """
        if !report.experiment.description.isEmpty { h += "<p class=\"meta\">\(esc(report.experiment.description))</p>\n" }
        h += "<p class=\"meta summary\">\(esc(report.summary))</p>\n"
        if !report.standIns.isEmpty { h += "<p class=\"meta standins\">\(esc(report.standInLine))</p>\n" }
        if let diff { h += "<p class=\"meta\"><a href=\"#diff\">What changes from \(esc(diff.policyA)) to \(esc(diff.policyB)): \(diff.changes.count) cells, each with the setting behind it</a></p>\n" }
        h += "<p class=\"meta\">Each square is one cell: what arrived \(report.live ? "in the live run (live answer; a black frame marks a cell where live, engine or expectation disagree)" : "according to the engine") — hover for the rule, its source and the message.</p>\n"
        h += "<p class=\"meta\">An empty square is no cell: a party never shares with another party of its own app; a location of an account is tried only by parties signed in to that account; a web link goes only to apps that open it.</p>\n"
        h += legend()
        // The diff first: it is what an admin acts on.
        if let diff { h += diffView(diff) }
        for policy in report.policies {
            h += heatmap(policy)
        }
        let failures = report.failures
        if !failures.isEmpty {
            h += "<h2>Failed cells</h2>\n<table class=\"list\"><tr><th>#</th><th>cell</th><th>predicted</th><th>live</th><th>expected</th></tr>\n"
            for r in failures {
                h += "<tr><td>\(r.cell.id)</td><td>\(esc(r.cell.title))</td><td>\(esc(MatrixReport.describe(r.predicted)))</td>"
                h += "<td>\(esc(r.live.map(MatrixReport.describe) ?? "-"))</td><td>\(esc(r.cell.expect.map { $0.outcomes.map(\.rawValue).joined(separator: " or ") } ?? "-"))</td></tr>\n"
            }
            h += "</table>\n"
        }
        h += "</body></html>\n"
        return h
    }

    func legend() -> String {
        var h = "<div class=\"legend\">"
        for o in Outcome.allCases {
            let c = Self.colours[o]!
            h += "<span class=\"item\"><span class=\"key\" style=\"background:\(c.background)\">\(c.letter)</span> \(o.rawValue)</span>"
        }
        return h + "</div>\n"
    }

    /// Columns in order of first appearance, rows likewise.
    func heatmap(_ policy: String) -> String {
        let cells = report.results.filter { $0.cell.policy == policy }
        var rows: [String] = [], columns: [String] = []
        var firstOf: [String: Cell] = [:]
        for r in cells {
            if !rows.contains(r.cell.source.name) { rows.append(r.cell.source.name) }
            if !columns.contains(r.cell.column) { columns.append(r.cell.column); firstOf[r.cell.column] = r.cell }
        }
        // Columns grouped by target party (in the experiment's order), then by channel; the
        // columns without a target (locations, accounts) last.
        let parties = report.experiment.parties.map(\.name)
        let channels = report.experiment.channels.map(\.description)
        let appearance = Dictionary(columns.enumerated().map { ($0.element, $0.offset) }, uniquingKeysWith: { a, _ in a })
        func rank(_ column: String) -> (Int, Int, Int) {
            let c = firstOf[column]!
            let t = c.target.flatMap { parties.firstIndex(of: $0.name) } ?? parties.count
            let ch = channels.firstIndex(of: c.channel.description) ?? channels.count
            return (t, ch, appearance[column]!)
        }
        columns.sort { rank($0) < rank($1) }
        var grid: [String: [CellResult]] = [:]
        for r in cells { grid[r.cell.source.name + "\u{1}" + r.cell.column, default: []].append(r) }
        var h = "<h2>Policy: \(esc(report.policyInfo[policy]?.displayName ?? policy))</h2>\n"
        if let info = report.policyInfo[policy] {
            h += "<p class=\"meta\">File: \(esc(info.file))</p>\n<table class=\"list settings\"><tr><th>setting that decides sharing</th><th>value</th></tr>"
            for (k, v) in info.settings { h += "<tr><td>\(esc(k))</td><td>\(esc(v))</td></tr>" }
            h += "</table>\n"
        }
        h += "<table class=\"heat\" data-policy=\"\(esc(policy))\"><tr><th>source \\ target · channel</th>"
        for c in columns { h += "<th class=\"col\">\(esc(c))</th>" }
        h += "</tr>\n"
        for row in rows {
            h += "<tr><th>\(esc(row))</th>"
            for c in columns {
                h += "<td>"
                for r in grid[row + "\u{1}" + c] ?? [] { h += cell(r) }
                h += "</td>"
            }
            h += "</tr>\n"
        }
        return h + "</table>\n"
    }

    func cell(_ r: CellResult) -> String {
        let v = r.shown
        let c = Self.colours[v.outcome]!
        var tip = "#\(r.cell.id) \(r.cell.title)\n\(v.outcome.rawValue): rule \(v.rule)"
        if !r.predicted.ruleName.isEmpty { tip += " \(r.predicted.ruleName)" }
        if !r.predicted.ruleSource.isEmpty { tip += " [\(r.predicted.tag): \(r.predicted.ruleSource)]" }
        if !v.message.isEmpty { tip += "\nmessage: \(v.message)" }
        if let i = v.identity { tip += "\narrived as \(i)" }
        if let live = r.live {
            tip += "\npredicted: \(r.predicted.short); live: \(live.short)"
            if let a = live.arrival { tip += a.readable ? "\narrived readable" : "\narrived unreadable (ciphertext)" }
        }
        if let l = r.cell.label { tip += "\n\(l)" }
        if !r.passed || r.leaked { tip += "\nFAILED" }
        let fail = r.passed && !r.leaked ? "" : " fail"
        return "<div class=\"cell o-\(v.outcome.rawValue)\(fail)\" style=\"background:\(c.background)\" title=\"\(esc(tip))\">\(c.letter)</div>"
    }

    func diffView(_ diff: MatrixDiff) -> String {
        var h = "<h2 id=\"diff\">What changes from \(esc(diff.policyA)) to \(esc(diff.policyB))</h2>\n"
        h += "<p class=\"meta\">\(diff.changes.count) of \(diff.compared) cells change. Left half: \(esc(diff.policyA)); right half: \(esc(diff.policyB)).</p>\n"
        guard !diff.changes.isEmpty else { return h }
        h += "<table class=\"list\"><tr><th>source</th><th>channel</th><th>target</th><th>change</th><th>\(esc(diff.policyA))</th><th>\(esc(diff.policyB))</th><th>setting that changed it</th></tr>\n"
        for c in diff.changes {
            let a = Self.colours[c.a.shown.outcome]!, b = Self.colours[c.b.shown.outcome]!
            h += "<tr><td>\(esc(c.a.cell.source.name))</td><td>\(esc(c.a.cell.channel.description))</td><td>\(esc(c.a.cell.target?.name ?? c.a.cell.account ?? "-"))</td>"
            h += "<td><div class=\"dcell\" style=\"background:linear-gradient(90deg,\(a.background) 50%,\(b.background) 50%)\" title=\"\(esc(c.a.shown.short + " → " + c.b.shown.short))\">\(a.letter)\(b.letter)</div></td>"
            h += "<td>\(esc(c.a.shown.short))</td><td>\(esc(c.b.shown.short))</td><td>\(esc(diff.reasons(c).joined(separator: "; ")))</td></tr>\n"
        }
        return h + "</table>\n"
    }

    func esc(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.count)
        for ch in s.unicodeScalars {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\n": out += "&#10;"
            default:
                if ch.value < 0x20 { out += "&#\(ch.value);" } else { out.unicodeScalars.append(ch) }
            }
        }
        return out
    }
}
