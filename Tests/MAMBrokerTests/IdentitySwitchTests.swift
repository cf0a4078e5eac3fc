import Foundation
import MAMTestSupport
import Testing

/// A multi-identity app that switches identity re-emits what it holds under the identity it
/// declares, as the real SDK tags it (docs/SANDBOX.md, "What it does not protect against"):
/// the app is trusted with the org data it is given, and the audit shows every step.
@Suite("An identity switch re-tags what the app sends next", .serialized, .hangGuard)
struct IdentitySwitchTests {
    static let adele = "adele@contoso.com"

    func paste(_ steps: [[String: Any]]) -> [String: Any]? { steps.first { $0["step"] as? String == "paste" } }

    @Test func orgTextCopiedAgainUnderThePersonalIdentityIsPersonal() throws {
        let b = try BrokerHarness()
        defer { b.stop() }
        // The control: adele's text, copied as adele, does not reach Notes (no SDK) readable.
        _ = try b.run("Mail", user: Self.adele, ["hello", "identity", Self.adele, "copy", "Q3 numbers", "bye"])
        let refused = paste(try b.run("Notes", ["hello", "paste", "bye"]))
        #expect(refused?["text"] as? String != "Q3 numbers", "the policy keeps adele's text from Notes: \(refused ?? [:])")
        // The same instance reads it back, switches to personal and copies it again.
        let mail = try b.run("Mail", user: Self.adele, ["hello", "identity", Self.adele, "copy", "Q3 numbers", "paste",
                                                        "identity", "personal", "copy", "Q3 numbers", "bye"])
        #expect(paste(mail)?["text"] as? String == "Q3 numbers", "\(mail)")
        #expect(mail.filter { $0["step"] as? String == "identity" }.allSatisfy { ($0["decision"] as? [String: Any])?["allowed"] as? Bool == true }, "\(mail)")
        let arrived = paste(try b.run("Notes", ["hello", "paste", "bye"]))
        #expect(arrived?["text"] as? String == "Q3 numbers", "re-emitted as personal, it is personal data: \(arrived ?? [:])")
        // Each step is on the audit: the switch from adele to personal, and the paste from Mail as personal.
        let records = b.auditRecords
        #expect(records.contains { r in
            r["channel"] as? String == "identity" && (r["source"] as? [String: Any])?["identity"] as? String == Self.adele
                && (r["target"] as? [String: Any])?["identity"] as? String == "personal"
        }, "the switch is audited")
        #expect(records.last { $0["channel"] as? String == "paste" }.map { r in
            (r["source"] as? [String: Any])?["identity"] as? String == "personal" && (r["source"] as? [String: Any])?["app"] as? String == "com.contoso.mail"
        } == true, "the paste names Mail as personal")
    }
}
