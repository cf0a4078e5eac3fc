import MAMKit
import MAMSampleSupport

// Story: copy and paste. The app calls the pasteboard as usual; the broker decides, for the
// account on screen, whether the text may leave (copy) or come in (paste).

extension Mail {
    func copy(_ text: String) async throws {
        _ = try await app.pasteboard.copy(text)
        console.say("Copied \"\(text)\" as \(Explain.identity(app.policyManager.effectiveIdentity)).")
    }

    func paste() async throws {
        // The decision says whether the text on the pasteboard may be pasted here, and why not.
        let (decision, text) = try await app.pasteboard.paste()
        console.say(Explain.decision(decision, "paste into Mail") + (decision.allowed ? "\n  Pasted: \(text)" : ""))
    }
}
