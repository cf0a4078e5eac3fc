import MAMKit
import MAMSampleSupport

// Story: app configuration. The admin sets name/value pairs for the app; Chat reads its greeting
// from them at launch and again whenever the service says they changed.

extension Chat {
    /// The key Chat reads; unset, Chat greets with its own words.
    static let greetingKey = "com.example.chat.greeting"

    func showGreeting() async {
        guard let account = app.policyManager.primaryAccount,
              let config = try? await app.appConfig.appConfig(for: account) else { return }
        // Several policies may set the key: `.any` takes one; hasConflict says whether they differ.
        if let greeting = config.stringValue(for: Self.greetingKey) {
            console.say("Chat says: \(greeting)" + (config.hasConflict(Self.greetingKey) ? " (the admin set more than one)" : ""))
        }
    }

    func showConfiguration() async {
        guard let account = app.policyManager.primaryAccount else {
            console.say("No managed account, so no app configuration.")
            return
        }
        do {
            let config = try await app.appConfig.appConfig(for: account)
            let pairs = config.fullData.flatMap { $0.filter { $0.key != AppConfig.defaultMarker }.map { "  \($0.key) = \($0.value)" } }.sorted()
            console.say(pairs.isEmpty ? "No app configuration for \(account)." : "App configuration for \(account):\n" + pairs.joined(separator: "\n"))
        } catch {
            console.say(Explain.failure(error, "read the app configuration"))
        }
    }
}

/// The service's "app config changed": read it again.
struct ConfigWatcher: AppConfigDelegate {
    let chat: Chat
    func appConfigDidChange(for account: String) async {
        chat.console.say("The admin changed Chat's configuration.")
        await chat.showGreeting()
    }
}
