import Foundation
import MAMKit
import MAMSampleSupport

// Story: what the SDK asks of the app. A selective wipe deletes the account's data (here the
// conversation); a first policy asks for a restart, which Chat does itself, in place: it applies
// the new policy (the SDK has it already) and shows it. Answering false would leave the restart
// to the SDK side (the launcher would stop and start Chat).

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
        console.say("A first policy arrived; Chat applies it without restarting.")
        return true
    }
}

extension Chat {
    /// The user signs out: the SDK unenrolls the account and, with `wipe`, asks the delegate
    /// above to delete its data.
    func signOut() async {
        guard let account = app.policyManager.primaryAccount else { return console.say("Nobody is signed in.") }
        do {
            _ = try await app.enrollment.deregisterAndUnenroll(account, wipe: true)
            console.say("Signed out \(account).")
        } catch {
            console.say(Explain.failure(error, "sign out \(account)"))
        }
    }

    /// Events Chat reacts to itself: a new policy prints what changed for the user.
    func received(_ event: MAMEvent) async -> Bool {
        guard case .policyChanged = event else { return false }
        console.say("The policy changed.\n" + Explain.policy(app.policyManager.policy))
        return true
    }
}
