import Foundation
import Testing

/// `mamlaunch explain` answers the 12 cells of seed 002's send / import / passive-receive
/// tables over the sample tenant (Send = Receive = managed apps for adele), run as a process.
/// A send is a document pushed through share, the push the broker carries: the seed's "blocked"
/// for a send to an unmanaged app arrives as an encrypted copy the app cannot read (4.1.4), as
/// the matrix's exit-criteria cell sees it live.
@Suite("mamlaunch explain")
struct ExplainCommandTests {
    static let adele = "adele@contoso.com"

    static let cells: [(row: String, from: String, to: String, channel: String, outcome: String, allowed: Bool)] = [
        ("Managed identity send to unmanaged app", "Mail:\(adele),personal", "Notes", "send", "encrypted", true),
        ("Managed identity send to managed app", "Mail:\(adele),personal", "Docs:\(adele)", "send", "allowed", true),
        ("Unmanaged identity send to managed app", "Mail:personal", "Docs:\(adele)", "send", "blocked", false),
        ("Unmanaged identity send to unmanaged app", "Mail:personal", "Notes", "send", "allowed", true),
        ("Managed identity import from unmanaged app", "Notes", "Mail:\(adele),personal", "import", "blocked", false),
        ("Managed identity import from managed app", "Docs:\(adele)", "Mail:\(adele),personal", "import", "allowed", true),
        ("Unmanaged identity import from managed app", "Docs:\(adele)", "Mail:personal", "import", "blocked", false),
        ("Unmanaged identity import from unmanaged app", "Notes", "Mail:personal", "import", "allowed", true),
        ("Managed identity receive from unmanaged app", "Notes", "Mail:\(adele),personal", "receive", "switched", true),
        ("Managed identity receive from managed app", "Docs:\(adele)", "Mail:\(adele),personal", "receive", "allowed", true),
        ("Unmanaged identity receive from managed app", "com.contoso.docs:\(adele)", "mail:personal", "receive", "switched", true),
        ("Unmanaged identity receive from unmanaged app", "com.example.notes", "Mail:personal", "receive", "allowed", true),
    ]

