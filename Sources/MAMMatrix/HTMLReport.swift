import Foundation
import MAMPolicy

/// The HTML report: one self-contained page (no network: inline style, no scripts, no fonts),
/// the cells that change between two policies first when a diff is asked for, then a heatmap
/// per policy (rows: source party; columns: target party × channel, headed by the party over
/// a channel number), one colour and letter per outcome with a legend, and every cell in words
/// at the end: each square links to its line, so nothing needs hovering and a printout has it
/// all. The words are the rules' plain words (Rule.plainWords), their source a small note.
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
            table.heat th.grp{font-size:11px;font-weight:600;white-space:normal;text-align:center;border-bottom:2px solid #bbb;padding:2px 3px;max-width:180px}
            table.heat th.ch{font-size:11px;font-weight:400;color:#555;text-align:center;padding:1px}
            a.sq{text-decoration:none}
            table.words td.why{min-width:280px;max-width:520px}span.note{display:block;color:#666;font-size:11px}
            p.keys{font-size:12px}
            @media print{body{margin:0;font-size:10pt}a{color:inherit;text-decoration:none}
            div.cell,div.dcell,span.key{-webkit-print-color-adjust:exact;print-color-adjust:exact}
            h2,h3{break-after:avoid}tr{break-inside:avoid}}
            table.heat td{padding:1px;border:1px solid #eee}
            div.cell,div.dcell,span.key{display:inline-block;width:26px;height:22px;line-height:22px;text-align:center;color:#fff;font-weight:700;font-size:12px;border-radius:3px}
            div.fail{outline:3px solid #000;outline-offset:-3px}
            .legend{margin:8px 0 16px}.legend span.item{margin-right:14px;white-space:nowrap}
            .summary{font-weight:600}
            p.partial{margin:0 0 12px;padding:8px 12px;background:#fff3cd;border:2px solid #b58100;font-weight:700}
            table.list{border-collapse:collapse;font-size:13px}table.list td,table.list th{border:1px solid #ddd;padding:3px 6px;text-align:left}
            </style></head><body>
            \(report.partial.map { "<p class=\"partial\">\(esc($0.line))</p>" } ?? "")
            <h1>Sharing matrix: \(esc(report.experiment.name))</h1>

            """
        if !report.experiment.description.isEmpty { h += "<p class=\"meta\">\(esc(report.experiment.description))</p>\n" }
        h += "<p class=\"meta summary\">\(esc(report.summary))</p>\n"
        if !report.standIns.isEmpty { h += "<p class=\"meta standins\">\(esc(report.standInLine))</p>\n" }
        if let diff { h += "<p class=\"meta\"><a href=\"#diff\">What changes: \(esc(diff.summary)), each with the setting behind it</a></p>\n" }
        h += "<p class=\"meta\">Each square is one cell: what arrived \(report.live ? "in the live run (live answer; a black frame marks a cell where live, engine or expectation disagree)" : "according to the engine"). A square links to its line in <a href=\"#cells\">every cell in words</a>, at the end: what happened and why, in plain words, and where the rule comes from.</p>\n"
        h += "<p class=\"meta\">An empty square is no cell: a party never shares with another party of its own app; a location of an account is tried only by parties signed in to that account; a web link goes only to apps that open it.</p>\n"
        h += legend()
        // The diff first: it is what an admin acts on.
        if let diff { h += diffView(diff) }
        for policy in report.policies {
            h += heatmap(policy)
        }
        h += "<h2 id=\"cells\">Every cell in words</h2>\n"
        for policy in report.policies {
            h += cellsInWords(policy)
        }
        let failures = report.failures
        if !failures.isEmpty {
            h += "<h2>Failed cells</h2>\n<table class=\"list\"><tr><th>#</th><th>cell</th><th>predicted</th><th>live</th><th>expected</th></tr>\n"
            for r in failures {
                h += "<tr><td>\(r.cell.id)</td><td>\(esc(r.cell.title))</td><td>\(esc(Self.verdictWords(r.predicted)))</td>"
                h += "<td>\(esc(r.live.map(Self.verdictWords) ?? "-"))</td><td>\(esc(r.cell.expect.map { $0.outcomes.map(\.rawValue).joined(separator: " or ") } ?? "-"))</td></tr>\n"
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
        // Two short header rows instead of rotated names: the target party over its columns,
        // then a channel number, with the numbers' key under the table.
        var numbers: [String: Int] = [:], key: [String] = []
        func number(_ column: String) -> Int {
            let c = firstOf[column]!
            let name = c.target == nil ? column : Cell.short(c.channel.description)
            if let n = numbers[name] { return n }
            key.append(name)
            numbers[name] = key.count
            return key.count
        }
        var groups: [(name: String, span: Int)] = []
        for c in columns {
            let name = firstOf[c]!.target?.name ?? "no target app"
            if groups.last?.name == name { groups[groups.count - 1].span += 1 } else { groups.append((name, 1)) }
        }
        h += "<table class=\"heat\" data-policy=\"\(esc(policy))\"><tr><th rowspan=\"2\">source \\ target</th>"
        for g in groups { h += "<th class=\"grp\" colspan=\"\(g.span)\">\(esc(g.name))</th>" }
        h += "</tr>\n<tr>"
        for c in columns { h += "<th class=\"ch\">\(number(c))</th>" }
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
        h += "</table>\n<p class=\"meta keys\">Channels: "
        h += key.enumerated().map { "<b>\($0.offset + 1)</b> \(esc($0.element))" }.joined(separator: " · ")
        return h + "</p>\n"
    }

    /// An outcome as the admin reads it.
    static func outcomeWords(_ v: Verdict) -> String {
        switch v.outcome {
        case .allowed: return "Allowed"
        case .blocked: return "Blocked"
        case .encrypted: return "Delivered encrypted"
        case .filtered: return "Not offered"
        case .switched: return "Delivered after the receiver switched to \(v.identity ?? "another account")"
        case .rewritten: return "Rewritten" + (v.url.flatMap { URLText.scheme(of: $0) }.map { " (opens as \($0):…)" } ?? "")
        }
    }

    /// One side of a failed cell in words: outcome, rule, what arrived.
    static func verdictWords(_ v: Verdict) -> String {
        var s = outcomeWords(v) + "."
        if let rule = Rule(rawValue: v.ruleName) { s += " " + rule.plainWords }
        if let a = v.arrival { s += a.readable ? " It arrived readable." : " It arrived unreadable." }
        if let note = v.note { s += " (\(note))" }
        return s
    }

    /// Why a cell came out as shown, in words, and where its rule comes from.
    static func why(_ r: CellResult) -> (words: String, note: String) {
        let v = r.shown
        let name = v.ruleName.isEmpty && v.rule == r.predicted.rule && v.outcome == r.predicted.outcome ? r.predicted.ruleName : v.ruleName
        guard let rule = Rule(rawValue: name) else { return (outcomeWords(v) + ".", "") }
        var words = outcomeWords(v) + ". " + rule.plainWords
        if !v.message.isEmpty { words += " The user sees: “\(v.message)”" }
        if let note = v.note { words += " (\(note))" }
        if r.leaked { words += " Organization data leaked here." } else if !r.passed { words += " Live, engine or expectation disagree: see Failed cells." }
        return (words, "Rule \(rule.id) in MAMLab's semantics, \(rule.source.plainNote).")
    }

    /// Every cell of a policy, one line each, linked from its square.
    func cellsInWords(_ policy: String) -> String {
        var h = "<h3>\(esc(report.policyInfo[policy]?.displayName ?? policy))</h3>\n"
        h += "<table class=\"list words\"><tr><th>#</th><th>source</th><th>channel</th><th>target</th><th>what happened, and why</th></tr>\n"
        for r in report.results where r.cell.policy == policy {
            let (words, note) = Self.why(r)
            h += "<tr id=\"c\(r.cell.id)\"><td>\(r.cell.id)</td><td>\(esc(r.cell.source.name))</td><td>\(esc(r.cell.channel.description))</td>"
            h += "<td>\(esc(r.cell.target?.name ?? r.cell.account ?? "-"))</td><td class=\"why\">\(esc(words))<span class=\"note\">\(esc(note))</span></td></tr>\n"
        }
        return h + "</table>\n"
    }

    func cell(_ r: CellResult) -> String {
        let v = r.shown
        let c = Self.colours[v.outcome]!
        let (words, note) = Self.why(r)
        var tip = "#\(r.cell.id) \(r.cell.title)\n\(words)"
        if let a = r.live?.arrival { tip += a.readable ? "\nIt arrived readable." : "\nIt arrived unreadable (encrypted)." }
        if let l = r.cell.label { tip += "\n\(l)" }
        if !note.isEmpty { tip += "\n\(note)" }
        let fail = r.passed && !r.leaked ? "" : " fail"
        return "<a class=\"sq\" href=\"#c\(r.cell.id)\"><div class=\"cell o-\(v.outcome.rawValue)\(fail)\" style=\"background:\(c.background)\" title=\"\(esc(tip))\">\(c.letter)</div></a>"
    }

    func diffView(_ diff: MatrixDiff) -> String {
        let span = diff.policies.count == 2 ? "from \(diff.policyA) to \(diff.policyB)" : "across \(diff.policies.joined(separator: ", "))"
        var h = "<h2 id=\"diff\">What changes \(esc(span))</h2>\n"
        h += "<p class=\"meta\">\(esc(diff.summary)). Each change is split in bands, one per policy in order: \(esc(diff.policies.joined(separator: ", "))).</p>\n"
        guard !diff.changes.isEmpty else { return h }
        h += "<table class=\"list words\"><tr><th>cells</th><th>outcome</th><th>setting that changed it</th></tr>\n"
        for g in diff.groups {
            h += "<tr><td>\(g.changes.count)</td><td>\(esc(g.outcomes))</td><td>\(esc(g.settings.isEmpty ? "-" : g.settings.joined(separator: "; ")))</td></tr>\n"
        }
        h += "</table>\n<table class=\"list words\"><tr><th>source</th><th>channel</th><th>target</th><th>change</th>"
        h += diff.policies.map { "<th>\(esc($0))</th>" }.joined() + "<th>setting that changed it</th></tr>\n"
        for c in diff.changes {
            let colours = c.cells.map { Self.colours[$0.shown.outcome]! }
            let band = 100.0 / Double(colours.count)
            let stops = colours.enumerated().map { i, k in "\(k.background) \(Int(band * Double(i)))% \(Int(band * Double(i + 1)))%" }.joined(separator: ",")
            h += "<tr><td>\(esc(c.a.cell.source.name))</td><td>\(esc(c.a.cell.channel.description))</td><td>\(esc(c.target))</td>"
            h += "<td><div class=\"dcell\" style=\"background:linear-gradient(90deg,\(stops))\" title=\"\(esc(c.cells.map { Self.outcomeWords($0.shown) }.joined(separator: " → ")))\">"
            h += colours.map(\.letter).joined() + "</div></td>"
            for r in c.cells {
                let (w, n) = Self.why(r)
                h += "<td class=\"why\">\(esc(w))<span class=\"note\">\(esc(n))</span></td>"
            }
            h += "<td>\(esc(diff.reasons(c).joined(separator: "; ")))</td></tr>\n"
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
