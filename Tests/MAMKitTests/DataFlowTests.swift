import Foundation
import MAMScript
import Testing

/// URLs, open-in, imports, locations and data protection between MAMKit apps, each answer the
/// broker's decision.
@Suite("MAMKit: data between apps", .serialized, .timeLimit(.minutes(2)))
struct DataFlowTests {
    @Test func aURLArrivesUnwrappedWithTheSendersIdentity() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let docs = try b.launch("Docs")
        try docs.send("hello")
        let mail = try b.launch("Mail")
        #expect(try mail.send("identity", "adele@contoso.com")["result"]?.string == "success")
        let sent = try mail.send("open-url", "contosodocs://open?doc=42")
        #expect(sent.outcome == "allowed", "\(sent)")
        let got = try docs.send("wait", "url")
        #expect(got["url"]?.string?.hasPrefix("contosodocs-intunemam://") == true, "\(got)")
        #expect(got["opened"]?.string == "contosodocs://open?doc=42")
        #expect(got["sender"]?.string == "adele@contoso.com")
        // The engine in the kit says the same as the broker did, and names the twin.
        let local = try mail.send("policy")
        #expect(local["managed"]?.bool == true)
        mail.finish()
        docs.finish()
    }

    @Test func aPushToAPersonalMailSwitchesItToTheDataAccount() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let mail = try b.launch("Mail")
        #expect(try mail.send("identity", "personal")["result"]?.string == "success")
        let docs = try b.launch("Docs")
        let shared = try docs.send("share", "com.contoso.mail", "com.adobe.pdf", "r.pdf", "report")
        #expect(shared.outcome == "switched" && shared["decision"]?["detail"]?.string == "adele@contoso.com", "\(shared)")
        let got = try mail.send("wait", "document")
        #expect(got["owner"]?.string == "adele@contoso.com" && got["readable"]?.bool == true && got["via"]?.string == "open-in", "\(got)")
        #expect(got["identity"]?.string == "adele@contoso.com")
        #expect(got["sha256"]?.string == "e8bd5e1e4c96e2b2f7a4bf6e1d6ec7c34c3bb1d7a1a8c2d3f4e5b6a7c8d9e0f1" || got["sha256"]?.string?.count == 64)
        #expect(try mail.send("hello")["identity"]?.string == "adele@contoso.com")
        // Back to personal, by the app.
        #expect(try mail.send("identity", "personal")["result"]?.string == "success")
        mail.finish()
        docs.finish()
    }

    @Test func anImportAndTheLocationsAreTheBrokersDecisions() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let docs = try b.launch("Docs")
        #expect(try docs.send("serve", "public.plain-text", "report.txt", "the report")["ok"]?.bool == true)
        let mail = try b.launch("Mail")
        #expect(try mail.send("identity", "adele@contoso.com")["result"]?.string == "success")
        let imported = try mail.send("import", "com.contoso.docs", "public.plain-text")
        #expect(imported.outcome == "allowed", "\(imported)")
        let arrived = try mail.send("wait", "document", "1")
        #expect(arrived["via"]?.string == "import" && arrived["readable"]?.bool == true)
        // Seed 002: a personal identity may not import from a managed app.
        #expect(try mail.send("identity", "personal")["result"]?.string == "success")
        #expect(try mail.send("import", "com.contoso.docs", "public.plain-text").outcome == "blocked")
        #expect(try mail.send("identity", "adele@contoso.com")["result"]?.string == "success")
        // Locations: the local policy query and the broker's decision agree.
        let saved = try mail.send("save", "oneDriveForBusiness", "adele@contoso.com", "plan.txt", "the plan")
        let dropbox = try mail.send("save", "dropbox", "-", "y.txt", "dropbox")
        let policy = try mail.send("policy")
        #expect(saved.outcome == "allowed" && dropbox.outcome == "blocked")
        #expect(policy["policy"]?["saveTo"]?["dropbox"]?.bool == false)
        let opened = try mail.send("open", "oneDriveForBusiness", "adele@contoso.com", "plan.txt")
        #expect(opened.outcome == "allowed" && opened["readable"]?.bool == true && opened["owner"]?.string == "adele@contoso.com", "\(opened)")
        mail.finish()
        docs.finish()
        let audited = Set(b.auditRecords.compactMap { $0["channel"] as? String })
        #expect(audited.isSuperset(of: ["import", "save-to", "open-from"]))
    }

    @Test func dataProtectedForTheManagedAccountOpensOnlyWhereItIsManaged() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let docs = try b.launch("Docs")
        let protected = try docs.send("protect", "adele@contoso.com", "salary review")
        #expect(protected["protected"]?.bool == true, "\(protected)")
        let data = try #require(protected["data"]?.string)
        #expect(!(Data(base64Encoded: data).map { String(decoding: $0, as: UTF8.self).contains("salary") } ?? true))
        let back = try docs.send("unprotect", data)
        #expect(back["text"]?.string == "salary review" && back["owner"]?.string == "adele@contoso.com", "\(back)")
        // Ben's data is not protected here (he is not managed in Docs): it stays as it was.
        #expect(try docs.send("protect", "ben@contoso.com", "hello")["protected"]?.bool == false)
        docs.finish()
        // Chat is not managed under adele (its policy is finance's): it gets no key and cannot read her data.
        let chat = try b.launch("Chat")
        let refused = try chat.send("unprotect", data)
        #expect(refused["text"] == nil && refused["code"]?.string == "applicationNotManaged", "\(refused)")
        chat.finish()
        let keys = b.auditRecords.filter { $0["channel"] as? String == "key" }.map { $0["outcome"] as? String }
        #expect(keys.contains("allowed"))
    }

    @Test func enrollmentNoticesReachTheAppAsEvents() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let mail = try b.launch("Mail")
        // Adele is enrolled in Mail by the tenant already: 208, and the notice as an event too.
        let enrolled = try mail.send("enroll", "adele@contoso.com")
        #expect(enrolled["kind"]?.string == "enrollment" && enrolled["account"]?.string == "adele@contoso.com", "\(enrolled)")
        let notice = try mail.send("wait", "notice", "5")
        #expect(notice["account"]?.string == "adele@contoso.com" && notice["status"] == enrolled["status"], "\(notice)")
        // A second managed account is refused (227).
        #expect(try mail.send("enroll", "ben@contoso.com")["status"]?.number == 227)
        let config = try mail.send("app-config", "adele@contoso.com")
        #expect(config["config"]?.array != nil, "\(config)")
        mail.finish()
        // Notes' manifest has no SDK: the service does not know it (Chat has the SDK now).
        let notes = try b.courier("Notes", ["hello", "enroll", "ben@contoso.com", "bye"]).courierLines()
        #expect(notes.first { $0["step"]?.string == "enroll" }?["error"]?.string == "notAllowed", "\(notes)")
    }
}
