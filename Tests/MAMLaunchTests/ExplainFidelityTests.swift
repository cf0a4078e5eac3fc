import Foundation
import Testing

/// `explain` says where each rule comes from, refuses a second managed account, follows the
/// device's enrolled account, and can ask about a multi-identity app's launch state.
@Suite("mamlaunch explain: sources, accounts and the launch state")
struct ExplainFidelityTests {
    func json(_ arguments: [String]) throws -> [String: Any] {
        let r = try CommandRunner.run(["explain"] + arguments + ["--json"])
        #expect(r.status == 0, "\(arguments): \(r.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], "\(r.stdout)")
    }

    @Test func jsonCarriesTagAndSourceOfTheRuleAndOfTheSendersRule() throws {
        let blocked = try json(["--from", "Notes", "--to", "Mail:adele@contoso.com", "--channel", "import"])
        #expect(blocked["tag"] as? String == "doc" && blocked["source"] as? String == "seed 002 §Exit criteria", "\(blocked)")
        let encrypted = try json(["--from", "Mail", "--to", "Notes", "--channel", "open-in", "--type", "com.adobe.pdf"])
        #expect(encrypted["source"] as? String == "admin")
        let received = try json(["--from", "Docs:adele@contoso.com", "--to", "Mail:personal", "--channel", "receive"])
        #expect(received["senderSource"] as? String == "seed 002 §Exit criteria" && received["senderTag"] as? String == "doc")
        let chosen = try json(["--from", "Mail", "--to", "Docs", "--channel", "open-url", "--url", "contosodocs://x"])
        #expect(chosen["tag"] as? String == "chosen" && chosen["source"] as? String == "chosen")
    }

    // seed 002 §Exit criteria, "Log in multiple managed": the second managed account is
    // blocked; the SDK answers SingleManagedAccountMode (227) [headers].
    @Test func aSecondManagedAccountIsRefusedNamingTheEnrolledOne() throws {
        let r = try CommandRunner.run(["explain", "--from", "Mail:adele@contoso.com,ben@contoso.com", "--to", "Notes", "--channel", "send"])
        #expect(r.status != 0)
        #expect(r.stdout.isEmpty, "no decision is printed: \(r.stdout)")
        #expect(r.stderr.contains("ben@contoso.com cannot sign in as a second managed account: adele@contoso.com is already enrolled"), "\(r.stderr)")
        #expect(r.stderr.contains("SingleManagedAccountMode, 227"))
        // A personal account beside the managed one is fine ("Log in managed first").
        let ok = try CommandRunner.run(["explain", "--from", "Mail:adele@contoso.com,dana@outlook.com", "--to", "Notes", "--channel", "send"])
        #expect(ok.status == 0, "\(ok.stderr)")
    }

    /// The sample tenant with Mail's enrolled account written down as Adele's.
    func tenantWithMailEnrolledToAdele() throws -> String {
        let sample = CommandRunner.root.appendingPathComponent("Policies/contoso")
        let data = try Data(contentsOf: sample.appendingPathComponent("tenant.json"))
        var tenant = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var policies = try #require(tenant["policies"] as? [[String: Any]])
        for i in policies.indices {
            if let ref = policies[i]["$ref"] as? String { policies[i]["$ref"] = sample.appendingPathComponent(ref).path }
        }
        tenant["policies"] = policies
        tenant["device"] = ["mdmEnrolled": false, "mdmUser": NSNull(), "enrollments": ["com.contoso.mail": "adele@contoso.com"]]
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-enrolled-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: tenant).write(to: path)
        return path.path
    }

    // seed 002 §Stage 5: after enrollment "other users in the app will be treated as unmanaged".
    @Test func anotherTenantUserBesideTheEnrolledAccountIsUnmanaged() throws {
        let tenant = try tenantWithMailEnrolledToAdele()
        defer { try? FileManager.default.removeItem(atPath: tenant) }
        let ben = try json(["--tenant", tenant, "--from", "Mail:ben@contoso.com", "--to", "Notes", "--channel", "send"])
        let from = try #require(ben["from"] as? [String: Any])
        #expect(from["managed"] as? Bool == false && from["enrolled"] as? String == "adele@contoso.com", "\(ben)")
        #expect(ben["outcome"] as? String == "allowed" && ben["ruleName"] as? String == "senderUnmanaged")
        #expect((ben["notes"] as? [String])?.contains { $0.contains("adele@contoso.com is its enrolled account") } == true)
        // Adele is still managed there.
        let adele = try json(["--tenant", tenant, "--from", "Mail:adele@contoso.com", "--to", "Notes", "--channel", "send"])
        #expect(adele["outcome"] as? String == "encrypted", "\(adele)")
        // Ben and Adele together: Adele holds the managed slot, Ben is refused.
        let both = try CommandRunner.run(["explain", "--tenant", tenant, "--from", "Mail:ben@contoso.com,adele@contoso.com",
                                          "--to", "Notes", "--channel", "send"])
        #expect(both.status != 0 && both.stderr.contains("adele@contoso.com is already enrolled"), "\(both.stderr)")
    }

    // seed 000 §Switch identities: at launch a multi-identity app runs under an unknown,
    // unmanaged account. `none` says so; `personal` is the SDK's "" and a different state.
    @Test func theLaunchStateOfAMultiIdentityAppCanBeAskedFor() throws {
        let launch = try json(["--from", "Mail:none", "--to", "Notes", "--channel", "send"])
        let from = try #require(launch["from"] as? [String: Any])
        #expect(from["identity"] as? String == "none" && from["identitySet"] as? Bool == false && from["managed"] as? Bool == false)
        #expect(launch["outcome"] as? String == "allowed" && launch["ruleName"] as? String == "senderUnmanaged")
        let personal = try json(["--from", "Mail:personal", "--to", "Notes", "--channel", "send"])
        let p = try #require(personal["from"] as? [String: Any])
        #expect(p["identity"] as? String == "personal" && p["identitySet"] as? Bool == true)
        let text = try CommandRunner.run(["explain", "--from", "Mail:none", "--to", "Notes", "--channel", "send"])
        #expect(text.stdout.contains("com.contoso.mail as no identity set (unmanaged)"), "\(text.stdout)")
        // Docs is single-identity: the SDK sets its identity to the enrolled account.
        let single = try CommandRunner.run(["explain", "--from", "Docs:none", "--to", "Notes", "--channel", "send"])
        #expect(single.status != 0 && single.stderr.contains("not a multi-identity app"), "\(single.stderr)")
    }

    // Issue 9 item 10: the broker and explain answer an import of a document from Mail into
    // Notes alike; seed 002 §Exit criteria blocks it ("Unmanaged identity import from managed app").
    @Test func anImportOfADocumentIsBlockedLikeAnImportOfData() throws {
        let document = try json(["--from", "Mail", "--to", "Notes", "--channel", "import", "--type", "com.adobe.pdf"])
        let data = try json(["--from", "Mail", "--to", "Notes", "--channel", "import"])
        #expect(document["outcome"] as? String == "blocked" && data["outcome"] as? String == "blocked")
        #expect(document["ruleName"] as? String == data["ruleName"] as? String && data["ruleName"] != nil, "\(document) vs \(data)")
    }
}
