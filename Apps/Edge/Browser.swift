import Foundation
import MAMKit
import MAMSampleSupport

// Story: a browser that receives links. The broker delivers a link as the sender wrote it, or
// rewritten to a managed-browser scheme, or as its -intunemam twin when the sender is managed;
// the SDK hands the app the URL to load (the twin unwrapped) and the sender's account.

struct Browser: Sendable {
    let app: MAMApp
    let console: Console

    static func interactive() async -> Int32 {
        let console = Console(title: "Edge — the managed browser.", prompt: "edge> ")
        let app: MAMApp
        do { app = try await SampleSession.start(console, delegate: AppliesPolicyInPlace(console: console)) } catch {
            console.say("Edge could not start the MAM SDK: \(error)")
            return 1
        }
        let browser = Browser(app: app, console: console)
        SampleSession.watch(app, console) { await browser.received($0) }
        console.add("go", "URL", "Load a page here (it does not leave Edge).") { a in
            console.say("Loading \(try a.exactly(1)[0])")
        }
        console.add("open", "URL", "Open a URL in another app (mailto:, tel: ...).") { a in
            let url = try a.exactly(1)[0]
            console.say(Explain.decision(try await app.urls.open(url), "open \(url)"))
        }
        console.add("policy", "", "The policy that applies.") { _ in console.say(Explain.policy(app.policyManager.policy)) }
        console.add("whoami", "", "Who Edge acts as.") { _ in console.say(SampleSession.status(app)) }
        console.say(SampleSession.status(app))
        await console.run(lines: SampleSession.lines())
        app.stop()
        return 0
    }

    func received(_ event: MAMEvent) async -> Bool {
        guard case let .url(u) = event else { return false }
        // Load u.url (the twin unwrapped); u.delivered is what the broker sent.
        let page = u.url.hasPrefix("microsoft-edge-") ? String(u.url.dropFirst("microsoft-edge-".count)) : u.url
        console.say("Loading \(page) for \(u.sender ?? "an unmanaged app")" + (u.delivered == page ? "" : " (arrived as \(u.delivered))"))
        return true
    }
}
