import Foundation
import Glibc
import MAMKit
import MAMKitScripting
import MAMPolicy

/// What every SDK sample app does first in interactive mode: start the SDK, sign in the account
/// `mamlaunch run --user` names, and say who the app is and which policy applies.
public enum SampleSession {
    /// The account the launcher was asked to start the app under (`--user`), if any.
    public static var requestedAccount: String? {
        ProcessInfo.processInfo.environment["MAMLAB_ACCOUNT"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Starts the SDK (`MAMApp.start`), installs the app's policy delegate, then signs in and
    /// shows `account` (or `--user`'s). The delegate goes in before the sign-in: enrolling
    /// brings a first policy, and with it the SDK's restart request.
    public static func start(_ console: Console, delegate: any PolicyDelegate, account: String? = requestedAccount) async throws -> MAMApp {
        // The SDK logs to standard error, which is the user's screen here: keep its log in the
        // container instead, where `mamkit.log` can be read after the session.
        let log = open("mamkit.log", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        if log >= 0 {
            dup2(log, 2)
            close(log)
        }
        console.greet()
        // The delegate goes in with the start: a launch that enrolls (AutoEnrollOnLaunch) is
        // asked to restart before anything else happens.
        let app = try await MAMApp.start(policyDelegate: delegate)
        let pm = app.policyManager
        if let account {
            // A user who signs in: enroll the account (the SDK's registerAndEnroll), then put it
            // on screen; the broker decides whether this app may act under it.
            if app.integratesSDK, !pm.signedInAccounts.contains(where: { pm.isIdentity($0, equalTo: account) }) {
                if let notice = try? await app.enrollment.registerAndEnroll(account), !notice.didSucceed {
                    console.say("Signing in \(account) did not enroll it: status \(notice.code)\(notice.status.map { " (\($0))" } ?? "").")
                }
            }
            let (result, decision) = await pm.setUIIdentity(account == "personal" ? "" : account)
            if result != .success {
                console.say("Could not switch to \(account): \(result.name)" + (decision.map { "\n" + Explain.decision($0, "act as \(account)") } ?? ""))
            }
        }
        return app
    }

    /// Who the app is, who it acts as, and whether it is managed: the line after the title.
    public static func status(_ app: MAMApp) -> String {
        let pm = app.policyManager
        let policy = pm.policy
        // Each account once, however the SDK lists it.
        var accounts: [String] = []
        for a in pm.signedInAccounts where !accounts.contains(where: { pm.isIdentity($0, equalTo: a) }) { accounts.append(a) }
        return """
        App \(app.bundleID)\(app.integratesSDK ? "" : " (no SDK)"); acting as \(Explain.identity(pm.effectiveIdentity)), \
        \(policy.isManaged ? "managed by policy" : "not managed").
        Signed in: \(accounts.isEmpty ? "nobody" : accounts.joined(separator: ", ")).
        """
    }

    /// Runs the app in the mode it was started in: the scripted mode and the broker-started mode
    /// are MAMKitScripting's; the interactive one is `interactive`.
    public static func main(app name: String, interactive: @escaping @Sendable () async -> Int32) async -> Int32 {
        switch SampleMode.current(app: name) {
        case .scripted: return await ScriptedApp.run()
        case .serve: return await ScriptedApp.run(serveAfterInput: true)
        case .interactive: return await interactive()
        }
    }
}

/// The policy delegate of the sample apps that need no more: a first policy applies at once,
/// so the app answers the SDK's restart request by restarting itself, in place.
public struct AppliesPolicyInPlace: PolicyDelegate {
    let console: Console
    public init(console: Console) { self.console = console }

    public func restartApplication() async -> Bool {
        console.say("A first policy arrived; the app applies it without restarting.")
        return true
    }
}

extension SampleSession {
    /// Prints what arrives unasked. `handle` is the app's own reaction; it returns false for
    /// the events it leaves to the plain description here.
    public static func watch(_ app: MAMApp, _ console: Console, handle: @escaping @Sendable (MAMEvent) async -> Bool = { _ in false }) {
        Task {
            for await event in app.events {
                if await handle(event) { continue }
                if let text = describe(event) { console.say(text) }
            }
        }
    }

    /// An event in a sentence.
    public static func describe(_ event: MAMEvent) -> String? {
        switch event {
        case let .url(u):
            return "A link arrived from \(u.sender ?? "an unmanaged app"): \(u.url)" + (u.delivered == u.url ? "" : " (delivered as \(u.delivered))")
        case let .document(d):
            let owner = d.owner.map { "\($0)'s data" } ?? "personal data"
            let text = d.plaintext.map { String(decoding: $0.prefix(200), as: UTF8.self) }
            return "A document arrived (\(d.via.rawValue)): \(d.name), \(d.contentType), \(owner)"
                + (text.map { ":\n  \($0)" } ?? ", encrypted: this app cannot read it.")
        case let .enrollment(n):
            return "The MAM service: \(n.kind) for \(n.account), status \(n.code)\(n.status.map { " (\($0))" } ?? "")."
        case .restart: return nil  // the policy delegate's restartApplication has said what it does
        case let .wipe(account, completed): return "\(account)'s data was wiped\(completed ? "" : " (incompletely)")."
        case let .appConfigChanged(account): return "New app configuration for \(account)."
        case let .signedIn(account): return "\(account) is signed in to this app now; it may be enrolled (enroll \(account))."
        case let .compliance(c): return "Compliance for \(c.account): \(c.status). \(c.title) \(c.message)"
        case .policyChanged: return nil
        case let .allowedAccountsChanged(list):
            return "The accounts allowed on this device are now: \(list.map { $0.joined(separator: ", ") } ?? "any account")."
        case let .launchCheck(n):
            switch n.action {
            case .passed: return "\(n.account)'s data is open again: the device passes the launch checks."
            case .warn: return "Warning for \(n.account): \(n.message) (\(n.detail))"
            case .block: return "\(n.account)'s data is blocked in this app: \(n.message) (\(n.detail))"
            }
        }
    }

    /// Reads the interactive mode's lines (a thread of its own: a blocking read must not hold a task).
    public static func lines() -> AsyncStream<String> { StandardInput.lines() }
}
