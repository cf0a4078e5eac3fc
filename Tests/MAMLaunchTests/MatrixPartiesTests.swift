import Foundation
import Testing

/// `mamlaunch matrix` over what an admin gives it: another tenant, the vendor's framework policies
/// with their apps, stand-ins for apps no `Apps/` folder provides, policies by sample label.
@Suite("mamlaunch matrix: parties from the tenant and policies, stand-in apps", .serialized)
struct MatrixPartiesTests {
    static let frameworks = CommandRunner.root.appendingPathComponent("Policies/frameworks").path
    static let l1 = frameworks + "/level-1-enterprise-basic-data-protection-iOS.json"
    static let l2 = frameworks + "/level-2-enterprise-enhanced-data-protection-iOS.json"
    static let l3 = frameworks + "/level-3-enterprise-high-data-protection-iOS.json"

    /// A folder of its own, removed by the caller.
    static func folder() throws -> String {
        let path = NSTemporaryDirectory() + "mamlab-parties-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Fabrikam: one user, one policy (the sample managed-only settings) targeting Outlook and Word.
    static func fabrikam(in dir: String) throws -> String {
        let managedOnly = CommandRunner.root.appendingPathComponent("Policies/contoso/policies/managed-only.json").path
        let tenant = """
            {"tenant": "fabrikam.com",
             "users": [{"upn": "zoe@fabrikam.com", "groups": ["staff"]}],
             "groups": ["staff"],
             "device": {"mdmEnrolled": false},
             "policies": [{"$ref": "\(managedOnly)",
                           "apps": [{"mobileAppIdentifier": {"@odata.type": "#microsoft.graph.iosMobileAppIdentifier", "bundleId": "com.microsoft.office.outlook"}},
                                    {"mobileAppIdentifier": {"@odata.type": "#microsoft.graph.iosMobileAppIdentifier", "bundleId": "com.microsoft.office.word"}}],
                           "assignments": [{"target": {"@odata.type": "#microsoft.graph.groupAssignmentTarget", "groupId": "staff"}}]}]}
            """
        let path = dir + "/fabrikam.json"
        try Data(tenant.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func cells(_ stdout: String) -> [[String: Any]] {
        stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    @Test("the default experiment with another tenant runs that tenant's users and apps, never Contoso's")
    func defaultExperimentWithAnotherTenant() async throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let tenant = try Self.fabrikam(in: dir)
        let r = try await CommandRunner.runOffPool(["matrix", "--tenant", tenant, "--predict", "--format", "json"])
        #expect(r.status == 0, "\(r.stderr.suffix(2000))")
        #expect(r.stderr.contains("made from that tenant's policies, users and apps"))
        let cells = Self.cells(r.stdout)
        #expect(!cells.isEmpty)
        #expect(!r.stdout.contains("adele") && !r.stdout.contains("com.contoso"))
        let sources = Set(cells.compactMap { ($0["source"] as? [String: Any])?["party"] as? String })
        #expect(sources.contains("Outlook (zoe)") && sources.contains("Word (zoe)"))
        #expect(r.stderr.contains("Stand-ins") && r.stderr.contains("Outlook (com.microsoft.office.outlook)"))
    }

    @Test("a Graph tenant export: check validates it with key paths, and the default experiment runs its users and apps live")
    func graphTenantExport() async throws {
        let export = CommandRunner.root.appendingPathComponent("Policies/graph-export/fabrikam-export.json").path
        let checked = try await CommandRunner.runOffPool(["check", export])
        #expect(checked.status == 0 && checked.stdout.contains("0 errors, 0 warnings"), "\(checked.stdout) \(checked.stderr)")
        let r = try await CommandRunner.runOffPool(["matrix", "--tenant", export, "--format", "json"])
        #expect(r.status == 0, "\(r.stdout.suffix(1500)) \(r.stderr.suffix(1500))")
        let cells = Self.cells(r.stdout)
        #expect(!cells.isEmpty && cells.allSatisfy { $0["live"] is [String: Any] && $0["agree"] as? Bool == true })
        let sources = Set(cells.compactMap { ($0["source"] as? [String: Any])?["party"] as? String })
        #expect(sources.isSuperset(of: ["Outlook (megan)", "Word (megan)", "OneDrive (megan)", "Edge (megan)", "Gmail (personal mail)"]), "\(sources.sorted())")
        #expect(!r.stdout.contains("adele") && !r.stdout.contains("com.contoso"))
        // An assignment to a group the export does not hold: file, key path and the groups it has.
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let text = try String(contentsOfFile: export, encoding: .utf8)
        let bad = dir + "/bad-export.json"
        try Data(text.replacingOccurrences(of: "\"groupId\": \"b81e4d07-52c9-4f3a-8e1d-6a0c9f2b4e75\"", with: "\"groupId\": \"no-such-group\"").utf8)
            .write(to: URL(fileURLWithPath: bad))
        let refused = try await CommandRunner.runOffPool(["check", bad])
        #expect(refused.status != 0)
        #expect((refused.stdout + refused.stderr).contains("iosManagedAppProtections.value[1].assignments[1].target.groupId"), "\(refused.stdout) \(refused.stderr)")
        #expect((refused.stdout + refused.stderr).contains("unknown group \"no-such-group\""))
    }

    @Test("a party account that is not the tenant's is an error before anything starts, naming party and tenant")
    func foreignAccountsAreRefused() async throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let tenant = try Self.fabrikam(in: dir)
        let exp = dir + "/e.json"
        try Data(#"{"parties": [{"name": "Mail", "app": "Mail", "accounts": ["adele@contoso.com"]}, {"name": "Notes", "app": "Notes"}], "channels": ["paste"]}"#.utf8)
            .write(to: URL(fileURLWithPath: exp))
        let r = try await CommandRunner.runOffPool(["matrix", exp, "--tenant", tenant, "--predict"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("party \"Mail\": adele@contoso.com is not a user of tenant fabrikam.com"))
        #expect(r.stderr.contains("zoe@fabrikam.com"))
    }

    @Test("policies by sample label in --policy and in experiment files; an unknown one names file, line and key")
    func policiesBySampleLabel() async throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let byLabel = try await CommandRunner.runOffPool(["matrix", "--predict", "--policy", "managed-only", "--policy", "allow-all"])
        #expect(byLabel.status == 0, "\(byLabel.stderr.suffix(1000))")
        #expect(byLabel.stderr.contains("2 policies: every expectation met"), "\(byLabel.stderr)")
        let exp = dir + "/e.json"
        try Data("""
            {"parties": [{"name": "Mail", "app": "Mail", "accounts": ["adele@contoso.com"]}, {"name": "Notes", "app": "Notes"}],
             "channels": ["paste"],
             "policies": ["managed-only",
                          "no-such-policy"]}
            """.utf8).write(to: URL(fileURLWithPath: exp))
        let r = try await CommandRunner.runOffPool(["matrix", exp, "--predict"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("e.json:4:") && r.stderr.contains("$.policies[1]") && r.stderr.contains("no sample policy of that name"))
        let flag = try await CommandRunner.runOffPool(["matrix", "--predict", "--policy", "no-such-policy"])
        #expect(flag.status != 0 && flag.stderr.contains("--policy no-such-policy: no policy file"))
    }

    @Test("the three framework levels with --parties policy-apps: every targeted app and the unmanaged ones, predicted")
    func frameworkLevelsPredicted() async throws {
        let r = try await CommandRunner.runOffPool(["matrix", "--predict", "--parties", "policy-apps", "--policy", Self.l1, "--policy", Self.l2,
                                       "--policy", Self.l3, "--format", "json"])
        #expect(r.status == 0, "\(r.stderr.suffix(2000))")
        let cells = Self.cells(r.stdout)
        let parties = Set(cells.compactMap { ($0["source"] as? [String: Any])?["party"] as? String })
        for p in ["Outlook (adele)", "Word (adele)", "Teams (adele)", "Edge (adele)", "Gmail (personal mail)", "Safari (system browser)"] {
            #expect(parties.contains(p), "\(p) in \(parties.sorted())")
        }
        #expect(parties.count == 14)
        #expect(cells.count == 3_157)
        #expect(r.stderr.contains("(predicted, nothing ran), 3 policies: every expectation met"), "\(r.stderr.suffix(500))")
        #expect(r.stderr.contains("13 stand-in apps"))
        // A web link opens in one browser: each source's link has one cell per policy.
        let links = cells.filter { $0["channel"] as? String == "open-url" && ($0["location"] as? String)?.hasPrefix("https://") == true }
        let perSource = Dictionary(grouping: links) { "\($0["policy"] ?? "")|\(($0["source"] as? [String: Any])?["party"] ?? "")" }
        #expect(!perSource.isEmpty && perSource.values.allSatisfy { $0.count == 1 }, "\(perSource.filter { $0.value.count > 1 }.keys.sorted())")
        // Outlook's: in the system browser under level 1, rewritten for Edge under level 2.
        func link(_ policy: String) -> (target: String?, outcome: String?) {
            let c = links.first { $0["policy"] as? String == policy && ($0["source"] as? [String: Any])?["party"] as? String == "Outlook (adele)" }
            return ((c?["target"] as? [String: Any])?["party"] as? String, (c?["predicted"] as? [String: Any])?["outcome"] as? String)
        }
        #expect(link("level-1-enterprise-basic-data-protection-iOS") == ("Safari (system browser)", "allowed"))
        #expect(link("level-2-enterprise-enhanced-data-protection-iOS") == ("Edge (adele)", "rewritten"))
    }

    @Test("live: two browsers take https; each web link opens in the one the device chooses, and the broker agrees whichever runs")
    func webLinksWithTwoBrowsersLive() async throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let exp = dir + "/browsers.json"
        try Data(#"""
            {"parties": [{"name": "Outlook (adele)", "app": "com.microsoft.office.outlook", "accounts": ["adele@contoso.com"]},
                         {"name": "Gmail (personal mail)", "app": "com.google.gmail"},
                         {"name": "Edge (adele)", "app": "Edge", "accounts": ["adele@contoso.com"]},
                         {"name": "Safari (system browser)", "app": "com.apple.mobilesafari"}],
             "channels": ["open-url https://contoso.sharepoint.com/q3.pdf", "open-url http://contoso.com/a", "paste"],
             "policies": ["\#(Self.l1)", "\#(Self.l2)"]}
            """#.utf8).write(to: URL(fileURLWithPath: exp))
        let r = try await CommandRunner.runOffPool(["matrix", exp, "--format", "json"])
        #expect(r.status == 0, "\(r.stdout.suffix(2000)) \(r.stderr.suffix(2000))")
        let cells = Self.cells(r.stdout)
        #expect(cells.allSatisfy { $0["live"] is [String: Any] && $0["agree"] as? Bool == true })
        let links = cells.filter { ($0["location"] as? String)?.hasPrefix("http") == true }
        func link(_ policy: String, _ source: String, _ url: String) -> [(target: String?, live: String?)] {
            links.filter { ($0["policy"] as? String)?.hasPrefix(policy) == true && $0["location"] as? String == url
                && ($0["source"] as? [String: Any])?["party"] as? String == source }
                .map { (($0["target"] as? [String: Any])?["party"] as? String, ($0["live"] as? [String: Any])?["outcome"] as? String) }
        }
        let https = "https://contoso.sharepoint.com/q3.pdf"
        for level in ["level-1", "level-2"] {
            #expect(link(level, "Gmail (personal mail)", https).map(\.target) == ["Safari (system browser)"])
            #expect(link(level, "Gmail (personal mail)", https).map(\.live) == ["allowed"])
        }
        #expect(link("level-1", "Outlook (adele)", https).map(\.target) == ["Safari (system browser)"])
        #expect(link("level-2", "Outlook (adele)", https).map(\.target) == ["Edge (adele)"])
        #expect(link("level-2", "Outlook (adele)", https).map(\.live) == ["rewritten"])
        // The diff pairs Outlook's link across the levels although it moved, and says where to.
        let diff = try await CommandRunner.runOffPool(["matrix", exp, "--predict", "--diff", "level-1-enterprise-basic-data-protection-iOS",
                                          "level-2-enterprise-enhanced-data-protection-iOS"])
        let row = diff.stdout.split(separator: "\n").first { $0.hasPrefix("Outlook (adele)") && $0.contains(https) }
        #expect(row?.contains("Safari (system browser) → Edge (adele)") == true && row?.contains("managedBrowserToOpenLinksRequired: false → true") == true,
                "\(diff.stdout)")
    }

    /// A report is headed by what ran: a policy-apps run by the policies it ran under, its
    /// parties and users; a tenant as it is by its own policies and their groups. Not by the
    /// built-in experiment whose channels it took ("Sharing matrix: default", Mail, Docs, Notes).
    @Test func aReportIsHeadedByWhatRan() async throws {
        let md = try await CommandRunner.runOffPool(["matrix", "--predict", "--parties", "policy-apps", "--policy", Self.l2, "--format", "md"])
        #expect(md.stdout.hasPrefix("# Sharing matrix: the policies' apps: iOS/iPadOS Enterprise Enhanced Data Protection\n"), "\(md.stdout.prefix(300))")
        #expect(md.stdout.contains("signed in as a user they are assigned to (adele@contoso.com)") && md.stdout.contains("Outlook (adele)"))
        #expect(!md.stdout.contains("Mail signed in as adele and as a personal account"), "the built-in experiment's description")
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let html = dir + "/tenant.html"
        let t = try await CommandRunner.runOffPool(["matrix", "--predict", "--tenant", try Self.fabrikam(in: dir), "--out", html])
        #expect(t.status == 0, "\(t.stderr.suffix(800))")
        let page = try String(contentsOfFile: html, encoding: .utf8)
        #expect(page.contains("<h2>Policy: the tenant&#39;s policies: Managed only (groups staff)</h2>"), "\(page.prefix(3000))")
        #expect(!page.contains("<h2>Policy: tenant</h2>"))
    }

    /// The admin's question between the vendor's three levels, live, in one command: every
    /// changed cell names the setting that changed it, the changes come grouped by setting and
    /// outcome first, and changes of the rule alone are counted, listed only when asked.
    @Test("live: the three framework levels compared in one run, each change with its setting, grouped")
    func threeLevelsLiveDiff() async throws {
        let levels = [Self.l1, Self.l2, Self.l3]
        let common = ["matrix", "--parties", "policy-apps"] + levels.flatMap { ["--policy", $0] } + ["--diff"] + levels + ["--format", "md"]
        let r = try await CommandRunner.runOffPool(common)
        #expect(r.status == 0, "\(r.stderr.suffix(2000))")
        #expect(r.stderr.contains("(live)"), "\(r.stderr.suffix(500))")
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        func cells(_ line: String) -> [String] { line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast().map { $0.trimmingCharacters(in: .whitespaces) } }
        // The summary: N of M cells change, and how many changed only their rule.
        let summary = lines.first { $0.contains("cells change across") } ?? ""
        let words = summary.split(separator: " ")
        let changed = Int(words.first ?? "") ?? -1
        #expect(changed > 100 && summary.contains("more change only the rule"), "\(summary)")
        // The groups: their counts add up to the changed cells, each names a setting.
        let groupHeader = lines.firstIndex(of: "| cells | outcome | setting that changed it |") ?? lines.endIndex
        let groups = lines[min(groupHeader + 2, lines.endIndex)...].prefix { $0.hasPrefix("|") }.map(cells)
        #expect(groups.count > 3 && groups.map { Int($0[0]) ?? 0 }.reduce(0, +) == changed, "\(groups)")
        #expect(groups.allSatisfy { $0[2] != "-" && $0[2].contains(" → ") }, "\(groups)")
        // The cells: a column per level, the setting named on every row.
        let cellHeader = lines.firstIndex { $0.hasPrefix("| source | channel | target |") } ?? lines.endIndex
        #expect(cells(lines[cellHeader]).count == 3 + 3 + 1, "\(lines[cellHeader])")
        let rows = lines[min(cellHeader + 2, lines.endIndex)...].prefix { $0.hasPrefix("|") }.map(cells)
        #expect(rows.count == changed)
        #expect(rows.allSatisfy { !$0[6].isEmpty && $0[6].contains("level-") }, "a row names no setting: \(rows.first { $0[6].isEmpty } ?? [])")
        // Asked for, the rule-only changes are listed too.
        let all = try await CommandRunner.runOffPool(["matrix", "--predict", "--parties", "policy-apps"] + levels.flatMap { ["--policy", $0] }
                                                     + ["--diff"] + levels + ["--diff-rules", "--format", "md"])
        let allSummary = all.stdout.split(separator: "\n").first { $0.contains("cells change across") } ?? ""
        let folded = Int(summary.components(separatedBy: "; ").last?.split(separator: " ").first ?? "") ?? -1
        #expect(Int(allSummary.split(separator: " ").first ?? "") == changed + folded, "\(allSummary) vs \(summary)")
    }

    @Test("live: stand-ins under the level 2 framework policy: Outlook, Word, OneDrive, Gmail and Edge, every cell agrees")
    func frameworkLevelLive() async throws {
        // Five parties, so that the suite stays light; the whole framework run is in docs/CATALOG.md.
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let exp = dir + "/levels.json"
        try Data(#"""
            {"parties": [{"name": "Outlook (adele)", "app": "com.microsoft.office.outlook", "accounts": ["adele@contoso.com"]},
                         {"name": "Word (adele)", "app": "Word", "accounts": ["adele@contoso.com"]},
                         {"name": "OneDrive (adele)", "app": "com.microsoft.skydrive", "accounts": ["adele@contoso.com"]},
                         {"name": "Gmail (personal mail)", "app": "com.google.gmail"},
                         {"name": "Edge (adele)", "app": "Edge", "accounts": ["adele@contoso.com"]}],
             "channels": ["open-in", "import", "paste", "open-url", "open-url https://contoso.sharepoint.com/q3.pdf", "save-to dropbox", "open-from localStorage"],
             "policies": ["\#(Self.l2)"]}
            """#.utf8).write(to: URL(fileURLWithPath: exp))
        let r = try await CommandRunner.runOffPool(["matrix", exp, "--format", "json"])
        #expect(r.status == 0, "\(r.stdout.suffix(2000)) \(r.stderr.suffix(2000))")
        let cells = Self.cells(r.stdout)
        #expect(cells.count > 100)
        #expect(cells.allSatisfy { $0["live"] is [String: Any] && $0["agree"] as? Bool == true && $0["leaked"] as? Bool == false })
        // A document from Outlook reached Word (two stand-ins) readable; Gmail got it sealed.
        func openIn(to target: String) -> [String: Any]? {
            let c = cells.first { $0["channel"] as? String == "open-in" && ($0["source"] as? [String: Any])?["party"] as? String == "Outlook (adele)"
                && ($0["target"] as? [String: Any])?["party"] as? String == target }
            return (c?["live"] as? [String: Any])?["arrival"] as? [String: Any]
        }
        #expect(openIn(to: "Word (adele)")?["readable"] as? Bool == true)
        #expect(openIn(to: "Gmail (personal mail)")?["readable"] as? Bool != true)
        // The web link from Outlook reached Edge rewritten for the managed browser.
        let link = cells.first { $0["channel"] as? String == "open-url" && ($0["location"] as? String)?.hasPrefix("https://") == true
            && ($0["source"] as? [String: Any])?["party"] as? String == "Outlook (adele)" }
        #expect((link?["live"] as? [String: Any])?["outcome"] as? String == "rewritten")
        #expect(r.stderr.contains("all passed, 0 leaks") && r.stderr.contains("4 stand-in apps"))
    }

    @Test("check validates a catalog file like every other input")
    func checkValidatesACatalog() async throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/catalog.json"
        try Data("""
            {"apps": [
              {"name": "X", "bundleId": "com.example.x/../../y", "sources": ["test"]}
            ]}
            """.utf8).write(to: URL(fileURLWithPath: file))
        let r = try await CommandRunner.runOffPool(["check", file])
        #expect(r.status == 1)
        #expect(r.stdout.contains("catalog.json:2:") && r.stdout.contains("$.apps[0].bundleId"))
        let builtIn = try await CommandRunner.runOffPool(["check", CommandRunner.root.appendingPathComponent("Policies/catalog/apps.json").path,
                                             Self.frameworks])
        #expect(builtIn.status == 0, "\(builtIn.stdout)")
    }

    @Test("a web link the broker routes to the other browser fails at once, naming the app that took it (no wait for an arrival that cannot come)")
    func aLinkRoutedToAnotherBrowserNamesIt() async throws {
        // Edge and the Safari stand-in both take https and the device opens a plain web link in
        // the system browser: a hand-written cell towards Edge cannot be met. It used to wait out
        // the arrival's 5 s and say only "nothing arrived"; the broker's audit record names the
        // receiver, so the cell fails at once saying where the link went.
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let exp = dir + "/browsers.json"
        try Data(#"""
            {"parties": [{"name": "Gmail (personal mail)", "app": "com.google.gmail"},
                         {"name": "Edge", "app": "Edge"},
                         {"name": "Safari", "app": "com.apple.mobilesafari"}],
             "cells": [{"channel": "open-url https://contoso.sharepoint.com/q3.pdf", "source": "Gmail (personal mail)", "target": "Edge"}],
             "policies": ["\#(Self.l1)"]}
            """#.utf8).write(to: URL(fileURLWithPath: exp))
        let r = try await CommandRunner.runOffPool(["matrix", exp, "--format", "json"])
        let cells = Self.cells(r.stdout)
        #expect(cells.count == 1, "\(r.stderr.suffix(2000))")
        for c in cells {
            #expect(c["agree"] as? Bool == false, "\(c)")
            let note = (c["live"] as? [String: Any])?["note"] as? String ?? ""
            #expect(note.contains("the broker routed the link to com.apple.mobilesafari"), "\(c)")
        }
    }
}
