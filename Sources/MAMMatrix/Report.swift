import Foundation
import MAMPolicy
import MAMScript

/// A finished run: the cells with their answers, and how it went.
public struct MatrixReport: Sendable {
    public var experiment: Experiment
    public var results: [CellResult]
    /// Whether live answers were asked for.
    public var live: Bool
    /// Wall time of the run, in seconds.
    public var seconds: Double
    /// The sandbox's strength the live run had (every command that launches apps states it).
    public var sandbox: String?
    /// What reports show beside each policy's heatmap, by label: its display name, file and the
    /// settings that decide sharing (Graph property → value).
    public var policyInfo: [String: PolicyInfo] = [:]
    /// Apps that ran as stand-ins (no `Apps/` folder: a sample program under a manifest made
    /// from a catalog entry), as reports name them: "Outlook (com.microsoft.office.outlook)".
    public var standIns: [String] = []
    /// Set when the run was cut short: every form says so first.
    public var partial: PartialRun?
    /// Set when the run is one shard of a campaign (`--shard K/N`).
    public var shard: MatrixShard.Part?
    /// What the run was given (the report's header): nil when the report was made in process.
    public var inputs: RunInputs?

    public init(experiment: Experiment, results: [CellResult], live: Bool, seconds: Double = 0) {
        self.experiment = experiment
        self.results = results
        self.live = live
        self.seconds = seconds
    }

    public var failures: [CellResult] { results.filter { !$0.passed || $0.leaked } }
    public var leaks: [CellResult] { results.filter(\.leaked) }
    public var policies: [String] {
        var seen: [String] = []
        for r in results where !seen.contains(r.cell.policy) { seen.append(r.cell.policy) }
        return seen
    }

    public var cellsPerSecond: Double { seconds > 0 ? Double(results.count) / seconds : 0 }

    /// The last line: counts, failures, wall time and speed.
    public var summary: String {
        let mode = live ? "live" : "predicted, nothing ran"
        var s = "\(results.count) cells (\(mode)), \(policies.count) \(policies.count == 1 ? "policy" : "policies"): "
        if live {
            s += failures.isEmpty ? "all passed" : "\(failures.count) failed"
            // The leak count is on every live summary line, zero included: the number an admin looks for.
            s += leaks.isEmpty ? ", 0 leaks" : ", \(leaks.count) LEAKED org data"
        } else {
            // Nothing ran, so nothing passed and nothing could leak: a prediction only meets or
            // misses the expectations an experiment wrote down.
            let missed = failures.count
            s += missed == 0 ? "every expectation met" : "\(missed) \(missed == 1 ? "cell misses its" : "cells miss their") expectation"
        }
        if !standIns.isEmpty { s += "; \(standIns.count) stand-in \(standIns.count == 1 ? "app" : "apps")" }
        s += "; \(String(format: "%.2f", seconds)) s, \(String(format: "%.0f", cellsPerSecond)) cells/s"
        if let sandbox { s += "; \(sandbox)" }
        return s
    }
}

/// A run cut short (an interruption): what was answered and what was not.
public struct PartialRun: Sendable, Hashable, Codable {
    /// Why it stopped: "interrupted (SIGINT)".
    public var reason: String
    public var answered: Int
    public var planned: Int
    /// The policies none of whose cells were answered.
    public var notRun: [String]

    public init(reason: String, answered: Int, planned: Int, notRun: [String]) {
        self.reason = reason
        self.answered = answered
        self.planned = planned
        self.notRun = notRun
    }

    /// The JSON form's first line as it reads back (`{"partial": {…}}`): its fields are known.
    public struct Mark: Decodable { public var reason: String }

    /// The first line of every form of a partial report.
    public var line: String {
        var s = "PARTIAL RUN: \(reason) after \(answered) of \(planned) cells"
        if !notRun.isEmpty { s += "; not run at all: \(notRun.joined(separator: ", "))" }
        return s + "; what follows covers the answered cells only"
    }
}

/// A policy as an admin knows it: what reports show beside its heatmap.
/// What a run was given, named in the report's header: the tenant file, whom each policy
/// reaches, the app catalog, the device, and every warning the inputs drew on the way (a misspelled key
/// falls to its default with only a warning: the report says so beside the results).
public struct RunInputs: Sendable, Hashable, Codable {
    public var tenant: String
    /// A line per policy: its name and the groups and users it is assigned to.
    public var assignments: [String]
    public var catalog: String?
    public var warnings: [String]
    /// The phone the run stands for (the tenant's device profile, DeviceProfile.summary); nil in
    /// a shard written before reports named it.
    public var device: String?

