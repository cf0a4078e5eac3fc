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
        let start = try session.waitFor("mail> ")
        #expect(start.contains("acting as adele@contoso.com, managed by policy"), "\(start)")
        // The SDK's own log stays off the screen.
        #expect(!start.contains("mamkit"), "\(start)")
        let help = try session.command("help", until: "quit")
        #expect(help.contains("paste") && help.contains("account work|personal|ACCOUNT"), "\(help)")
        try session.command("copy \"Q3 forecast\"", until: "Copied \"Q3 forecast\" as adele@contoso.com.")
        try session.command("account personal", until: "Now showing the personal account.")
        let pasted = try session.command("paste", until: "Rule: ")
        #expect(pasted.contains("Blocked: paste into Mail.\n") || pasted.contains("Blocked: paste into Mail.\r\n"), "\(pasted)")
        #expect(pasted.contains("Why: Your organization's data cannot be pasted here."), "\(pasted)")
        #expect(!pasted.contains("Pasted:"), "\(pasted)")
        // Back at work, the same paste goes through.
        try session.command("account work", until: "Now showing adele@contoso.com.")
        let again = try session.command("paste", until: "Pasted: ")
        #expect(again.contains("Allowed: paste into Mail."), "\(again)")
        try session.waitFor("Q3 forecast")
        #expect(try session.quit() == 0)
    }

    @Test func chatPrintsItsPolicyAndGreetingAndShowsTheSharingBlockedMessage() throws {
        let broker = try Broker()
        defer { broker.stop() }
        let session = try TerminalSession(broker, "chat", user: "ben@contoso.com")
        // The greeting is the app configuration's (the tenant's "Chat for Finance").
        try session.waitFor("Chat says: Welcome to Finance chat.")
        try session.command("say \"lunch at noon\"", until: "(1 messages)")
        let policy = try session.command("policy", until: "may open from")
        #expect(policy.contains("Policy for ben@contoso.com: managed") && policy.contains("may save to: nowhere"), "\(policy)")
        let save = try session.command("save dropbox", until: "Rule: ")
        #expect(save.contains("Sharing blocked") && save.contains("Blocked: save the conversation to dropbox."), "\(save)")
        try session.command("nonsense", until: "Unknown command \"nonsense\"")
        try session.command("save", until: "usage: save LOCATION [ACCOUNT]")
        #expect(try session.quit() == 0)
    }
}
