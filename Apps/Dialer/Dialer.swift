import Foundation
import MAMKit
import MAMSampleSupport

// Story: a dialer that receives numbers. tel: calls at once; telprompt: asks first. The URL
// the app gets is the twin unwrapped (tel-intunemam: -> tel:).

struct Dialer: Sendable {
    let app: MAMApp
    let console: Console

    static func interactive() async -> Int32 {
        let console = Console(title: "Dialer — takes tel: and telprompt: links.", prompt: "dialer> ")
        let app: MAMApp
        do { app = try await SampleSession.start(console, delegate: AppliesPolicyInPlace(console: console)) } catch {
            console.say("Dialer could not start the MAM SDK: \(error)")
            return 1
        }
        let dialer = Dialer(app: app, console: console)
        SampleSession.watch(app, console) { await dialer.received($0) }
        console.add("dial", "NUMBER", "Call a number typed on the keypad.") { a in console.say("Calling \(try a.exactly(1)[0]) ...") }
        console.add("whoami", "", "Who Dialer acts as.") { _ in console.say(SampleSession.status(app)) }
        console.say(SampleSession.status(app))
        await console.run(lines: SampleSession.lines())
        app.stop()
        return 0
    }

    func received(_ event: MAMEvent) async -> Bool {
        guard case let .url(u) = event else { return false }
        let (scheme, number) = Self.split(u.url)
        switch scheme {
        case "tel": console.say("Calling \(number) (from \(u.sender ?? "an unmanaged app")) ...")
        case "telprompt": console.say("Call \(number)? (asked by \(u.sender ?? "an unmanaged app"))")
        default: console.say("Dialer does not handle \(u.url).")
        }
        return true
    }

    /// "tel:+1 555 0100" -> ("tel", "+1 555 0100"); a twin's suffix is dropped.
    static func split(_ url: String) -> (scheme: String, number: String) {
        guard let colon = url.firstIndex(of: ":") else { return ("", url) }
        var scheme = url[..<colon].lowercased()
        if scheme.hasSuffix("-intunemam") { scheme.removeLast("-intunemam".count) }
        return (scheme, String(url[url.index(after: colon)...]).removingPercentEncoding ?? "")
    }
}
