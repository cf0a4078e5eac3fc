import Foundation
import MAMScript
import Testing

/// MAMKit apps as real sandboxed processes against a real broker: what each channel answers is
/// the broker's decision, as its audit log records it.
@Suite("MAMKit channels between real apps", .serialized, .timeLimit(.minutes(2)))
struct ChannelProcessTests {
    @Test func aManagedMailCopiesAndEachPasteIsTheBrokersDecision() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let mail = try b.launch("Mail")
        let hello = try mail.send("hello")
        #expect(hello["app"]?.string == "com.contoso.mail" && hello["sdk"]?.bool == true)
        // A multi-identity app starts with no identity and no policy applied.
        #expect(hello["identity"]?.isNull == true, "\(hello)")
        #expect(try mail.send("policy")["managed"]?.bool == false)
        let switched = try mail.send("identity", "adele@contoso.com")
        #expect(switched["result"]?.string == "success" && switched["identity"]?.string == "adele@contoso.com", "\(switched)")
        #expect(try mail.send("policy")["managed"]?.bool == true)
        let copy = try mail.send("copy", "Q3 forecast: 4.2M")
        #expect(copy["ok"]?.bool == true && copy["change"]?.number == 1, "\(copy)")
        mail.finish()

        let docs = try b.launch("Docs")
        let allowed = try docs.send("paste")
        docs.finish()
        #expect(allowed.outcome == "allowed" && allowed["text"]?.string == "Q3 forecast: 4.2M", "\(allowed)")

        let notes = try b.courier("Notes", ["hello", "paste", "bye"]).courierLines()
        let blocked = notes.first { $0["step"]?.string == "paste" }
        #expect(blocked?.outcome == "blocked")

        // What the kit said is what the broker decided and audited.
        let audited = b.auditRecords.filter { $0["channel"] as? String == "paste" }
        #expect(audited.map { $0["outcome"] as? String } == ["allowed", "blocked"])
        #expect(audited.first?["ruleName"] as? String == allowed.ruleName && allowed.ruleName == "pasteOrgManagedTarget", "\(allowed)")
        #expect(audited.first?["decidedAt"] as? String == allowed.decidedAt && allowed.decidedAt != nil, "\(audited)")
    }
}
