import Foundation
import Testing

/// A person at a terminal: `mamlaunch run APP` on a pseudo-terminal, a short session typed
/// line by line, asserting what the screen shows.
@Suite("Sample apps: interactive mode", .serialized, .timeLimit(.minutes(2)))
struct InteractiveTests {
    @Test func mailShowsWhyAPasteIntoThePersonalAccountIsBlocked() throws {
        let broker = try Broker()
        defer { broker.stop() }
        let session = try TerminalSession(broker, "mail", user: "adele@contoso.com")
        try session.waitFor("acting as adele@contoso.com")
        try session.waitFor("mail> ")
        session.type("help")
        let help = try session.waitFor("mail> ")
        #expect(help.contains("paste") && help.contains("account work|personal|ACCOUNT"), "\(help)")
        session.type("copy \"Q3 forecast\"")
        try session.waitFor("Copied \"Q3 forecast\" as adele@contoso.com.")
        session.type("account personal")
        try session.waitFor("Now showing the personal account.")
        session.type("paste")
        let pasted = try session.waitFor("mail> ")
        #expect(pasted.contains("Blocked: paste into Mail."), "\(pasted)")
        #expect(pasted.contains("Why: ") && pasted.contains("Rule: "), "\(pasted)")
        #expect(!pasted.contains("Q3 forecast"), "\(pasted)")
        // Back at work, the same paste goes through.
        session.type("account work")
        try session.waitFor("Now showing adele@contoso.com.")
        session.type("paste")
        let again = try session.waitFor("mail> ")
        #expect(again.contains("Allowed: paste into Mail.") && again.contains("Pasted: Q3 forecast"), "\(again)")
        #expect(try session.quit() == 0)
    }

    @Test func chatPrintsItsPolicyAndRefusesASaveThePolicyForbids() throws {
        let broker = try Broker()
        defer { broker.stop() }
        let session = try TerminalSession(broker, "chat", user: "adele@contoso.com")
        try session.waitFor("chat> ")
        session.type("say \"lunch at noon\"")
        try session.waitFor("(1 messages)")
        session.type("policy")
        let policy = try session.waitFor("chat> ")
        #expect(policy.contains("Policy for adele@contoso.com"), "\(policy)")
        session.type("save dropbox")
        let save = try session.waitFor("chat> ")
        #expect(save.contains("Sharing blocked") || save.contains("Allowed: save the conversation"), "\(save)")
        session.type("nonsense")
        try session.waitFor("Unknown command \"nonsense\"")
        #expect(try session.quit() == 0)
    }
}