    public init(tenant: String, assignments: [String], catalog: String?, warnings: [String], device: String? = nil) {
        self.tenant = tenant
        self.assignments = assignments
        self.catalog = catalog
        self.warnings = warnings
        self.device = device
    }
}

public struct PolicyInfo: Sendable, Hashable {
    public var displayName: String
    public var file: String
    /// The settings that decide sharing, in a fixed order, each with its value written out.
    public var settings: [(key: String, value: String)]
    /// The settings the file does not set, taken at their defaults.
    public var defaults: Set<String>

    public init(displayName: String, file: String, settings: [String: String], defaults: Set<String> = []) {
        self.displayName = displayName
        self.file = file
        self.settings = Self.sharingKeys.compactMap { k in settings[k].map { (k, $0) } }
        self.defaults = defaults
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.displayName == b.displayName && a.file == b.file && a.settings.map(\.key) == b.settings.map(\.key) && a.settings.map(\.value) == b.settings.map(\.value)
    }
    public func hash(into h: inout Hasher) { h.combine(displayName); h.combine(file) }

    /// The Graph properties the sharing rules read (Rule.fields), in the order an admin meets them.
    public static let sharingKeys = [
        "allowedOutboundDataTransferDestinations", "allowedInboundDataTransferSources", "allowedOutboundClipboardSharingLevel",
        "allowedOutboundClipboardSharingExceptionLength", "filterOpenInToOnlyManagedApps", "disableProtectionOfManagedOutboundOpenInData",
        "protectInboundDataFromUnknownSources", "managedBrowserToOpenLinksRequired", "managedBrowser", "customBrowserProtocol",
        "dialerRestrictionLevel", "customDialerAppProtocol", "exemptedAppProtocols", "saveAsBlocked", "allowedDataStorageLocations",
        "allowedDataIngestionLocations", "blockDataIngestionIntoOrganizationDocuments",
    ]
}

/// The output formats of `mamlaunch matrix --format`.
public enum MatrixFormat: String, Sendable, CaseIterable {
    case table, md, csv, json, html, junit, sarif
}

extension MatrixReport {
    /// `gate`: the pipeline's verdict (`--fail-on`), said first in Markdown, and what JUnit's
    /// failures and SARIF's results are (widened and leak when not asked); `sources`: where each
    /// policy's settings are, for SARIF's locations.
    public func render(_ format: MatrixFormat, diff: MatrixDiff? = nil, gate: GateVerdict? = nil,
                       sources: [String: PolicySource] = [:]) -> String {
        let findings = { gate ?? GateVerdict(rules: [.widened, .leak], report: self, diff: diff) }
        // A partial run says so on its first line, in each form's own way of carrying a line.
        let cut = partial?.line
        switch format {
        case .table: return (cut.map { $0 + "\n" } ?? "") + table(diff: diff)
        case .md: return (cut.map { "**\(Self.md($0))**\n\n" } ?? "") + (gate.map { Self.gateMarkdown($0) } ?? "") + markdown(diff: diff)
        case .csv: return (cut.map { "# \($0)\n" } ?? "") + csv(diff: diff)
        case .json: return (partial.map { p in JSONValue.object(["partial": ["reason": .string(p.reason), "answered": .number(Double(p.answered)),
                                                                            "planned": .number(Double(p.planned)),
                                                                            "notRun": .array(p.notRun.map { .string($0) })]]).json + "\n" } ?? "")
            + jsonLines(diff: diff)
        case .html: return HTMLReport(report: self, diff: diff).render()
        case .junit: return junit(diff: diff, gate: findings())
        case .sarif: return sarif(gate: findings(), sources: sources)
        }
    }

    /// The gate's verdict above a Markdown report: a line, then each finding (a pull request's
    /// comment or a CI step summary shows it first).
    static func gateMarkdown(_ gate: GateVerdict) -> String {
        var out = "**\(md(gate.name)): " + (gate.passed ? "passed**\n\n" : "failed**: \(md(gate.detail))\n\n")
        for f in gate.findings.prefix(200) { out += "- \(md(f.message))\n" }
        if gate.findings.count > 200 { out += "- … and \(gate.findings.count - 200) more\n" }
        return out + (gate.findings.isEmpty ? "" : "\n")
    }

