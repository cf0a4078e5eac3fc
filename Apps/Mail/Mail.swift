import MAMKit
import MAMSampleSupport

/// The interactive app: the SDK, the prompt, and the commands of each story.
struct Mail: Sendable {
    let app: MAMApp
    let console: Console

    static func interactive() async -> Int32 {
        let console = Console(title: "Contoso Mail — a multi-identity managed app.", prompt: "mail> ")
        let app: MAMApp
        do { app = try await SampleSession.start(console, delegate: SwitchWhenAsked(console: console)) } catch {
            console.say("Mail could not start the MAM SDK: \(error)")
            return 1
        }
        let mail = Mail(app: app, console: console)
        app.compliance.setDelegate(ComplianceWatcher(console: console))
        SampleSession.watch(app, console) { await mail.received($0) }
        mail.addCommands()
        console.say(SampleSession.status(app))
        await console.run(lines: SampleSession.lines())
        app.stop()
        return 0
    }

    func addCommands() {
        console.add("whoami", "", "Who Mail acts as, and whether that is managed.") { _ in console.say(SampleSession.status(app)) }
        console.add("account", "work|personal|ACCOUNT", "Switch the account on screen.") { try await switchAccount($0.exactly(1)[0]) }
        console.add("unified", "", "Show every account together (a unified inbox; a work account there locks the screen down).") { _ in await showUnifiedInbox() }
        console.add("policy", "", "The policy for the account on screen.") { _ in console.say(Explain.policy(app.policyManager.policy)) }
        console.add("copy", "TEXT", "Copy text from the mail on screen.") { try await copy($0.exactly(1)[0]) }
        console.add("paste", "", "Paste into the mail on screen.") { _ in try await paste() }
        console.add("targets", "", "The apps an attachment can be sent to.") { _ in try await targets() }
        console.add("send", "APP NAME TEXT", "Send a text attachment to APP (Open-in).") { a in
            let a = try a.exactly(3)
            try await sendAttachment(to: a[0], name: a[1], text: a[2])
        }
        console.add("import", "APP", "Attach a document imported from APP.") { try await importAttachment(from: $0.exactly(1)[0]) }
        console.add("link", "URL", "Open a link from a mail (web, mailto, tel...).") { try await openLink($0.exactly(1)[0]) }
        console.add("call", "NUMBER", "Call a phone number found in a mail.") { try await call($0.exactly(1)[0]) }
        console.add("sync", "ACCOUNT", "Fetch mail: a token, with app protection when required.") { try await syncMail($0.exactly(1)[0]) }
        console.add("allowed", "", "The accounts the organization allows on this device.") { _ in try await allowedAccounts() }
        console.add("away", "", "Leave Mail for the home screen (the app pauses).") { _ in pause() }
        console.add("back", "", "Come back to Mail (the app resumes; a work account may ask for its PIN again).") { _ in await resume() }
    }
}
