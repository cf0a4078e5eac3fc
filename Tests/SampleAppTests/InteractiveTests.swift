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

    /// Seed 002 §Exit criteria, "Multi-account view": policy applies on the page that shows
    /// both accounts, as the lock-down policy: what the work account alone may paste into
    /// Docs (managed for adele), the unified inbox may not.
    @Test func mailsUnifiedInboxShowsBothAccountsUnderTheLockDownPolicy() throws {
        let broker = try Broker()
        defer { broker.stop() }
        let docs = try ScriptedApp(broker, "Docs", user: "adele@contoso.com")
        let session = try TerminalSession(broker, "mail", user: "adele@contoso.com")
        try session.waitFor("mail> ")
        let unified = try session.command("unified", until: "saved out of it.")
        #expect(unified.contains("Now showing every account together: adele@contoso.com, personal."), "\(unified)")
        try session.command("copy \"Q3 forecast\"", until: "Copied \"Q3 forecast\" as adele@contoso.com.")
        let locked = try docs.send("paste")
        #expect(locked["decision"]?["outcome"]?.string == "blocked" && locked["decision"]?["rule"]?.string == "4.3.2", "\(locked)")
        // The work account alone: the same copy pastes into Docs.
        try session.command("account work", until: "Now showing adele@contoso.com.")
        try session.command("copy \"Q3 forecast\"", until: "Copied \"Q3 forecast\" as adele@contoso.com.")
        let open = try docs.send("paste")
        #expect(open["decision"]?["allowed"]?.bool == true && open["text"]?.string == "Q3 forecast", "\(open)")
        #expect(try session.quit() == 0)
        #expect(docs.finish() == 0)
    }

    // Seed 000 §Implement Allowed Accounts; seed 002 §Exit criteria, "Managed pause".
    @Test func mailSaysWhichAccountsAreAllowedAndComesBackFromThePauseOnTheSameAccount() throws {
        let broker = try Broker()
        defer { broker.stop() }
        let session = try TerminalSession(broker, "mail", user: "adele@contoso.com")
        try session.waitFor("mail> ")
        try session.command("allowed", until: "Any account may sign in on this device.")
        try session.command("account work", until: "Now showing adele@contoso.com.")
        try session.command("away", until: "Mail is in the background.")
        let back = try session.command("back", until: "managed by policy")
        #expect(back.contains("Back in Mail.") && back.contains("adele@contoso.com"), "\(back)")
        #expect(try session.quit() == 0)
    }

    /// Issue 22: text copied in Notes (no SDK, so never the organization's) pasted into Ben's
    /// Chat is refused by Chat's own clipboard level (4.3.3), which is what the user reads, not
    /// that it is the organization's data.
    @Test func chatSaysWhyPersonalTextIsNotPastedIn() throws {
        let broker = try Broker()
        defer { broker.stop() }
        let notes = try ScriptedApp(broker, "Notes")
        #expect(try notes.send("copy", "lunch at noon")["ok"]?.bool == true)
        #expect(notes.finish() == 0)
        let session = try TerminalSession(broker, "chat", user: "ben@contoso.com")
        try session.waitFor("Chat says: ")
        let pasted = try session.command("paste", until: "Rule: ")
        #expect(pasted.contains("Blocked: paste into Chat."), "\(pasted)")
        #expect(pasted.contains("Why: this app's policy does not take text pasted from that app (the text is not your organization's)."), "\(pasted)")
        #expect(pasted.contains("The paste reads instead: \"Your organization's data cannot be pasted here.\""), "\(pasted)")
        #expect(!pasted.contains("Why: Your organization's data"), "\(pasted)")
        #expect(try session.quit() == 0)
    }

    @Test func chatPrintsItsPolicyAndGreetingAndShowsTheSharingBlockedMessage() throws {
        let broker = try Broker()
        defer { broker.stop() }
        let session = try TerminalSession(broker, "chat", user: "ben@contoso.com")
        // The greeting is the app configuration's (the tenant's "Chat for Finance").
        try session.waitFor("Chat says: Welcome to Finance chat.")
        try session.command("say \"lunch at noon\"", until: "(1 message)")
        try session.command("say \"at the usual place\"", until: "(2 messages)")
        let policy = try session.command("policy", until: "may open from")
        #expect(policy.contains("Policy for ben@contoso.com: managed") && policy.contains("may save to: nowhere"), "\(policy)")
        // The levels that decide sharing, as the admin set them (issue 22: none were shown).
        #expect(policy.contains("send org data to: none") && policy.contains("receive data from: none") && policy.contains("clipboard: blocked"),
                "\(policy)")
        // The configuration as the admin set it: the tenant default's values, not the service's
        // marker of which dictionary is the default.
        let config = try session.command("config", until: "com.example.chat.greeting")
        #expect(config.contains("com.contoso.supportURL = https://help.contoso.com") && !config.contains("__IsDefault"), "\(config)")
        let save = try session.command("save dropbox", until: "Rule: ")
        #expect(save.contains("Sharing blocked") && save.contains("Blocked: save the conversation to dropbox."), "\(save)")
        try session.command("nonsense", until: "Unknown command \"nonsense\"")
        try session.command("save", until: "usage: save LOCATION [ACCOUNT]")
        // Signing out wipes the account's data: the wipe delegate deletes the conversation.
        try session.command("signout", until: "Wiping ben@contoso.com's data: the conversation is deleted.")
        try session.command("show", until: "(no messages yet)")
        #expect(try session.quit() == 0)
    }
}

