import Foundation
import Testing

/// `mamlaunch matrix` as a person runs it. The live tests start mambroker and the sample apps in
/// their sandboxes (root, and the apps built: `swift build --build-tests` builds them).
@Suite("mamlaunch matrix", .serialized)
struct MatrixCommandTests {
    static func temporary(_ name: String, _ text: String) throws -> String {
        let path = NSTemporaryDirectory() + "mamlab-\(UUID().uuidString.prefix(8))-\(name)"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func predictJSONPrintsOneObjectPerCell() async throws {
        let r = try await CommandRunner.runOffPool(["matrix", "--predict", "--format", "json"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.count == 1107)
        for line in lines.prefix(50) {
            let o = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            for key in ["policy", "channel", "source", "target", "predicted", "live", "agree", "rule", "tag", "sourceOfRule"] {
                #expect(o.keys.contains(key), "\(key) in \(line.prefix(120))")
            }
        }
        #expect(r.stderr.contains("1107 cells (predicted, nothing ran), 9 policies: every expectation met"), "\(r.stderr.suffix(500))")
        let summary = r.stderr.split(separator: "\n").first { $0.contains("cells (predicted") } ?? ""
        #expect(!summary.contains("passed") && !summary.contains("leaks"), "a prediction ran nothing: \(summary)")
        #expect(r.stderr.contains("cells/s"))
    }

    @Test func diffShowsOnlyChangedCells() async throws {
        let r = try await CommandRunner.runOffPool(["matrix", "--predict", "--diff", "managed-only", "allow-all"])
        #expect(r.status == 0, "\(r.stderr)")
        let summary = r.stdout.split(separator: "\n").last.map(String.init) ?? ""
        #expect(summary.contains("cells change from managed-only to allow-all"))
        // Org data shared with Notes: encrypted under managed-only, allowed under allow-all.
        #expect(r.stdout.split(separator: "\n").contains { $0.hasPrefix("Mail (adele) ") && $0.contains("Notes") && $0.contains("encrypted 4.1.4") && $0.contains("allowed 4.1.2") })
        // Only the changed cells are listed: the groups by setting and outcome (a header and a
        // line each), a blank line, then a header, a line per cell, the count.
        let words = summary.split(separator: " ")
        let changed = Int(words.first ?? "") ?? -1, compared = Int(words.count > 2 ? words[2] : "") ?? -1
        #expect(changed > 0 && changed < compared && compared == 123)
        let lines = r.stdout.trimmingCharacters(in: .newlines).split(separator: "\n", omittingEmptySubsequences: false)
        let blank = lines.firstIndex(of: "") ?? lines.endIndex
        let grouped = lines[1..<blank].map { Int($0.split(separator: " ").first ?? "") ?? 0 }.reduce(0, +)
        #expect(grouped == changed, "\(r.stdout)")
        #expect(lines.count - blank - 1 == changed + 2, "\(r.stdout)")
    }

    @Test func aWrongExpectationFailsTheRunWithBothSides() async throws {
        let file = try Self.temporary("wrong.json", """
            {"name": "wrong", "parties": [{"name": "Mail", "app": "Mail", "accounts": ["adele@contoso.com"]}, {"name": "Notes", "app": "Notes"}],
             "policies": ["tenant"],
             "cells": [{"channel": "open-in", "source": "Mail", "target": "Notes", "expect": {"outcome": "allowed"}}]}
            """)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let r = try await CommandRunner.runOffPool(["matrix", file, "--predict"])
        #expect(r.status == 1)
        #expect(r.stdout.contains("FAIL #1 [tenant] Mail open-in → Notes"))
        #expect(r.stdout.contains("predicted  ENCRYPTED"))
        #expect(r.stdout.contains("expected   allowed"))
    }

    @Test func anInvalidExperimentNamesFilePathAndReason() async throws {
        let file = try Self.temporary("bad.json", #"{"parties": [{"name": "A", "app": "Mail"}], "channels": ["fax"]}"#)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let r = try await CommandRunner.runOffPool(["matrix", file, "--predict"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("bad.json:1:"))
        #expect(r.stderr.contains("$.channels[0]: unknown channel \"fax\""))
    }

    @Test("a --policy file of several policies is refused, naming them: the broker and the engine would read it two ways")
    func aPolicyFileOfSeveralPoliciesIsRefused() async throws {
        let file = try Self.temporary("two.json", """
            [{"@odata.type": "#microsoft.graph.iosManagedAppProtection", "displayName": "Sales"},
             {"@odata.type": "#microsoft.graph.iosManagedAppProtection", "displayName": "Execs"}]
            """)
        defer { try? FileManager.default.removeItem(atPath: file) }
        for command in [["matrix", "--predict", "--policy", file], ["explain", "--policy", file, "--from", "Mail", "--to", "Notes", "--channel", "send"]] {
            let r = try await CommandRunner.runOffPool(command)
            #expect(r.status != 0 && r.stdout.isEmpty, "\(command): \(r.stdout)")
            #expect(r.stderr.contains("the file holds 2 policies (\"Sales\", \"Execs\"); --policy applies one policy's settings"), "\(command): \(r.stderr)")
        }
    }

    // MARK: live

    @Test("exit-criteria passes live: real apps, real broker, every cell as seed 002 expects")
    func exitCriteriaLive() async throws {
        let r = try await CommandRunner.runOffPool(["matrix", "exit-criteria", "--format", "json"])
        #expect(r.status == 0, "\(r.stderr.suffix(3000))")
        let cells = r.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(cells.count == 19)
        for c in cells {
            #expect(c["live"] is [String: Any], "a live answer for \(c["label"] ?? "")")
            #expect(c["agree"] as? Bool == true && c["passed"] as? Bool == true, "\(c)")
        }
        // The org document pushed to Notes arrived, and unreadable.
        let toNotes = cells.first { ($0["label"] as? String)?.hasPrefix("Managed identity send to unmanaged app") == true }
        let arrival = (toNotes?["live"] as? [String: Any])?["arrival"] as? [String: Any]
        #expect(arrival?["readable"] as? Bool == false)
        #expect(r.stderr.contains("19 cells (live), 1 policy: all passed"))
    }

    @Test("a broker that disagrees with the engine (test-only hook) fails the run, both sides shown")
    func injectedDisagreementIsCaught() async throws {
        let file = try Self.temporary("paste.json", """
            {"name": "paste", "parties": [{"name": "Mail", "app": "Mail", "accounts": ["adele@contoso.com"]},
                                          {"name": "Docs", "app": "Docs", "accounts": ["adele@contoso.com"]}],
             "channels": ["paste", "open-in"], "policies": ["tenant"]}
            """)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let honest = try await CommandRunner.runOffPool(["matrix", file])
        #expect(honest.status == 0, "\(honest.stdout.suffix(2000)) \(honest.stderr.suffix(2000))")
        let r = try await CommandRunner.runOffPool(["matrix", file, "--test-flip", "paste"])
        #expect(r.status == 1)
        #expect(r.stdout.contains("FAIL #1 [tenant] Mail paste → Docs"))
        #expect(r.stdout.contains("predicted  ALLOWED"))
        #expect(r.stdout.contains("live       BLOCKED"))
        #expect(r.stdout.contains("the live run and the engine disagree"))
        #expect(r.stdout.contains(#"audit      {"channel":"paste""#))
        // Only the paste cells fail: open-in still agrees.
        #expect(!r.stdout.contains("open-in → Docs  FAIL") && r.stderr.contains("2 failed"))
        // A broker whose log says the opposite of what it told the app: what arrived agrees
        // with the engine, and the cell fails all the same, on the record's field.
        let lying = try await CommandRunner.runOffPool(["matrix", file, "--test-flip", "paste-record"])
        #expect(lying.status == 1, "\(lying.stdout.suffix(2000))")
        #expect(lying.stdout.contains("FAIL #1 [tenant] Mail paste → Docs"))
        #expect(lying.stdout.contains("outcome: the broker's record says blocked, the app was told allowed"), "\(lying.stdout.suffix(3000))")
        #expect(!lying.stdout.contains("open-in → Docs  FAIL") && lying.stderr.contains("2 failed"))
    }

    @Test("the default experiment passes live: every channel, every sample policy, managed, personal and unmanaged parties")
    func defaultExperimentLive() async throws {
        let r = try await CommandRunner.runOffPool(["matrix", "--format", "json"])
        let cells = r.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(r.status == 0, "\(r.stdout.suffix(3000)) \(r.stderr.suffix(2000))")
        #expect(cells.count > 500)
        #expect(cells.allSatisfy { $0["agree"] as? Bool == true && $0["leaked"] as? Bool == false })
        // No false alarm: the sample apps do nothing their sandbox refuses (issue 22: libdispatch's
        // syslog was a "socket AF_UNIX denied" at every start of every SDK app).
        #expect(!r.stderr.contains("sandbox violation"), "\(r.stderr.suffix(2000))")
        // Send = none: an Open-in document is not offered to any app, not even a managed app of
        // the same account, and nothing arrives (SEMANTICS 4.1.3, seed 000 §'Copy To' actions;
        // once an encrypted copy, and before that a leak the matrix caught).
        let sealed = cells.filter {
            // (Edge declares no PDF type: nothing is offered to it, so nothing arrives.)
            $0["policy"] as? String == "locked-down" && $0["channel"] as? String == "open-in"
                && ($0["target"] as? [String: Any])?["app"] as? String != "Edge"
                && (($0["source"] as? [String: Any])?["account"] as? String) == "adele@contoso.com"
                && (($0["target"] as? [String: Any])?["account"] as? String) == "adele@contoso.com"
        }
        #expect(!sealed.isEmpty)
        for c in sealed {
            let live = c["live"] as? [String: Any]
            #expect(live?["outcome"] as? String == "filtered" && (live?["arrival"] as? [String: Any])?["readable"] as? Bool != true, "\(c)")
        }
    }

    @Test("random cells live: org data never arrives readable where the policy forbids it")
    func randomCellsKeepTheLeakInvariant() async throws {
        let r = try await CommandRunner.runOffPool(["matrix", "--random", "60", "--seed", "11", "--format", "json"])
        let cells = r.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(cells.count == 60, "\(r.stderr.suffix(2000))")
        #expect(cells.allSatisfy { $0["leaked"] as? Bool == false })
        #expect(cells.allSatisfy { $0["live"] is [String: Any] })
        #expect(!r.stderr.contains("LEAKED"))
    }

    @Test("cells in flight: the same random cells answered live one at a time and eight at a time agree cell by cell")
    func cellsInFlightChangeNothingButSpeed() async throws {
        func live(_ inFlight: String) async throws -> [Int: String] {
            let r = try await CommandRunner.runOffPool(["matrix", "--random", "150", "--seed", "23", "--jobs", "1", "--cells-in-flight", inFlight, "--format", "json"])
            #expect(r.status == 0, "\(r.stdout.suffix(2000)) \(r.stderr.suffix(2000))")
            var answers: [Int: String] = [:]
            for line in r.stdout.split(separator: "\n") {
                guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], let id = o["id"] as? Int,
                      let l = o["live"] as? [String: Any] else { continue }
                answers[id] = "\(l["outcome"] ?? "-") \(l["rule"] ?? "-") \(o["agree"] ?? "-")"
            }
            return answers
        }
        let one = try await live("1"), eight = try await live("8")
        #expect(one.count == 150 && eight.count == 150)
        for (id, answer) in one { #expect(eight[id] == answer, "cell \(id)") }
    }

    @Test("one broker switched from policy to policy answers the same random cells as a broker per policy, cell by cell")
    func oneBrokerSwitchedAgreesWithABrokerPerPolicy() async throws {
        func live(_ extra: [String]) async throws -> (answers: [Int: String], brokers: [String]) {
            let r = try await CommandRunner.runOffPool(["matrix", "--random", "120", "--seed", "31", "--jobs", "1", "--format", "json"] + extra,
                                          environment: ["MAMLAB_MATRIX_KEEP": "1"])
            // Each broker's folder is kept and named (one line per broker, with its policies): counted, then removed.
            let brokers = r.stderr.split(separator: "\n").map(String.init).filter { $0.hasSuffix("(MAMLAB_MATRIX_KEEP)") }
            for line in brokers {
                if let at = line.range(of: " is kept at "), let end = line.range(of: " (MAMLAB_MATRIX_KEEP)", options: .backwards) {
                    try? FileManager.default.removeItem(atPath: String(line[at.upperBound..<end.lowerBound]))
                }
            }
            #expect(r.status == 0, "\(r.stdout.suffix(2000)) \(r.stderr.suffix(2000))")
            var answers: [Int: String] = [:]
            for line in r.stdout.split(separator: "\n") {
                guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], let id = o["id"] as? Int,
                      let l = o["live"] as? [String: Any] else { continue }
                answers[id] = "\(o["policy"] ?? "-") \(l["outcome"] ?? "-") \(l["rule"] ?? "-") \(o["agree"] ?? "-")"
            }
            return (answers, brokers)
        }
        let shared = try await live([]), separate = try await live(["--broker-per-policy"])
        // The nine sample policies target the same apps: a device's broker takes them in turn
        // (a second user's copy of an app is another device, with its own broker).
        #expect(!shared.brokers.isEmpty && shared.brokers[0].contains("matrix: policies managed-only, managed-only-filtered, "), "\(shared.brokers)")
        #expect(separate.brokers.count > shared.brokers.count && separate.brokers.allSatisfy { $0.contains("matrix: policy ") }, "\(separate.brokers)")
        #expect(shared.answers.count == 120 && separate.answers.count == 120)
        for (id, answer) in separate.answers { #expect(shared.answers[id] == answer, "cell \(id)") }
    }
}
