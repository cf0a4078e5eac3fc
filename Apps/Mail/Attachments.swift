import MAMKit
import MAMSampleSupport

// Story: attachments. Sending one is an Open-in; attaching one from another app is an import;
// a document another app sends to Mail arrives as an event (received, below).

extension Mail {
    /// The share sheet: every app that takes plain text, with what would happen there.
    func targets() async throws {
        let list = try await app.openIn.targets(for: "public.plain-text")
        console.say(list.isEmpty ? "No app takes plain text." : "Send to:\n" + list.map { "  \($0.bundleID): \($0.outcome.rawValue)" }.joined(separator: "\n"))
    }

    func sendAttachment(to target: String, name: String, text: String) async throws {
        // The broker decides with the policy of the account on screen and the target's.
        let decision = try await app.openIn.share(Array(text.utf8), name: name, contentType: "public.plain-text", to: target)
        console.say(Explain.decision(decision, "send \(name) to \(target)"))
    }

    func importAttachment(from source: String) async throws {
        let (decision, document) = try await app.openIn.importDocument(from: source, contentType: "public.plain-text")
        console.say(Explain.decision(decision, "import from \(source)"))
        if let document, let text = SampleSession.describe(.document(document)) { console.say(text) }
    }

    /// What arrives unasked: documents are shown with their owner; the rest is described.
    func received(_ event: MAMEvent) async -> Bool {
        guard case let .document(d) = event else { return false }
        console.say((SampleSession.describe(event) ?? "") + "\n  Mail shows it as \(Explain.identity(d.identity)).")
        return true
    }
}
