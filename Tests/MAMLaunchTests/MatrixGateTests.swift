import Foundation
import MAMTestSupport
import Testing

/// A policy change gated as code is (`matrix --diff BEFORE AFTER --fail-on widened`): a change
/// that lets org data reach apps it did not reach fails with exit status 3, SARIF puts each
/// finding on the setting in AFTER that caused it, JUnit names the widened cells, Markdown lists
/// them; an unchanged policy passes. Each report is validated against docs/schemas.
@Suite("mamlaunch matrix: the gate for a policy change", .serialized)
struct MatrixGateTests {
    static let level2 = CommandRunner.root.appendingPathComponent("Policies/frameworks/level-2-enterprise-enhanced-data-protection-iOS.json").path
    static let schemas = CommandRunner.root.appendingPathComponent("docs/schemas").path
    static let key = "\"allowedOutboundDataTransferDestinations\""

    /// A folder with before.json (level 2 as the vendor ships it) and after.json (`change` applied).
    static func pullRequest(_ change: (String) -> String) throws -> URL {
        let dir = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("mamlab-gate-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let before = try String(contentsOfFile: level2, encoding: .utf8)
        try before.write(to: dir.appendingPathComponent("before.json"), atomically: true, encoding: .utf8)
        try change(before).write(to: dir.appendingPathComponent("after.json"), atomically: true, encoding: .utf8)
        return dir
    }

    static func gate(_ dir: URL, _ format: String, live: Bool = true) async throws -> CommandRunner.Result {
        try await CommandRunner.runOffPool(["matrix"] + (live ? [] : ["--predict"]) + ["--parties", "policy-apps", "--policy", "before.json", "--policy", "after.json",
                                            "--diff", "before", "after", "--fail-on", "widened", "--format", format], in: dir)
    }

    static func validateXML(_ text: String, in dir: URL) throws -> (status: Int32, said: String) {
        let file = dir.appendingPathComponent("report-\(UUID().uuidString.prefix(6)).xml")
        try text.write(to: file, atomically: true, encoding: .utf8)
        let r = try ChildProcess.run("/usr/bin/xmllint", ["--noout", "--schema", schemas + "/junit.xsd", file.path], timeout: 60)
        return (r.status, r.out + r.err)
    }

    /// OASIS's published SARIF schema, fetched by scripts/test (scripts/lib.sh: not ours to commit).
    static let oasisSARIF = CommandRunner.root.appendingPathComponent(".build/schemas/sarif-schema-2.1.0.json").path

    /// Valid against docs/schemas' subset (what MAMLab promises, stricter) and against OASIS's
    /// schema itself (what every SARIF reader takes).
    static func validateSARIF(_ text: String, in dir: URL) throws -> (status: Int32, said: String) {
        let file = dir.appendingPathComponent("report-\(UUID().uuidString.prefix(6)).sarif")
        try text.write(to: file, atomically: true, encoding: .utf8)
        guard FileManager.default.fileExists(atPath: oasisSARIF) else {
            return (1, "OASIS's SARIF schema is not at \(oasisSARIF): scripts/test fetches it (mamlab_fetch_sarif_schema in scripts/lib.sh)")
        }
        let code = """
            import json, sys, jsonschema
            report = json.load(open(sys.argv[3]))
            ours = json.load(open(sys.argv[1]))
            jsonschema.Draft202012Validator.check_schema(ours)
            jsonschema.Draft202012Validator(ours, format_checker=jsonschema.FormatChecker()).validate(report)
            oasis = json.load(open(sys.argv[2]))
            jsonschema.Draft4Validator.check_schema(oasis)
            jsonschema.Draft4Validator(oasis, format_checker=jsonschema.FormatChecker()).validate(report)
            print("valid")
            """
        let r = try ChildProcess.run("/usr/bin/python3", ["-c", code, schemas + "/sarif-2.1.0-results.schema.json", oasisSARIF, file.path], timeout: 60)
        return (r.status, r.out + r.err)
    }

    @Test("level 2 changed to let org data go to every app fails the gate, with SARIF, JUnit and Markdown saying where and what")
    func widenedFails() async throws {
        let dir = try Self.pullRequest { $0.replacingOccurrences(of: Self.key + ": \"managedApps\"", with: Self.key + ": \"allApps\"") }
        defer { try? FileManager.default.removeItem(at: dir) }
        let after = try String(contentsOf: dir.appendingPathComponent("after.json"), encoding: .utf8)
        let lines = after.split(separator: "\n", omittingEmptySubsequences: false)
        let line = (lines.firstIndex { $0.contains(Self.key) } ?? -1) + 1
        let column = (lines[line - 1].range(of: "\"allApps\"").map { lines[line - 1].distance(from: lines[line - 1].startIndex, to: $0.lowerBound) } ?? -1) + 1
        #expect(line > 1 && column > 1)

        let sarif = try await Self.gate(dir, "sarif")
        #expect(sarif.status == 3, "\(sarif.stderr.suffix(1500))")
        #expect(sarif.stderr.contains("gate (--fail-on widened): FAILED"), "\(sarif.stderr.suffix(500))")
        let valid = try Self.validateSARIF(sarif.stdout, in: dir)
        #expect(valid.status == 0, "\(valid.said)")
        let log = try JSONSerialization.jsonObject(with: Data(sarif.stdout.utf8)) as? [String: Any]
        let results = ((log?["runs"] as? [[String: Any]])?.first?["results"] as? [[String: Any]]) ?? []
        #expect(results.count > 10)
        for r in results {
            let location = ((r["locations"] as? [[String: Any]])?.first?["physicalLocation"] as? [String: Any])
            let region = location?["region"] as? [String: Any]
            #expect((location?["artifactLocation"] as? [String: Any])?["uri"] as? String == "after.json")
            #expect(region?["startLine"] as? Int == line && region?["startColumn"] as? Int == column, "\(r)")
            #expect(r["ruleId"] as? String == "widened")
        }
        let outlookToGmail = results.first { ((($0["message"] as? [String: Any])?["text"] as? String) ?? "").contains("Outlook (adele) open-in → Gmail") }
        #expect(outlookToGmail != nil, "\(results.prefix(3))")

        let junit = try await Self.gate(dir, "junit")
        #expect(junit.status == 3)
        let xml = try Self.validateXML(junit.stdout, in: dir)
        #expect(xml.status == 0, "\(xml.said)")
        #expect(junit.stdout.contains("<testcase classname=\"matrix.open-in\" name=\"Outlook (adele) open-in → Gmail (personal mail)\""), "\(junit.stdout.prefix(1500))")
        #expect(junit.stdout.contains("<failure type=\"widened\""))

        let markdown = try await Self.gate(dir, "md", live: false)
        #expect(markdown.status == 3)
        #expect(markdown.stdout.hasPrefix("**gate (--fail-on widened): failed**"), "\(markdown.stdout.prefix(500))")
        #expect(markdown.stdout.contains("- widened: Outlook (adele) open-in → Gmail (personal mail): encrypted under before → allowed under after; allowedOutboundDataTransferDestinations: managedApps → allApps"),
                "\(markdown.stdout.prefix(2000))")
    }

