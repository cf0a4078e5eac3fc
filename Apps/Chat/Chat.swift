import Foundation
import MAMKit
import MAMSampleSupport

/// The interactive app: a conversation kept in the container, and the commands of each story.
struct Chat: Sendable {
    let app: MAMApp
    let console: Console
    /// The conversation, one message a line, in the app's container (its working directory).
    static let conversationFile = "conversation.txt"

    static func interactive() async -> Int32 {
        let console = Console(title: "Chat — a single-identity managed app.", prompt: "chat> ")
        let app: MAMApp
        do { app = try await SampleSession.start(console, delegate: ChatDelegate(console: console)) } catch {
            console.say("Chat could not start the MAM SDK: \(error)")
            return 1
        }
        let chat = Chat(app: app, console: console)
        // The policy delegate (Delegates.swift) went in with the SDK, before the sign-in; the
        // config delegate (Configuration.swift) before anything else can arrive.
        app.appConfig.setDelegate(ConfigWatcher(chat: chat))
        SampleSession.watch(app, console) { await chat.received($0) }
        chat.addCommands()
        console.say(SampleSession.status(app))
        await chat.showGreeting()
        await console.run(lines: SampleSession.lines())
        app.stop()
        return 0
    }

    func addCommands() {
        console.add("say", "TEXT", "Add a message to the conversation.") { a in
            try append(a.exactly(1)[0])
            console.say("(\(conversation.count) \(conversation.count == 1 ? "message" : "messages"))")
        }
        console.add("show", "", "The conversation.") { _ in
            console.say(conversation.isEmpty ? "(no messages yet)" : conversation.joined(separator: "\n"))
        }
        console.add("save", "LOCATION [ACCOUNT]", "Save the conversation (localDrive, oneDriveForBusiness, box...).") { try await save($0) }
        console.add("copy", "TEXT", "Copy a message.") { a in
            _ = try await app.pasteboard.copy(try a.exactly(1)[0])
            console.say("Copied.")
        }
        console.add("paste", "", "Paste into the message box.") { _ in
            let (decision, text) = try await app.pasteboard.paste()
            console.say(Explain.decision(decision, "paste into Chat") + (decision.allowed ? "\n  Pasted: \(text)" : ""))
        }
        console.add("policy", "", "Print the current policy.") { _ in console.say(Explain.policy(app.policyManager.policy)) }
        console.add("config", "", "The app configuration the admin set.") { _ in await showConfiguration() }
        console.add("signout", "", "Sign out, and remove the account's data (a selective wipe).") { _ in await signOut() }
        console.add("whoami", "", "Who Chat acts as.") { _ in console.say(SampleSession.status(app)) }
    }

    func append(_ message: String) throws {
        let text = (conversation + [message]).joined(separator: "\n") + "\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: Self.conversationFile), options: .atomic)
    }

    var conversation: [String] {
        ((try? String(contentsOfFile: Self.conversationFile, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }
}
