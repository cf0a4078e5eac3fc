import Foundation
import MAMPolicy
import MAMScript

/// Where a policy came from, so that a finding can point at the setting that caused it: the file
/// as the pipeline names it, and each top-level setting as written there (its value and where
/// the value starts).
public struct PolicySource: Sendable {
    public var uri: String
    public var settings: [String: Node]
    public init(uri: String, settings: [String: Node]) {
        self.uri = uri
        self.settings = settings
    }
}

// The forms a CI system shows: JUnit XML (GitHub, GitLab and Azure DevOps list its test cases) and
// SARIF 2.1.0 (a code-scanning result on the changed line of a pull request).
extension MatrixReport {
    /// JUnit XML. Without a diff, a test suite per policy and a test case per cell, failing when
    /// the cell failed or leaked. With one, a suite for the comparison and a test case per changed
    /// cell, failing with each gate finding on it: both sides and the settings behind it.
    public func junit(diff: MatrixDiff?, gate: GateVerdict) -> String {
        var suites: [(name: String, cases: [String], failures: Int)] = []
        if let diff {
            var cases: [String] = [], failures = 0
            for change in diff.changes {
                let found = gate.findings.filter { f in change.cells.contains { $0.cell.id == f.cell.cell.id } }
                failures += found.isEmpty ? 0 : 1
                let sides = zip(diff.policies, change.cells).map { "\($0): \($1.shown.short)" }.joined(separator: "\n")
                let body = found.map { f in
                    "<failure type=\"\(f.rule.rawValue)\" message=\"\(Self.xml(f.message))\">\(Self.xml(sides + "\nsettings: " + diff.reasons(change).joined(separator: "; ")))</failure>"
                }.joined()
                cases.append(Self.testCase(change.a, name: change.a.title, body: body))
            }
            suites.append((diff.policies.joined(separator: " → "), cases, failures))
        } else {
            for policy in policies {
                var cases: [String] = [], failures = 0
                for r in results where r.cell.policy == policy {
                    var body = ""
                    if r.leaked || !r.passed {
                        failures += 1
                        let type = r.leaked ? "leak" : "failed"
                        body = "<failure type=\"\(type)\" message=\"\(Self.xml(type + ": " + r.title))\">\(Self.xml(Self.explainFailure(r)))</failure>"
                    }
                    cases.append(Self.testCase(r, name: "#\(r.cell.id) \(r.title)", body: body))
                }
                suites.append((policy, cases, failures))
            }
        }
        // A run cut short fails as a whole: its own suite says what was not answered.
        if let partial {
            let body = "<failure type=\"partial\" message=\"\(Self.xml(partial.line))\">\(Self.xml(partial.line))</failure>"
            suites.insert(("partial run", ["<testcase classname=\"matrix.run\" name=\"every planned cell answered\" time=\"0\">\(body)</testcase>"], 1), at: 0)
        }
        let tests = suites.map(\.cases.count).reduce(0, +), failures = suites.map(\.failures).reduce(0, +)
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<testsuites name=\"mamlaunch matrix\" tests=\"\(tests)\" failures=\"\(failures)\" errors=\"0\" time=\"\(Self.seconds(seconds))\">\n"
        for s in suites {
            out += "  <testsuite name=\"\(Self.xml(s.name))\" tests=\"\(s.cases.count)\" failures=\"\(s.failures)\" errors=\"0\" skipped=\"0\">\n"
            out += s.cases.map { "    " + $0 + "\n" }.joined()
            out += "  </testsuite>\n"
        }
        return out + "</testsuites>"
    }

    static func testCase(_ r: CellResult, name: String, body: String) -> String {
        "<testcase classname=\"matrix.\(xml(r.cell.channel.channel.rawValue))\" name=\"\(xml(name))\" time=\"0\">\(body)</testcase>"
    }

    static func seconds(_ s: Double) -> String { String(format: "%.3f", s) }

    /// Text for an XML attribute or element: the five special characters escaped, and the
    /// characters XML 1.0 cannot carry at all (controls other than tab and line ends) dropped.
    static func xml(_ s: String) -> String {
        var out = ""
        for ch in s.unicodeScalars {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t", "\n", "\r": out.unicodeScalars.append(ch)
            default:
                if ch.value < 0x20 || (0xFFFE...0xFFFF).contains(ch.value) { continue }
                out.unicodeScalars.append(ch)
            }
        }
        return out
    }

    /// SARIF 2.1.0: one result per gate finding, at the place in the later policy's file where
    /// each setting that caused it is set (the file alone when no setting is known).
    public func sarif(gate: GateVerdict, sources: [String: PolicySource]) -> String {
        let rules = GateRule.allCases
        let results: [JSONValue] = gate.findings.map { f in
            let source = sources[f.cell.cell.policy], earlier = f.before.flatMap { sources[$0.cell.policy] }
            // A setting the engine reads may follow from another (the policy as read, not as
            // written: saving is not restricted once org data may go to every app), so the place
            // is the edit: of the settings behind the finding, those written differently in the
            // two files; when none is, every setting written differently.
            let written = { (name: String) in earlier.map { $0.settings[name]?.value != source?.settings[name]?.value } ?? true }
            let edits = Set((source?.settings.keys).map(Array.init) ?? []).union((earlier?.settings.keys).map(Array.init) ?? []).filter(written).sorted()
            let behind = f.settings.map(\.name).filter(written)
            var locations: [JSONValue] = []
            for name in !behind.isEmpty ? behind : !edits.isEmpty ? edits : f.settings.map(\.name) {
                guard let source else { break }
                var physical: [String: JSONValue] = ["artifactLocation": ["uri": .string(source.uri)]]
                if let p = source.settings[name]?.position {
                    physical["region"] = ["startLine": .number(Double(p.line)), "startColumn": .number(Double(p.column))]
                }
                locations.append(["physicalLocation": .object(physical)])
            }
            if locations.isEmpty, let source {
                locations.append(["physicalLocation": ["artifactLocation": ["uri": .string(source.uri)]]])
            }
            return [
                "ruleId": .string(f.rule.rawValue),
                "ruleIndex": .number(Double(rules.firstIndex(of: f.rule)!)),
                "level": "error",
                "message": ["text": .string(f.message)],
                "locations": .array(locations),
            ]
        }
        let driver: JSONValue = [
            "name": "mamlaunch matrix",
            "rules": .array(rules.map { ["id": .string($0.rawValue), "shortDescription": ["text": .string($0.summary)]] }),
        ]
        let log: JSONValue = [
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0",
            "runs": [["tool": ["driver": driver], "results": .array(results),
                      // A run cut short did not finish: its results are not all there.
                      "invocations": [["executionSuccessful": .bool(partial == nil),
                                       "toolExecutionNotifications": .array(partial.map { [["level": "error", "message": ["text": .string($0.line)]]] } ?? [])]]]],
        ]
        return log.json
    }
}