@Suite("Sample apps: interactive mode, the others", .serialized, .timeLimit(.minutes(2)))
struct MoreInteractiveTests {
    @Test func docsKeepsOwnersAndSavesWhereThePolicyAllows() throws {
        let broker = try Broker()
        defer { broker.stop() }
        let session = try TerminalSession(broker, "docs", user: "adele@contoso.com")
        try session.waitFor("docs> ")
        // Its help lists what it does: Docs has no clipboard command, and its example uses none.
        let help = try session.command("help", until: "double quotes")
        #expect(!help.split(whereSeparator: \.isNewline).contains { $0.trimmingCharacters(in: .whitespaces).hasPrefix("copy") }, "\(help)")
        try session.command("write plan.txt \"Q3 plan\"", until: "Wrote plan.txt, owned by adele@contoso.com, encrypted.")
        try session.command("list", until: "plan.txt  owner: adele@contoso.com")
        try session.command("read plan.txt", until: "Q3 plan")
        let dropbox = try session.command("save plan.txt dropbox", until: "Rule: ")
        #expect(dropbox.contains("Blocked: save plan.txt to dropbox."), "\(dropbox)")
        let onedrive = try session.command("save plan.txt oneDriveForBusiness", until: "Rule: ")
        #expect(onedrive.contains("Allowed: save plan.txt to oneDriveForBusiness."), "\(onedrive)")
        try session.command("read ../etc", until: "a file name, without /")
        #expect(try session.quit() == 0)
    }

    @Test func mailSwitchesToTheAccountADocumentBelongsTo() throws {
        let broker = try Broker()
        defer { broker.stop() }
        let mail = try TerminalSession(broker, "mail", user: "adele@contoso.com")
        try mail.waitFor("mail> ")
        try mail.command("account personal", until: "Now showing the personal account.")
        let docs = try TerminalSession(broker, "docs", user: "adele@contoso.com")
        try docs.waitFor("docs> ")
        try docs.command("write plan.txt \"Q3 plan\"", until: "encrypted.")
        let sent = try docs.command("send com.contoso.mail plan.txt", until: "Rule: ")
        #expect(sent.contains("send plan.txt to com.contoso.mail"), "\(sent)")
        // Adele's document arrives while the personal account is on screen: the SDK asks Mail
        // to switch, Mail agrees, and shows it as hers.
        try mail.waitFor("Switching to adele@contoso.com to show what arrived")
        try mail.waitFor("Mail shows it as adele@contoso.com.")
        #expect(try docs.quit() == 0)
        #expect(try mail.quit() == 0)
    }

    @Test func edgeTakesTheWebLinksAPolicySendsToTheManagedBrowser() throws {
        let broker = try Broker()
        defer { broker.stop() }
        let edge = try TerminalSession(broker, "edge", user: "ben@contoso.com")
        try edge.waitFor("edge> ")
        // Ben's policy (locked-down) requires the managed browser and blocks phone calls.
        let mail = try TerminalSession(broker, "mail", user: "ben@contoso.com")
        try mail.waitFor("mail> ")
        let link = try mail.command("link https://intranet.contoso.com/q3", until: "Rule: ")
        #expect(link.contains("Redirected: open https://intranet.contoso.com/q3 went as microsoft-edge-https://intranet.contoso.com/q3"), "\(link)")
        try edge.waitFor("Loading https://intranet.contoso.com/q3 for ben@contoso.com")
        let call = try mail.command("call 5550100", until: "Rule: ")
        #expect(call.contains("Blocked: open tel:5550100.") && call.contains("Why: "), "\(call)")
        #expect(try mail.quit() == 0)
        #expect(try edge.quit() == 0)
    }

    @Test func theDialerTakesAPhoneNumberFromMail() throws {
        let broker = try Broker()
        defer { broker.stop() }
        let dialer = try TerminalSession(broker, "dialer")
        try dialer.waitFor("dialer> ")
        try dialer.command("dial 5550100", until: "Calling 5550100 ...")
        let mail = try TerminalSession(broker, "mail", user: "adele@contoso.com")
        try mail.waitFor("mail> ")
        let call = try mail.command("call \"555 0100\"", until: "Rule: ")
        #expect(call.contains("open tel:5550100"), "\(call)")
        try dialer.waitFor("Calling 5550100 (from adele@contoso.com)")
        #expect(try mail.quit() == 0)
        #expect(try dialer.quit() == 0)
    }
}