    @Test("an unchanged policy passes the gate, its reports valid and empty of findings")
    func unchangedPasses() async throws {
        let dir = try Self.pullRequest { $0 }
        defer { try? FileManager.default.removeItem(at: dir) }
        let sarif = try await Self.gate(dir, "sarif")
        #expect(sarif.status == 0, "\(sarif.stderr.suffix(1500))")
        #expect(sarif.stderr.contains("gate (--fail-on widened): passed"))
        #expect(try Self.validateSARIF(sarif.stdout, in: dir).status == 0)
        #expect(sarif.stdout.contains("\"results\":[]"), "\(sarif.stdout.prefix(600))")
        let junit = try await Self.gate(dir, "junit", live: false)
        #expect(junit.status == 0)
        #expect(try Self.validateXML(junit.stdout, in: dir).status == 0)
        #expect(junit.stdout.contains("failures=\"0\""))
    }

    @Test("a change that only narrows passes --fail-on widened and fails --fail-on changed, naming the changed cells")
    func narrowingIsAChangeNotAWidening() async throws {
        let dir = try Self.pullRequest { $0.replacingOccurrences(of: Self.key + ": \"managedApps\"", with: Self.key + ": \"none\"") }
        defer { try? FileManager.default.removeItem(at: dir) }
        let args = ["matrix", "--predict", "--parties", "policy-apps", "--policy", "before.json", "--policy", "after.json",
                    "--diff", "before", "after", "--format", "sarif"]
        let widened = try await CommandRunner.runOffPool(args + ["--fail-on", "widened"], in: dir)
        #expect(widened.status == 0, "\(widened.stderr.suffix(800))")
        #expect(widened.stderr.contains("gate (--fail-on widened): passed"))
        let changed = try await CommandRunner.runOffPool(args + ["--fail-on", "changed"], in: dir)
        #expect(changed.status == 3, "\(changed.stderr.suffix(800))")
        #expect(changed.stderr.contains("gate (--fail-on changed): FAILED"), "\(changed.stderr.suffix(800))")
        #expect(try Self.validateSARIF(changed.stdout, in: dir).status == 0)
        // Each finding sits on the setting that changed in after.json.
        #expect(changed.stdout.contains("after.json") && changed.stdout.contains("\"ruleId\":\"changed\""), "\(changed.stdout.prefix(800))")
    }

