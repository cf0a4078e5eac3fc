import MAMKit
import MAMSampleSupport

// Story: links in a mail. Mail opens them like any app would; the SDK and the broker send web
// links to the managed browser when the policy requires it, and phone numbers to the dialer
// the policy names.

extension Mail {
    func openLink(_ url: String) async throws {
        // Asked first, as an app would to grey out a link: the engine's answer for this account.
        let preview = app.policyManager.policy.urlDecision(url)
        if !preview.allowed { console.say("(The policy says this link will not open: \(preview.rule).)") }
        let decision = try await app.urls.open(url)
        console.say(Explain.decision(decision, "open \(url)"))
    }

    func call(_ number: String) async throws {
        try await openLink("tel:" + number.filter { !$0.isWhitespace })
    }
}