    @Test("seed 002 cell", arguments: cells.indices)
    func cell(_ i: Int) throws {
        let c = Self.cells[i]
        let r = try CommandRunner.run(["explain", "--from", c.from, "--to", c.to, "--channel", c.channel, "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(object["outcome"] as? String == c.outcome, "\(c.row): \(r.stdout)")
        #expect(object["allowed"] as? Bool == c.allowed, "\(c.row)")
        for key in ["rule", "tag", "message"] { #expect(object[key] is String, "\(key) missing") }
        if c.outcome == "switched" {
            let expected = c.row.hasPrefix("Managed identity") ? "personal" : Self.adele
            #expect(object["receivingIdentity"] as? String == expected, "\(c.row): \(r.stdout)")
        }
    }

    @Test func textOutputNamesRuleTagMessageAndFields() throws {
        let r = try CommandRunner.run(["explain", "--from", "Mail", "--to", "Notes", "--channel", "send"])
        #expect(r.status == 0)
        #expect(r.stdout.hasPrefix("ENCRYPTED  send  com.contoso.mail as adele@contoso.com (managed) → com.example.notes as personal (unmanaged)  by sendOpenInEncrypted at Sources/MAMPolicy/Decisions/Transfer.swift:"), "\(r.stdout)")
        // The first line's site is the engine's line that chose the rule: one step from answer to code.
        let first = r.stdout.prefix { $0 != "\n" }
        let site = try #require(first.split(separator: " ").last?.split(separator: ":"), "\(first)")
        let source = try String(contentsOf: CommandRunner.root.appendingPathComponent(String(site[0])), encoding: .utf8)
        let line = try #require(Int(site[1]).flatMap { n in source.split(separator: "\n", omittingEmptySubsequences: false).dropFirst(n - 1).first })
        #expect(line.contains(".sendOpenInEncrypted"), "\(site): \(line)")
        #expect(r.stdout.contains("rule      4.1.4 [doc: admin]"))
        #expect(r.stdout.contains("see       docs/SEMANTICS.md §4.1.4"))
        #expect(r.stdout.contains("type      delivered as com.microsoft.intune.mam.com.adobe.pdf"))
        #expect(r.stdout.contains("allowedOutboundDataTransferDestinations = managedApps"))
    }

    @Test func everyChannelAnswers() throws {
        let runs: [([String], String)] = [
            (["--from", "Mail", "--to", "Notes", "--channel", "paste", "--text", "hello"], "\"blocked\""),
            (["--from", "Mail", "--to", "Docs", "--channel", "paste", "--text", "hello"], "\"allowed\""),
            (["--from", "Mail", "--to", "Docs", "--channel", "open-url", "--url", "contosodocs://x"], "contosodocs-intunemam://"),
            (["--from", "Mail", "--channel", "open-url", "--url", "skype:echo"], "\"4.1.4\""),
            (["--from", "Mail", "--to", "Notes", "--channel", "open-in", "--type", "com.adobe.pdf"], "\"encrypted\""),
            (["--from", "Mail", "--channel", "save-to", "--location", "oneDriveForBusiness:adele@contoso.com"], "\"allowed\""),
            (["--from", "Mail", "--channel", "save-to", "--location", "box"], "\"blocked\""),
            (["--to", "Mail", "--channel", "open-from", "--location", "camera"], "\"allowed\""),
            (["--to", "Mail", "--channel", "open-from", "--location", "localStorage"], "\"blocked\""),
            (["--from", "Mail", "--to", "Notes", "--channel", "send", "--policy", "Policies/contoso/policies/allow-all.json"], "\"allowed\""),
            (["--from", "Mail:ben@contoso.com", "--to", "Docs:ben@contoso.com", "--channel", "send"], "\"4.1.3\""),
        ]
        for (args, expected) in runs {
            let r = try CommandRunner.run(["explain"] + args + ["--json"])
            #expect(r.status == 0, "\(args): \(r.stderr)")
            #expect(r.stdout.contains(expected), "\(args): \(r.stdout)")
        }
    }

    /// What the broker answers in SeedFidelityTests: under Send = none an Open-in document is
    /// not offered (seed 000 §'Copy To' actions); a save to `other` with an account is decided.
    @Test func explainAgreesWithTheBrokerOnSendNoneOpenInAndOtherLocations() throws {
        let none = try CommandRunner.run(["explain", "--from", "Mail:ben@contoso.com", "--to", "Docs:ben@contoso.com",
                                          "--channel", "open-in", "--type", "com.adobe.pdf", "--json"])
        #expect(none.stdout.contains("\"filtered\"") && none.stdout.contains("sendNoneOpenInFiltered"), "\(none.stdout)")
        #expect(none.stdout.contains("seed 000 §'Copy To' actions"), "\(none.stdout)")
        let other = try CommandRunner.run(["explain", "--from", "Mail", "--channel", "save-to", "--location", "other:adele@contoso.com", "--json"])
        #expect(other.status == 0 && other.stdout.contains("\"blocked\"") && other.stdout.contains("saveOther"), "\(other.stdout)\(other.stderr)")
    }

    /// SEMANTICS §1.view, as the broker answers it in MultiAccountViewProcessTests: from Mail's
    /// unified inbox (adele and personal together) a paste into Docs is blocked by the lock-down
    /// clipboard and a share is not offered, where adele's inbox alone may do both; a
    /// single-identity app cannot show a view.
    @Test func explainDecidesForAViewOfSeveralAccountsAsTheBrokerDoes() throws {
        let view = ["--from", "Mail:\(Self.adele),personal", "--from-view", "--to", "Docs:\(Self.adele)"]
        let paste = try CommandRunner.run(["explain"] + view + ["--channel", "paste", "--text", "q3", "--json"])
        #expect(paste.status == 0 && paste.stdout.contains("\"blocked\"") && paste.stdout.contains("pasteOrgBlocked"), "\(paste.stdout)\(paste.stderr)")
        #expect((paste.stdout + paste.stderr).contains("lock-down policy"), "\(paste.stdout)\(paste.stderr)")
        let share = try CommandRunner.run(["explain"] + view + ["--channel", "open-in", "--type", "com.adobe.pdf", "--json"])
        #expect(share.stdout.contains("\"filtered\"") && share.stdout.contains("sendNoneOpenInFiltered"), "\(share.stdout)")
        let alone = try CommandRunner.run(["explain", "--from", "Mail:\(Self.adele),personal", "--to", "Docs:\(Self.adele)",
                                           "--channel", "paste", "--text", "q3", "--json"])
        #expect(alone.stdout.contains("\"allowed\" : true") || alone.stdout.contains("\"allowed\":true"), "\(alone.stdout)")
        // The text names where the lock-down policy comes from in words (it has no file; its
        // empty origin was printed as "()").
        let text = try CommandRunner.run(["explain"] + view + ["--channel", "paste", "--text", "q3"])
        let policyLine = text.stdout.split(separator: "\n").first { $0.hasPrefix("  policy ") }.map(String.init) ?? ""
        #expect(policyLine.contains("\"Lock-down (a view of several accounts)\" (MAMLab's own, no file: a view that shows a managed account beside others gets every restriction at its strictest, docs/SEMANTICS.md §1.view) on com.contoso.mail"),
                "\(text.stdout)\(text.stderr)")
        #expect(!text.stdout.contains("()"), "\(text.stdout)")
        let single = try CommandRunner.run(["explain", "--from", "Docs:\(Self.adele),personal", "--from-view", "--to", "Mail", "--channel", "send"])
        #expect(single.status != 0 && single.stderr.contains("identityViewSingleIdentity"), "\(single.stderr)")
    }

    @Test func badArgumentsFailWithOneClearLine() throws {
        let cases: [([String], String)] = [
            (["--from", "Nope", "--to", "Notes", "--channel", "send"], "unknown app \"Nope\" (did you mean \"Notes\"?); known apps: Chat (com.example.chat)"),
            (["--from", "Mail", "--to", "Notes", "--channel", "paste"], "--channel paste needs --text"),
            (["--from", "Mail", "--channel", "save-to", "--location", "attic"], "unknown save location \"attic\"; allowed values: other, oneDriveForBusiness"),
            (["--from", "Mail", "--to", "Notes", "--channel", "teleport"], "teleport"),
            (["--tenant", "/nonexistent.json", "--from", "Mail", "--to", "Notes", "--channel", "send"], "/nonexistent.json: error: no such file"),
        ]
        for (args, expected) in cases {
            let r = try CommandRunner.run(["explain"] + args)
            #expect(r.status != 0, "\(args)")
            #expect(r.stderr.contains(expected), "\(args): \(r.stderr)")
        }
    }

    @Test func anAccountOutsideTheTenantIsNoted() throws {
        let r = try CommandRunner.run(["explain", "--from", "Mail:carol@fabrikam.com", "--to", "Notes", "--channel", "send"])
        #expect(r.stdout.contains("note: carol@fabrikam.com is not a user of tenant contoso.com"))
        let personal = try CommandRunner.run(["explain", "--from", "Mail:dana@outlook.com", "--to", "Notes", "--channel", "send"])
        #expect(!personal.stdout.contains("note:"))
    }

    /// An app no Apps/ folder provides is answered as the matrix runs it: the stand-in made from
    /// its catalog entry, named by bundle id or by the entry's name, targeted by a policy file
    /// that names its apps (the vendor's Level 2 export targets Outlook and Word, not Gmail).
    @Test func catalogAppsAreAnsweredAsTheirStandIns() throws {
        let level2 = ["--policy", "Policies/frameworks/level-2-enterprise-enhanced-data-protection-iOS.json"]
        let managed = try CommandRunner.run(["explain", "--from", "com.microsoft.office.outlook", "--to", "Word",
                                             "--channel", "send", "--json"] + level2)
        #expect(managed.status == 0, "\(managed.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(managed.stdout.utf8)) as? [String: Any], "\(managed.stdout)")
        #expect(object["outcome"] as? String == "allowed", "\(managed.stdout)")
        let text = try CommandRunner.run(["explain", "--from", "Outlook", "--to", "com.google.gmail", "--channel", "send"] + level2)
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.hasPrefix("ENCRYPTED  send  com.microsoft.office.outlook as adele@contoso.com (managed) → com.google.gmail"), "\(text.stdout)")
        #expect(text.stdout.contains("com.google.gmail is not installed (no Apps/ folder): it is answered as the stand-in made from the app catalog's entry"), "\(text.stdout)")
        // Still unknown: a name neither installed, nor in the catalog, nor targeted.
        let unknown = try CommandRunner.run(["explain", "--from", "com.example.nowhere", "--to", "Notes", "--channel", "send"])
        #expect(unknown.status != 0)
        #expect(unknown.stderr.contains("unknown app \"com.example.nowhere\""), "\(unknown.stderr)")
    }

    /// Two browsers take https: explain says which one the device opens a link in, as the
    /// broker routes it (docs/SEMANTICS.md §4.4), when --to names the other.
    @Test func aLinkTowardsABrowserItDoesNotOpenInIsNoted() throws {
        let dir = NSTemporaryDirectory() + "mamlab-explain-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let plist = dir + "/Info.plist"
        try Data("""
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
            <key>CFBundleIdentifier</key><string>com.apple.mobilesafari</string>
            <key>CFBundleURLTypes</key><array><dict><key>CFBundleURLSchemes</key><array><string>http</string><string>https</string></array></dict></array>
            </dict></plist>
            """.utf8).write(to: URL(fileURLWithPath: plist))
        let link = ["--manifest", plist, "--from", "Notes", "--channel", "open-url", "--url", "https://contoso.com/q3"]
        let toEdge = try CommandRunner.run(["explain", "--to", "Edge"] + link)
        #expect(toEdge.stdout.contains("the link opens in com.apple.mobilesafari, not in com.microsoft.msedge"), "\(toEdge.stdout)")
        let toSafari = try CommandRunner.run(["explain", "--to", "com.apple.mobilesafari"] + link)
        #expect(toSafari.status == 0 && !toSafari.stdout.contains("the link opens in"))
    }

    @Test func helpIsProductText() throws {
        let r = try CommandRunner.run(["explain", "--help"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("--from is where the data comes from"))
        let top = try CommandRunner.run(["--help"])
        #expect(top.stdout.contains("check") && top.stdout.contains("explain"))
    }
}