    /// The cells a format lists: all of them, or only those a diff kept.
    func listed(_ diff: MatrixDiff?) -> [CellResult] {
        guard let diff else { return results }
        return diff.changes.flatMap(\.cells)
    }

    // MARK: table

    func table(diff: MatrixDiff?) -> String {
        if let diff { return diff.table }
        var rows: [[String]] = [["#", "policy", "source", "channel", "target", "predicted", live ? "live" : "", "expected", ""]]
        for r in results {
            rows.append([String(r.cell.id), r.cell.policy, r.cell.source.name, r.cell.channel.description,
                         r.cell.target?.name ?? r.cell.account ?? "-", r.predicted.short, r.live?.short ?? "",
                         r.cell.expect.map { $0.outcomes.map(\.rawValue).joined(separator: "|") } ?? "",
                         r.passed ? (r.leaked ? "LEAK" : "") : "FAIL"])
        }
        var out = Self.align(rows)
        for r in failures { out += "\n" + Self.explainFailure(r) }
        return out
    }

    /// The widest a column grows for a few long cells: a longer cell (a long URL) runs past its
    /// column on its own line instead of padding every other line of the table out to its width.
    /// A column whose cells are long by nature (the framework's policy labels, 44 characters in
    /// every row) is as wide as they are: capped, every line of it would run past.
    static let columnCap = 32

    static func align(_ rows: [[String]]) -> String {
        guard let first = rows.first else { return "" }
        // A column with nothing in it (the live column of a prediction) takes no room.
        let used = first.indices.filter { i in rows.contains { i < $0.count && !$0[i].isEmpty } }
        let rows = rows.map { row in used.map { $0 < row.count ? row[$0] : "" } }
        let width = used.count
        var widths = Array(repeating: 0, count: width)
        var long = Array(repeating: 0, count: width), longest = Array(repeating: 0, count: width)
        for row in rows {
            for (i, c) in row.enumerated() {
                if c.count <= columnCap { widths[i] = max(widths[i], c.count) } else { long[i] += 1 }
                longest[i] = max(longest[i], c.count)
            }
        }
        // Long in most of its lines: long by nature.
        for i in 0..<width where long[i] * 2 > rows.count { widths[i] = longest[i] }
        return rows.map { row in
            // A value longer than the cap overflows its column whole (padding(toLength:) would cut it).
            row.enumerated().map { i, c in i == width - 1 || c.count >= widths[i] ? c : c.padding(toLength: widths[i], withPad: " ", startingAt: 0) }
                .joined(separator: "  ").trimmingTrailingSpaces()
        }.joined(separator: "\n")
    }

    /// A failed cell with both sides and its audit records.
    public static func explainFailure(_ r: CellResult) -> String {
        var lines = ["FAIL #\(r.cell.id) \(r.cell.title)" + (r.cell.label.map { " (\($0))" } ?? "")]
        lines.append("  predicted  \(describe(r.predicted))")
        if let live = r.live { lines.append("  live       \(describe(live))") }
        if let e = r.cell.expect {
            lines.append("  expected   \(e.outcomes.map(\.rawValue).joined(separator: " or "))" + (e.identity.map { " as \($0)" } ?? "")
                + (e.managed.map { $0 ? " managed" : " unmanaged" } ?? "") + (e.note.map { " — \($0)" } ?? ""))
        }
        if r.leaked { lines.append("  LEAK       org data arrived readable where the policy forbids it") }
        if !r.agree { lines.append("  the live run and the engine disagree") } else if !r.meetsExpectation { lines.append("  the outcome is not the expected one") }
        for a in r.audit { lines.append("  audit      \(a)") }
        return lines.joined(separator: "\n")
    }

    static func describe(_ v: Verdict) -> String {
        var s = "\(v.outcome.rawValue.uppercased())  rule \(v.rule)"
        if !v.ruleName.isEmpty { s += " \(v.ruleName)" }
        if !v.ruleSource.isEmpty { s += " [\(v.tag): \(v.ruleSource)]" } else if !v.tag.isEmpty { s += " [\(v.tag)]" }
        if let i = v.identity { s += "  as \(i)" }
        if let u = v.url { s += "  url \(u)" }
        if let m = v.managed { s += m ? "  managed" : "  unmanaged" }
        if !v.message.isEmpty { s += "  \"\(v.message)\"" }
        if let a = v.arrival {
            s += "  arrived: " + (a.readable ? "readable " + (a.encrypted ? "ciphertext (opened)" : "plaintext")
                : a.encrypted ? "unreadable ciphertext" : "something other than the payload")
            if let o = a.owner { s += ", owner \(o)" }
            if let i = a.identity { s += ", under \(i.isEmpty ? "personal" : i)" }
            if let h = a.sha256 { s += ", sha256 \(h.prefix(16))…" }
            if let u = a.url { s += ", url \(u)" }
        }
        if let n = v.note { s += "  (\(n))" }
        return s
    }