    @Test("--fail-on leak: a broker that lets org data through where the policy forbids it fails the gate; an honest one passes")
    func leakFailsTheGate() async throws {
        let dir = try Self.pullRequest { $0 }
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data("""
            {"name": "leak", "parties": [{"name": "Mail", "app": "Mail", "accounts": ["adele@contoso.com"]}, {"name": "Notes", "app": "Notes"}],
             "channels": ["paste"], "policies": ["tenant"]}
            """.utf8).write(to: dir.appendingPathComponent("leak.json"))
        let honest = try await CommandRunner.runOffPool(["matrix", "leak.json", "--fail-on", "leak"], in: dir)
        #expect(honest.status == 0, "\(honest.stderr.suffix(800))")
        #expect(honest.stderr.contains("gate (--fail-on leak): passed"))
        // The test-only hook inverts the broker's paste answers: Mail's org text reaches Notes.
        let flipped = try await CommandRunner.runOffPool(["matrix", "leak.json", "--fail-on", "leak", "--test-flip", "paste", "--format", "sarif"], in: dir)
        // A failed cell is status 1 before the gate's 3; the verdict is on standard error either way.
        #expect(flipped.status == 1, "\(flipped.stderr.suffix(800))")
        #expect(flipped.stderr.contains("gate (--fail-on leak): FAILED"), "\(flipped.stderr.suffix(800))")
        #expect(flipped.stdout.contains("\"ruleId\":\"leak\""), "\(flipped.stdout.prefix(800))")
        #expect(try Self.validateSARIF(flipped.stdout, in: dir).status == 0)
    }

    /// The schemas refuse what a CI system would not read, so a pass means something.
    @Test func theSchemasRefuseABrokenReport() throws {
        let dir = try Self.pullRequest { $0 }
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(try Self.validateXML("<testsuites><testsuite tests=\"1\"><testcase/></testsuite></testsuites>", in: dir).status != 0)
        #expect(try Self.validateSARIF(#"{"version": "2.1.0", "runs": [{"tool": {"driver": {}}, "results": [{"message": {}}]}]}"#, in: dir).status != 0)
        #expect(try Self.validateSARIF(#"{"version": "2.0.0", "runs": []}"#, in: dir).status != 0)
        // OASIS's schema refuses what the subset leaves open: a property SARIF does not define.
        let stray = #"{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "mamlaunch", "stray": 1}}, "results": []}]}"#
        #expect(try Self.validateSARIF(stray, in: dir).said.contains("Additional properties are not allowed"))
    }

    @Test func aGateOnAComparisonNeedsTwoPolicies() async throws {
        let r = try await CommandRunner.runOffPool(["matrix", "--predict", "--fail-on", "widened"])
        #expect(r.status == 64 && r.stderr.contains("--fail-on widened compares policies: give --diff BEFORE AFTER"), "\(r.stderr)")
    }
}
