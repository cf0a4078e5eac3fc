import Foundation
import MAMKit
import MAMSampleSupport

// Story: what the SDK asks of the app. A selective wipe deletes the account's data (here the
// conversation); a restart is needed when a first policy arrives, and Chat leaves it to the SDK.

struct ChatDelegate: PolicyDelegate {
    let console: Console

    func wipeData(for account: String) async -> Bool {
        // Only this account's data: the conversation. Returning false reports an incomplete wipe.
        let gone = (try? FileManager.default.removeItem(atPath: Chat.conversationFile)) != nil
            || !FileManager.default.fileExists(atPath: Chat.conversationFile)
        console.say("Wiping \(account)'s data: the conversation is \(gone ? "deleted" : "NOT deleted").")
        return gone
    }

    func restartApplication() async -> Bool {
        // false: Chat does not restart itself; the SDK side (the launcher) restarts it.
        console.say("A new policy needs a restart; Chat lets the SDK restart it.")
        return false
    }
}

extension Chat {
    /// Events Chat reacts to itself: a new policy prints what changed for the user.
    func received(_ event: MAMEvent) async -> Bool {
        guard case .policyChanged = event else { return false }
        console.say("The policy changed.\n" + Explain.policy(app.policyManager.policy))
        return true
    }
}
