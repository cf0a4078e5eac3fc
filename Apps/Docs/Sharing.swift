import MAMKit
import MAMSampleSupport

// Story: Open-in. Docs sends a file to another app as its owner's data; a file another app
// sends here arrives with its owner and is kept under that owner.

extension Docs {
    func send(_ name: String, to target: String) async throws {
        let (bytes, owner) = try await contents(name)
        // Shared as the owner's data: the scoped identity makes the broker decide for that account.
        let decision = try await IdentityScope.withAccount(owner ?? "") {
            try await app.openIn.share(bytes, name: name, contentType: "public.plain-text", to: target)
        }
        console.say(Explain.decision(decision, "send \(name) to \(target)"))
    }

    /// A document that arrived (Open-in): stored under its owner, when Docs could read it.
    func received(_ event: MAMEvent) async -> Bool {
        guard case let .document(d) = event else { return false }
        console.say(SampleSession.describe(event) ?? "")
        guard let plaintext = d.plaintext else { return true }
        do { try await write(d.name, plaintext, owner: d.owner) } catch { console.say(Explain.failure(error, "keep \(d.name)")) }
        return true
    }
}