    // MARK: markdown

    func markdown(diff: MatrixDiff?) -> String {
        var out = "# Sharing matrix: \(experiment.name)\n\n"
        if !experiment.description.isEmpty { out += experiment.description + "\n\n" }
        if let diff {
            out += diff.summary.prefix(1).uppercased() + diff.summary.dropFirst() + ".\n\n"
            let groups = diff.groups
            if !groups.isEmpty {
                out += "| cells | outcome | setting that changed it |\n|---|---|---|\n"
                for g in groups {
                    out += "| \(g.changes.count) | \(Self.md(g.outcomes)) | \(Self.md(g.settings.isEmpty ? "-" : g.settings.joined(separator: "; "))) |\n"
                }
                out += "\n"
            }
            out += "| source | channel | target | " + diff.policies.map(Self.md).joined(separator: " | ") + " | setting |\n"
            out += "|---|---|---|" + String(repeating: "---|", count: diff.policies.count) + "---|\n"
            for c in diff.changes {
                out += "| \(Self.md(c.a.cell.source.name)) | \(Self.md(c.a.cell.channel.description)) | \(Self.md(c.target)) | "
                out += c.cells.map { Self.md($0.shown.short) }.joined(separator: " | ") + " | \(Self.md(diff.reasons(c).joined(separator: "; "))) |\n"
            }
            return out
        }
        out += "| # | policy | source | channel | target | predicted |\(live ? " live |" : "") expected | result |\n"
        out += "|---|---|---|---|---|---|\(live ? "---|" : "")---|---|\n"
        for r in results {
            out += "| \(r.cell.id) | \(Self.md(r.cell.policy)) | \(Self.md(r.cell.source.name)) | \(Self.md(r.cell.channel.description)) | "
            out += "\(Self.md(r.cell.target?.name ?? r.cell.account ?? "-")) | \(Self.md(r.predicted.short)) |"
            if live { out += " \(Self.md(r.live?.short ?? "")) |" }
            out += " \(Self.md(r.cell.expect.map { $0.outcomes.map(\.rawValue).joined(separator: " or ") } ?? "")) | \(r.passed && !r.leaked ? "pass" : "**FAIL**") |\n"
        }
        out += "\n\(summary)\n"
        if !standIns.isEmpty { out += "\n\(standInLine)\n" }
        return out
    }

    /// Which apps were stand-ins, in one sentence.
    public var standInLine: String {
        "Stand-ins (no Apps/ folder; a sample program under a manifest made from the app catalog): \(standIns.joined(separator: ", "))"
    }

    static func md(_ s: String) -> String {
        s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
    }

    // MARK: csv

    public static let csvHeader = ["id", "policy", "channel", "location", "source", "source_app", "source_account", "target", "target_app",
                                   "target_account", "predicted", "predicted_rule", "live", "live_rule", "agree", "expected", "passed",
                                   "rule", "tag", "source_of_rule", "message", "label"]

    func csv(diff: MatrixDiff?) -> String {
        var lines = [Self.csvHeader.joined(separator: ",")]
        for r in listed(diff) {
            let c = r.cell
            let fields: [String] = [
                String(c.id), c.policy, c.channel.channel.rawValue, c.channel.location ?? "", c.source.name, c.source.app,
                c.source.activeAccount, c.target?.name ?? "", c.target?.app ?? "", c.target?.activeAccount ?? "",
                r.predicted.outcome.rawValue, r.predicted.rule, r.live?.outcome.rawValue ?? "", r.live?.rule ?? "",
                String(r.agree), c.expect.map { $0.outcomes.map(\.rawValue).joined(separator: "|") } ?? "", String(r.passed && !r.leaked),
                r.shown.rule, r.predicted.tag, r.predicted.ruleSource, r.shown.message, c.label ?? "",
            ]
            lines.append(fields.map(Self.csvField).joined(separator: ","))
        }
        return lines.joined(separator: "\n")
    }

