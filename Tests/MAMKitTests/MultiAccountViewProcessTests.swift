import Foundation
import MAMScript
import Testing

/// SEMANTICS §1.view through the processes: Mail (multi-identity) shows adele's inbox and the
/// personal account in one window, as a real broker decides (`setViewIdentities`), and Docs,
/// managed for adele, is the receiver. Seed 002 §Exit criteria ("Multi-account view": policy
/// applies on every such page); the headers (with one account managed, a lock-down policy, not
/// a merge): what adele's policy alone lets through is blocked from the mixed view.
@Suite("MAMKit: views of several accounts through the broker", .serialized, .timeLimit(.minutes(2)))
struct MultiAccountViewProcessTests {
    @Test func aViewOfAManagedAndAPersonalAccountIsLockedDownAndNothingLeavesIt() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let mail = try b.launch("Mail", user: "adele@contoso.com")
        let docs = try b.launch("Docs", user: "adele@contoso.com")
        // Adele's inbox alone: her policy (managed apps only) lets a copy paste into Docs.
        #expect(try mail.send("window", "inbox", "identity", "adele@contoso.com")["result"]?.string == "success")
        #expect(try mail.send("copy", "inbox text")["ok"]?.bool == true)
        let alone = try docs.send("paste")
        #expect(alone.outcome == "allowed" && alone["text"]?.string == "inbox text", "\(alone)")

        // The unified inbox: adele and personal together, decided by the broker.
        let unified = try mail.send("window", "unified", "identities", "adele@contoso.com,personal")
        #expect(unified["result"]?.string == "success" && unified.rule == "1.view" && unified.ruleName == "identityViewSet", "\(unified)")
        #expect(unified["windowAccounts"] == .array([.string("adele@contoso.com"), .string("")]), "\(unified)")
        #expect(unified["window"]?.isNull == true && unified["windowManaged"]?.bool == true, "\(unified)")
        // The inbox is still the key window; the unified one comes to the front.
        #expect(unified["key"]?.string == "inbox")
        #expect(try mail.send("window", "unified", "key")["result"]?.string == "success")

        // A copy from the view is adele's org data under the lock-down policy: no paste into Docs.
        #expect(try mail.send("copy", "unified text")["ok"]?.bool == true)
        let mixed = try docs.send("paste")
        #expect(mixed.outcome == "blocked" && mixed.rule == "4.3.2" && mixed["text"]?.string != "unified text", "\(mixed)")
        // Nor a share, which adele's inbox may make.
        let share = try mail.send("share", "com.contoso.docs", "com.adobe.pdf", "q3.pdf", "Q3 numbers")
        #expect(share["decision"]?["allowed"]?.bool == false && share.rule == "4.1.3" && share.ruleName == "sendNoneOpenInFiltered", "\(share)")
        let back = try mail.send("window", "inbox", "key")
        #expect(back["result"]?.string == "success" && back["identity"]?.string == "adele@contoso.com", "\(back)")
        let inboxShare = try mail.send("share", "com.contoso.docs", "com.adobe.pdf", "q3.pdf", "Q3 numbers")
        #expect(inboxShare["decision"]?["allowed"]?.bool == true, "\(inboxShare)")

        // The broker's audit names the view's accounts.
        let view = b.auditRecords.first { $0["channel"] as? String == "identity" && ($0["detail"] as? String)?.hasPrefix("view: ") == true }
        #expect(view?["rule"] as? String == "1.view", "\(b.auditRecords)")
        mail.finish()
        docs.finish()
    }

    /// A wipe of an account the key view shows ends the view, in the broker and in the kit:
    /// the app acts with no identity again, and its UI work is not refused for a view the
    /// broker no longer holds.
    @Test func aWipeOfAnAccountTheViewShowsEndsTheView() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let mail = try b.launch("Mail", user: "adele@contoso.com")
        #expect(try mail.send("window", "unified", "identities", "adele@contoso.com,personal")["result"]?.string == "success")
        try b.wipe("adele@contoso.com")
        #expect(try mail.send("wait", "wipe")["account"]?.string == "adele@contoso.com")
        let after = try mail.send("window", "unified")
        #expect(after["windowAccounts"]?.isNull == true && after["windowManaged"]?.bool == false, "\(after)")
        #expect(try mail.send("copy", "after the wipe")["ok"]?.bool == true)
        let pasted = try b.courier("Notes", ["hello", "paste", "bye"]).courierLines().first { $0["step"]?.string == "paste" }
        #expect(pasted?.outcome == "allowed" && pasted?["text"]?.string == "after the wipe", "\(String(describing: pasted))")
        mail.finish()
    }

    @Test func aSingleIdentityAppOrAnAccountNotSignedInCannotBeShownInAView() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let docs = try b.launch("Docs", user: "adele@contoso.com")
        let refused = try docs.send("window", "both", "identities", "adele@contoso.com,personal")
        #expect(refused["result"]?.string == "notAllowed" && refused.ruleName == "identityViewSingleIdentity", "\(refused)")
        docs.finish()
        let mail = try b.launch("Mail", user: "adele@contoso.com")
        let stranger = try mail.send("window", "both", "identities", "adele@contoso.com,ben@contoso.com")
        #expect(stranger["result"]?.string == "notAllowed" && stranger.ruleName == "identityNotSignedIn", "\(stranger)")
        #expect(stranger["windowAccounts"]?.isNull == true)
        mail.finish()
    }
}
