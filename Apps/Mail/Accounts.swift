import MAMKit
import MAMSampleSupport

// Story: two accounts in one app. A multi-identity app tells the SDK which account is on screen
// (the UI identity); everything the user then does is decided for that account.

extension Mail {
    /// The user picks an account in the account switcher.
    func switchAccount(_ choice: String) async throws {
        // "work" is the managed account (managedAccountIds); "personal" the empty identity.
        let work = app.policyManager.managedAccounts.first
        if choice == "work" && work == nil { return console.say("No work account is signed in: `account adele@contoso.com` signs one in.") }
        let account = choice == "work" ? work ?? "" : choice == "personal" ? "" : choice
        // The one call that matters: the SDK asks the broker whether Mail may show this
        // account, then runs conditional launch (PIN, sign-in) for a managed one.
        let (result, decision) = await app.policyManager.setUIIdentity(account)
        switch result {
        case .success: console.say("Now showing \(account.isEmpty ? "the personal account" : account).\n" + SampleSession.status(app))
        case .notAllowed: console.say(decision.map { Explain.decision($0, "switch to \(choice)") } ?? "Switching to \(choice) is not allowed here.")
        case .cancelled: console.say("Switching to \(choice) was cancelled (conditional launch was not passed).")
        case .failed: console.say("Switching to \(choice) failed.")
        }
    }
}

/// Mail's policy delegate, given to the SDK at start (before the sign-in). The SDK asks for a
/// switch when data for another account arrives (a link or a document from a managed app): Mail
/// agrees and says so; an app with unsent work might answer `.cancelled`.
struct SwitchWhenAsked: PolicyDelegate {
    let console: Console

    func identitySwitchRequired(for account: String, reason: IdentitySwitchReason) async -> SwitchIdentityResult {
        console.say("Switching to \(account.isEmpty ? "personal" : account) to show what arrived (\(reason)).")
        return .success
    }

    /// A first policy arrived: Mail applies it at once instead of being restarted.
    func restartApplication() async -> Bool {
        console.say("A first policy arrived; Mail applies it without restarting.")
        return true
    }
}