    /// RFC 4180: quoted when it holds a comma, a quote or a line break; quotes doubled. A
    /// field a spreadsheet would take as a formula (it starts with `=`, `+`, `-`, `@`, a tab or
    /// a carriage return) starts with `'` instead, and is quoted: names come from catalogs,
    /// tenants and manifests other people write, and `=HYPERLINK(…)` opened in a spreadsheet
    /// runs.
    static func csvField(_ s: String) -> String {
        let formula = s.first.map { "=+-@\t\r".contains($0) } ?? false
        let text = formula ? "'" + s : s
        guard formula || text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    // MARK: json

    /// One JSON object per cell and line (docs/matrix-cell.schema.json).
    func jsonLines(diff: MatrixDiff?) -> String {
        // A shard's lines carry each cell whole too, for the merge to read back.
        let header = shard.map { MatrixShard.header($0, report: self) + "\n" } ?? ""
        return header + listed(diff).map { r in
            var line = Self.json(r)
            if shard != nil, case var .object(o) = line { o["record"] = MatrixShard.record(r); line = .object(o) }
            return line.json
        }.joined(separator: "\n")
    }

    public static func json(_ r: CellResult) -> JSONValue {
        let c = r.cell
        var o: [String: JSONValue] = [
            "id": .number(Double(c.id)),
            "policy": .string(c.policy),
            "channel": .string(c.channel.channel.rawValue),
            "source": side(c.source),
            "target": c.target.map(side) ?? .null,
            "predicted": verdict(r.predicted),
            "live": r.live.map(verdict) ?? .null,
            "agree": .bool(r.agree),
            "passed": .bool(r.passed && !r.leaked),
            "leaked": .bool(r.leaked),
            "rule": .string(r.shown.rule),
            "tag": .string(r.predicted.tag),
            "sourceOfRule": .string(r.predicted.ruleSource),
        ]
        if let l = c.channel.location { o["location"] = .string(l) }
        if let l = c.label { o["label"] = .string(l) }
        if let a = c.account { o["account"] = .string(a) }
        if let a = c.check { o["check"] = .string(a) }
        if let e = c.expect {
            var x: [String: JSONValue] = ["outcomes": .array(e.outcomes.map { .string($0.rawValue) })]
            if let i = e.identity { x["identity"] = .string(i) }
            if let m = e.managed { x["managed"] = .bool(m) }
            o["expected"] = .object(x)
        } else {
            o["expected"] = .null
        }
        if !r.audit.isEmpty { o["audit"] = .array(r.audit.map { (try? JSONValue.parse(Array($0.utf8))) ?? .string($0) }) }
        return .object(o)
    }

    static func side(_ p: PartySpec) -> JSONValue {
        ["party": .string(p.name), "app": .string(p.app), "account": .string(p.activeAccount),
         "accounts": .array(p.accounts.map { .string($0) })]
    }

    static func verdict(_ v: Verdict) -> JSONValue {
        var o: [String: JSONValue] = ["outcome": .string(v.outcome.rawValue), "rule": .string(v.rule), "message": .string(v.message)]
        if !v.ruleName.isEmpty { o["ruleName"] = .string(v.ruleName) }
        if !v.tag.isEmpty { o["tag"] = .string(v.tag) }
        if !v.ruleSource.isEmpty { o["sourceOfRule"] = .string(v.ruleSource) }
        if let i = v.identity { o["identity"] = .string(i) }
        if let u = v.url { o["url"] = .string(u) }
        if let m = v.managed { o["managed"] = .bool(m) }
        if let n = v.note { o["note"] = .string(n) }
        if let d = v.recordDisagreements, !d.isEmpty { o["recordDisagreements"] = .array(d.map { .string($0) }) }
        if let a = v.arrival {
            var x: [String: JSONValue] = ["readable": .bool(a.readable), "encrypted": .bool(a.encrypted)]
            x["sha256"] = JSONValue(a.sha256)
            x["owner"] = JSONValue(a.owner)
            x["identity"] = JSONValue(a.identity)
            if let u = a.url { x["url"] = .string(u) }
            o["arrival"] = .object(x)
        }
        return .object(o)
    }
}

extension PartySpec {
    /// The account the party acts under, as reports show it.
    public var activeAccount: String {
        if let identity { return identity }
        return accounts.first ?? "default"
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var s = self
        while s.last == " " { s.removeLast() }
        return s
    }
}
