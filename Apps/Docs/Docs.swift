import MAMKit
import MAMSampleSupport

/// The interactive app: a library of files in the container, and the commands of each story.
struct Docs: Sendable {
    let app: MAMApp
    let console: Console
    let library = Library()

    static func interactive() async -> Int32 {
        let console = Console(title: "Contoso Docs — a managed document app.", prompt: "docs> ")
        let app: MAMApp
        do { app = try await SampleSession.start(console, delegate: AppliesPolicyInPlace(console: console)) } catch {
            console.say("Docs could not start the MAM SDK: \(error)")
            return 1
        }
        let docs = Docs(app: app, console: console)
        SampleSession.watch(app, console) { await docs.received($0) }
        docs.addCommands()
        console.say(SampleSession.status(app))
        await console.run(lines: SampleSession.lines())
        app.stop()
        return 0
    }

    func addCommands() {
        console.add("list", "", "The files, with their owners.") { _ in list() }
        console.add("write", "NAME TEXT", "Write a file, owned by the account Docs runs under.") { a in
            let a = try a.exactly(2)
            try await write(a[0], Array(a[1].utf8), owner: app.policyManager.primaryAccount)
        }
        console.add("read", "NAME", "Show a file.") { try await read($0.exactly(1)[0]) }
        console.add("save", "NAME LOCATION [ACCOUNT]", "Save a copy of a file to a storage location.") { try await save($0) }
        console.add("open", "NAME LOCATION [ACCOUNT]", "Open a file from a storage location into the library.") { try await open($0) }
        console.add("send", "APP NAME", "Send a file to another app (Open-in).") { a in
            let a = try a.exactly(2)
            try await send(a[1], to: a[0])
        }
        console.add("policy", "", "The policy that applies.") { _ in console.say(Explain.policy(app.policyManager.policy)) }
        console.add("whoami", "", "Who Docs acts as.") { _ in console.say(SampleSession.status(app)) }
    }
}
