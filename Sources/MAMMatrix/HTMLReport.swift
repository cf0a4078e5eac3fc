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
            table.heat caption{caption-side:top;text-align:left;font-size:11px;color:#555;padding:2px 0}
            table.heat th.src{white-space:normal;max-width:220px;overflow-wrap:anywhere}
            table.list td{overflow-wrap:break-word}
            table.heat td{padding:1px;border:1px solid #eee}
            div.cell,div.dcell,span.key{display:inline-block;width:26px;height:22px;line-height:22px;text-align:center;color:#fff;font-weight:700;font-size:12px;border-radius:3px}
            div.dcell{width:auto;min-width:26px;padding:0 3px}
            @page{margin:10mm}
            @media print{body{margin:0;font-size:10pt}a{color:inherit;text-decoration:none}
            div.cell,div.dcell,span.key{-webkit-print-color-adjust:exact;print-color-adjust:exact}
            h2,h3{break-after:avoid}tr{break-inside:avoid}}
            @media print,(max-width:800px){body{margin:8px}
            div.cell,span.key{width:16px;height:14px;line-height:14px;font-size:9px;border-radius:2px}
            div.dcell{height:14px;line-height:14px;font-size:9px;min-width:16px}
            table.heat td{padding:0}table.heat th.src{max-width:130px;font-size:10px}
            table.heat th.grp{font-size:9px;max-width:110px}table.words td.why{min-width:0}}
            table.cells{width:100%;table-layout:fixed}table.cells th:nth-child(1){width:5%}
            table.cells th:nth-child(2),table.cells th:nth-child(4){width:17%}table.cells th:nth-child(3){width:14%}
            @media print{table.diff .why{display:none}}
            div.fail{outline:3px solid #000;outline-offset:-3px}div.notype,span.notype{color:#444}
            .legend{margin:8px 0 16px}.legend span.item{margin-right:14px;white-space:nowrap}
            .summary{font-weight:600}
            p.partial{margin:0 0 12px;padding:8px 12px;background:#fff3cd;border:2px solid #b58100;font-weight:700}
            table.list{border-collapse:collapse;font-size:13px}table.list td,table.list th{border:1px solid #ddd;padding:3px 6px;text-align:left}
            table.diff td,table.diff th{overflow-wrap:anywhere}table.diff td.why{min-width:160px}
            table.glance td,table.inputs td{vertical-align:top;overflow-wrap:anywhere}span.default{color:#777;font-size:11px;margin-left:6px}
            div.warnings{margin:8px 0;padding:6px 12px;background:#fff8e1;border:1px solid #e0b000}div.warnings ul{margin:4px 0;padding-left:18px}
            </style></head><body>
            \(report.partial.map { "<p class=\"partial\">\(esc($0.line))</p>" } ?? "")
            <h1>Sharing matrix: \(esc(report.experiment.name))</h1>

            """
        if !report.experiment.description.isEmpty { h += "<p class=\"meta\">\(esc(report.experiment.description))</p>\n" }
        h += "<p class=\"meta summary\">\(esc(report.summary))</p>\n"
        if !report.standIns.isEmpty { h += "<p class=\"meta standins\">\(esc(report.standInLine))</p>\n" }
        if let inputs = report.inputs { h += inputsView(inputs) }
        h += glanceView(diff)
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

    /// What was run: the tenant, whom each policy reaches, the catalog, the device, and what the inputs drew.
    func inputsView(_ inputs: RunInputs) -> String {
        var h = "<table class=\"list inputs\"><tr><th>tenant</th><td>\(esc(inputs.tenant))</td></tr>"
        if !inputs.assignments.isEmpty {
            h += "<tr><th>assigned</th><td>" + inputs.assignments.map(esc).joined(separator: "<br/>") + "</td></tr>"
        }
        if let catalog = inputs.catalog { h += "<tr><th>app catalog</th><td>\(esc(catalog))</td></tr>" }
        if let device = inputs.device { h += "<tr><th>device</th><td>\(esc(device))</td></tr>" }
        h += "</table>\n"
        if !inputs.warnings.isEmpty {
            let n = inputs.warnings.count
            h += "<div class=\"warnings\"><b>The inputs drew \(n) \(n == 1 ? "warning" : "warnings"); a setting a warning names may have fallen to its default:</b><ul>"
            h += inputs.warnings.map { "<li>\(esc($0))</li>" }.joined() + "</ul></div>\n"
        }
        return h
    }

    /// The page's first answer, one row per policy: the unmanaged apps org data reaches, where
    /// org links open, where org files are saved; then what changed, when a diff was asked for.
    func glanceView(_ diff: MatrixDiff?) -> String {
        func list(_ items: [String], none: String) -> String {
            guard !items.isEmpty else { return none }
            let shown = items.prefix(10).joined(separator: ", ")
            return items.count > 10 ? shown + " and \(items.count - 10) more" : shown
        }
        var h = "<h2 id=\"glance\">At a glance</h2>\n<table class=\"list glance\"><tr><th>policy</th><th>org data arrives readable in unmanaged apps</th>"
        h += "<th>org links open in</th><th>org files saved to</th></tr>\n"
        for policy in report.policies {
            let g = Glance(policy: policy, results: report.results)
            let reached = g.unmanagedReached.map { "\($0.channel): \(list($0.targets, none: ""))" }
            h += "<tr><td>\(esc(report.policyInfo[policy]?.displayName ?? policy))</td>"
            h += "<td>\(reached.isEmpty ? "none" : reached.map(esc).joined(separator: "<br/>"))</td>"
            h += "<td>\(esc(list(g.linksOpen, none: "no link tried or none opened")))</td>"
            var saves = list(g.savedTo, none: "nowhere")
            if !g.refusedSaves.isEmpty { saves += "; refused: " + list(g.refusedSaves, none: "") }
            h += "<td>\(esc(saves))</td></tr>\n"
        }
        h += "</table>\n"
        if let diff {
            h += "<p class=\"meta\">What changed: \(esc(diff.summary))"
            let top = diff.groups.prefix(3).map { "\($0.changes.count) cells \($0.outcomes)" + ($0.settings.isEmpty ? "" : " (\($0.settings.joined(separator: "; ")))") }
            if !top.isEmpty { h += ": " + esc(top.joined(separator: "; ")) + (diff.groups.count > 3 ? "; …" : "") }
            h += " (<a href=\"#diff\">every change</a>)</p>\n"
        }
        return h
    }

    func legend() -> String {
        var h = "<div class=\"legend\">"
        for o in Outcome.allCases {
            let c = Self.colours[o]!
            h += "<span class=\"item\"><span class=\"key\" style=\"background:\(c.background)\">\(c.letter)</span> \(o.rawValue)</span>"
        }
        let t = Self.typeNotOpened
        h += "<span class=\"item\"><span class=\"key notype\" style=\"background:\(t.background)\">\(t.letter)</span> not offered: the app does not open the document's type (no policy's doing)</span>"
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
            for (k, v) in info.settings {
                let mark = info.defaults.contains(k) ? "<span class=\"default\">default: the file does not set it</span>" : ""
                h += "<tr><td>\(esc(k))</td><td>\(esc(v))\(mark)</td></tr>"
            }
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
        var groups: [(name: String, columns: [String])] = []
        for c in columns {
            let name = firstOf[c]!.target?.name ?? "no target app"
            if groups.last?.name == name { groups[groups.count - 1].columns.append(c) } else { groups.append((name, [c])) }
        }
        let pages = Self.pages(groups)
        for (index, page) in pages.enumerated() {
            h += "<table class=\"heat\" data-policy=\"\(esc(policy))\">"
            if pages.count > 1 { h += "<caption>targets, part \(index + 1) of \(pages.count)</caption>" }
            h += "<tr><th rowspan=\"2\">source \\ target</th>"
            for g in page { h += "<th class=\"grp\" colspan=\"\(g.columns.count)\">\(esc(g.name))</th>" }
            h += "</tr>\n<tr>"
            for g in page { for c in g.columns { h += "<th class=\"ch\">\(number(c))</th>" } }
            h += "</tr>\n"
            for row in rows {
                h += "<tr><th class=\"src\">\(esc(row))</th>"
                for g in page {
                    for c in g.columns {
                        h += "<td>"
                        for r in grid[row + "\u{1}" + c] ?? [] { h += cell(r) }
                        h += "</td>"
                    }
                }
                h += "</tr>\n"
            }
            h += "</table>\n"
        }
        h += "<p class=\"meta keys\">Channels: "
        h += key.enumerated().map { "<b>\($0.offset + 1)</b> \(esc($0.element))" }.joined(separator: " · ")
        return h + "</p>\n"
    }

    /// Columns a heatmap's table holds at most: with the row names, 30 fit a 1,400 px window
    /// on screen and a Letter or A4 page in print (the print style's smaller squares), so a wide
    /// matrix is cut into tables one under another rather than run off the window or the paper.
    static let columnsPerTable = 30

    /// The target parties' column groups cut into tables of at most `columnsPerTable` columns,
    /// a party's columns kept together unless they alone are more.
    static func pages(_ groups: [(name: String, columns: [String])]) -> [[(name: String, columns: [String])]] {
        var pages: [[(name: String, columns: [String])]] = [[]]
        var used = 0
        for group in groups {
            var rest = group.columns[...]
            while !rest.isEmpty {
                if used > 0 && used + min(rest.count, columnsPerTable) > columnsPerTable {
                    pages.append([])
                    used = 0
                }
                let part = rest.prefix(columnsPerTable - used)
                pages[pages.count - 1].append((group.name, Array(part)))
                used += part.count
                rest = rest.dropFirst(part.count)
            }
        }
        return pages
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
        h += "<table class=\"list words cells\"><tr><th>#</th><th>source</th><th>channel</th><th>target</th><th>what happened, and why</th></tr>\n"
        for r in report.results where r.cell.policy == policy {
            let (words, note) = Self.why(r)
            h += "<tr id=\"c\(r.cell.id)\"><td>\(r.cell.id)</td><td>\(esc(r.cell.source.name))</td><td>\(esc(r.cell.channel.description))</td>"
            h += "<td>\(esc(r.cell.target?.name ?? r.cell.account ?? "-"))</td><td class=\"why\">\(esc(words))<span class=\"note\">\(esc(note))</span></td></tr>\n"
        }
        return h + "</table>\n"
    }

    /// A share sheet that leaves out an app that does not open the document's type is no
    /// policy's doing: its squares are told apart from Open-in filtering (a lighter grey, a dash).
    static let typeNotOpened = (background: "#d4d4d4", letter: "–")

    static func isTypeNotOpened(_ r: CellResult) -> Bool {
        let v = r.shown
        let name = v.ruleName.isEmpty && v.outcome == r.predicted.outcome ? r.predicted.ruleName : v.ruleName
        return v.outcome == .filtered && name == Rule.openInTypeNotDeclared.rawValue
    }

    func cell(_ r: CellResult) -> String {
        let v = r.shown
        let notType = Self.isTypeNotOpened(r)
        let c = notType ? Self.typeNotOpened : Self.colours[v.outcome]!
        let (words, note) = Self.why(r)
        var tip = "#\(r.cell.id) \(r.cell.title)\n\(words)"
        if let a = r.live?.arrival { tip += a.readable ? "\nIt arrived readable." : "\nIt arrived unreadable (encrypted)." }
        if let l = r.cell.label { tip += "\n\(l)" }
        if !note.isEmpty { tip += "\n\(note)" }
        let fail = r.passed && !r.leaked ? "" : " fail"
        let kind = notType ? " notype" : ""
        return "<a class=\"sq\" href=\"#c\(r.cell.id)\"><div class=\"cell o-\(v.outcome.rawValue)\(kind)\(fail)\" style=\"background:\(c.background)\" title=\"\(esc(tip))\">\(c.letter)</div></a>"
    }

    func diffView(_ diff: MatrixDiff) -> String {
        let span = diff.policies.count == 2 ? "from \(diff.policyA) to \(diff.policyB)" : "across \(diff.policies.joined(separator: ", "))"
        var h = "<h2 id=\"diff\">What changes \(esc(span))</h2>\n"
        h += "<p class=\"meta\">\(esc(diff.summary)). Each change is split in bands, one per policy in order: \(esc(diff.policies.joined(separator: ", "))). In print, each side's words are left to every cell in words, where each cell has its line.</p>\n"
        guard !diff.changes.isEmpty else { return h }
        h += "<table class=\"list words\"><tr><th>cells</th><th>outcome</th><th>setting that changed it</th></tr>\n"
        for g in diff.groups {
            h += "<tr><td>\(g.changes.count)</td><td>\(esc(g.outcomes))</td><td>\(esc(g.settings.isEmpty ? "-" : g.settings.joined(separator: "; ")))</td></tr>\n"
        }
        h += "</table>\n<table class=\"list words diff\"><tr><th>source</th><th>channel</th><th>target</th><th>change</th>"
        h += diff.policies.map { "<th class=\"why\">\(esc($0))</th>" }.joined() + "<th>setting that changed it</th></tr>\n"
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
