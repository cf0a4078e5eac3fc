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

extension Mail {
    /// The account switcher offers only the accounts the admin allows (nil: any account).
    func allowedAccounts() async throws {
        let list = try await app.enrollment.allowedAccounts()
        console.say(list.map { "Accounts allowed on this device: \($0.joined(separator: ", "))." } ?? "Any account may sign in on this device.")
    }

    /// The user leaves for the home screen: the account on screen stays.
    func pause() {
        app.policyManager.pause()
        console.say("Mail is in the background.")
    }

    /// The user comes back: the same account, its policy still applied (or still not).
    func resume() async {
        switch await app.policyManager.resume() {
        case .success: console.say("Back in Mail.\n" + SampleSession.status(app))
        case .cancelled: console.say("The check was cancelled; Mail no longer shows the work account.\n" + SampleSession.status(app))
        case .failed, .notAllowed: console.say("The work account stays locked until its check is passed.")
        }
    }
}

extension Mail {
    /// The unified inbox: every signed-in account on one screen, the personal one too. The SDK
    /// is told the whole list (`setUIIdentities`); with the work account among others the screen
    /// is under the lock-down policy, not the work account's own: nothing is shared, pasted or
    /// saved out of it, links open only in the managed browser, and nothing comes in
    /// (docs/SEMANTICS.md §1.view).
    func showUnifiedInbox() async {
        var accounts: [String] = []
        let pm = app.policyManager
        for a in pm.signedInAccounts + [""] where !accounts.contains(where: { pm.isIdentity($0, equalTo: a) }) { accounts.append(a) }
        let names = accounts.map { $0.isEmpty ? "personal" : $0 }.joined(separator: ", ")
        let (result, decision) = await pm.setUIIdentities(accounts)
        switch result {
        case .success:
            let locked = pm.policy.isManaged
            console.say("Now showing every account together: \(names).\n"
                + (locked ? "A work account is on this screen beside others: the lock-down policy applies: nothing is shared, pasted or saved out of it."
                          : "No account here is managed: no policy applies."))
        case .notAllowed: console.say(decision.map { Explain.decision($0, "show \(names) together") } ?? "Showing \(names) together is not allowed here.")
        case .cancelled: console.say("The unified inbox was cancelled (conditional launch was not passed).")
        case .failed: console.say("The unified inbox failed.")
        }
    }
}
