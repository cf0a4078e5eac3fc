import Foundation
import MAMScript
import Testing

/// Each app's scripted mode through a real broker, sandboxed by `mamlaunch run`.
@Suite("Sample apps: scripted mode", .serialized, .timeLimit(.minutes(2)))
struct ScriptedModeTests {
    static let apps: [(name: String, bundle: String)] = [
        ("Chat", "com.example.chat"), ("Mail", "com.contoso.mail"), ("Docs", "com.contoso.docs"),
        ("Edge", "com.microsoft.msedge"), ("Dialer", "com.contoso.dialer"),
    ]

    @Test func everyAppAnswersAsItselfWithTheSDK() throws {
        let broker = try Broker()
        defer { broker.stop() }
        for (name, bundle) in Self.apps {
            let app = try ScriptedApp(broker, name)
            let hello = try app.send("hello")
            #expect(hello["app"]?.string == bundle, "\(name): \(hello)")
            #expect(hello["sdk"]?.bool == true, "\(name): \(hello)")
            let policy = try app.send("policy")
            #expect(policy["policy"] != nil, "\(name): \(policy)")
            #expect(app.finish() == 0, "\(name)")
        }
    }

    /// Issue 22: an account unenrolled with a wipe is signed out: `hello` no longer lists it.
    @Test func anAccountUnenrolledWithAWipeIsNoLongerSignedIn() throws {
        let broker = try Broker()
        defer { broker.stop() }
        let mail = try ScriptedApp(broker, "Mail", user: "adele@contoso.com")
        #expect(try mail.send("hello")["accounts"] == .array([.string("adele@contoso.com")]))
        _ = try mail.send("unenroll", "adele@contoso.com", "wipe")
        let after = try mail.send("hello")
        #expect(after["accounts"] == .array([]), "\(after)")
        #expect(mail.finish() == 0)
    }

    /// Issue 25: both interpreters read a command through the one `Script` (MAMScript), so Notes
    /// (no SDK) refuses a wrong word as Mail does; it used to send `unenroll ACCOUNT maybe` to
    /// the broker as a keep and `remediate ACCOUNT loudly` as a silent remediation.
    @Test func notesAndMailRefuseTheSameWrongWords() throws {
        let broker = try Broker()
        defer { broker.stop() }
        for name in ["Mail", "Notes"] {
            let app = try ScriptedApp(broker, name)
            let unenroll = try app.send("unenroll", "adele@contoso.com", "maybe")
            #expect(unenroll["error"]?.string == "usage: unenroll ACCOUNT wipe|keep", "\(name): \(unenroll)")
            let remediate = try app.send("remediate", "adele@contoso.com", "loudly")
            #expect(remediate["error"]?.string == "usage: remediate ACCOUNT silent|interactive", "\(name): \(remediate)")
            let wait = try app.send("wait", "nothing")
            #expect(wait["error"]?.string?.hasPrefix("nothing is not an event kind") == true, "\(name): \(wait)")
            #expect(app.finish() == 0, "\(name)")
        }
    }

    /// The runtime every SDK app links must not set off the sandbox's alarm by itself: a
    /// violation line is to mean the app did something it should not (libdispatch's syslog of a
    /// refused priority raise did so at every start).
    @Test func anSDKAppThatOnlyWorksRaisesNoSandboxViolation() throws {
        let broker = try Broker()
        defer { broker.stop() }
        for (name, _) in Self.apps {
            let app = try ScriptedApp(broker, name)
            #expect(try app.send("hello")["sdk"]?.bool == true, "\(name)")
            #expect(try app.send("policy")["policy"] != nil, "\(name)")
            #expect(app.finish() == 0, "\(name)")
            #expect(!app.standardError.contains("sandbox violation"), "\(name): \(app.standardError)")
        }
    }

    @Test func mailsPhoneLinkStartsTheDialerWhichTakesIt() throws {
        let broker = try Broker()
        defer { broker.stop() }
        let mail = try ScriptedApp(broker, "Mail")
        #expect(try mail.send("identity", "adele@contoso.com")["result"]?.string == "success")
        let call = try mail.send("open-url", "tel:5550100")
        #expect(call["decision"]?["allowed"]?.bool == true, "\(call)")
        mail.finish()
        // The Dialer was not running: the broker started it (no arguments, no terminal: it
        // serves) and delivered the URL, which the Dialer reported in its log.
        let log = broker.device + "/logs/com.contoso.dialer.log"
        var text = ""
        for _ in 0..<200 {
            text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if text.contains(#""event":"url""#) { break }
            usleep(50_000)
        }
        #expect(text.contains(#""event":"url""#) && text.contains("5550100"), "\(text)")
    }
}
