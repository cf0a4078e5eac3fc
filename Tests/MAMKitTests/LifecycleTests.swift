import Foundation
import Glibc
import MAMScript
import Testing

/// Seed 002's lifecycle table through real processes: pausing and resuming keep the identity
/// on screen and its policy state; a killed app restarts under the identity it showed.
@Suite("MAMKit: the app lifecycle (seed 002)", .serialized, .timeLimit(.minutes(2)))
struct LifecycleTests {
    /// The app's process as the host sees it: the launcher's child (inside its sandbox the app
    /// is pid 1 of its own namespace, a number that means another process out here).
    func pid(_ app: ScriptedProcess) throws -> Int32 {
        _ = try app.send("hello")
        let launcher = app.process.processIdentifier
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in entries {
            guard let pid = Int32(entry), pid > 1,
                  let status = try? String(contentsOfFile: "/proc/\(entry)/status", encoding: .utf8) else { continue }
            let parent = status.split(separator: "\n").first { $0.hasPrefix("PPid:") }?.split(separator: "\t").last
            if parent.flatMap({ Int32($0.trimmingCharacters(in: .whitespaces)) }) == launcher { return pid }
        }
        throw KitTestError("no app process under launcher \(launcher)")
    }

    @Test func pauseAndResumeKeepTheShownIdentitysPolicyState() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let mail = try b.launch("Mail")
        let p = try pid(mail)
        for (identity, managed) in [("adele@contoso.com", true), ("personal", false)] {
            #expect(try mail.send("identity", identity)["result"]?.string == "success")
            #expect(try mail.send("policy")["managed"]?.bool == managed)
            // Paused (the app's process stops, as on the home screen), then resumed.
            #expect(kill(p, SIGSTOP) == 0)
            usleep(100_000)
            #expect(kill(p, SIGCONT) == 0)
            #expect(try mail.send("policy")["managed"]?.bool == managed, "\(identity) after resume")
            // And the broker still decides under it: org data stays in.
            let copy = try mail.send("copy", "after resume as \(identity)")
            #expect(copy["ok"]?.bool == true)
            let notes = try b.courier("Notes", ["hello", "paste", "bye"]).courierLines().first { $0["step"]?.string == "paste" }
            #expect(notes?.outcome == (managed ? "blocked" : "allowed"), "\(identity): \(String(describing: notes))")
        }
        mail.finish()
    }

    @Test func aKilledAppRestartsUnderTheIdentityItShowedWhenItsContainerKeptIt() throws {
        let b = try KitBroker()
        defer { b.stop() }
        // The app keeps the identity it shows in its container. The default container is a
        // tmpfs that goes with the app: a restarted Mail shows no identity, and no policy
        // applies until it shows managed data again (seed 002: "if the app resumes on a screen
        // with the unmanaged account's data, policy isn't applied").
        let mail = try b.launch("Mail")
        #expect(try mail.send("identity", "adele@contoso.com")["result"]?.string == "success")
        #expect(kill(try pid(mail), SIGKILL) == 0)
        _ = mail.finish()
        let fresh = try b.launch("Mail")
        #expect(try fresh.send("hello")["identity"]?.isNull == true)
        #expect(try fresh.send("policy")["managed"]?.bool == false)
        #expect(try fresh.send("identity", "adele@contoso.com")["result"]?.string == "success")
        #expect(try fresh.send("policy")["managed"]?.bool == true)
        fresh.finish()
        // With a container kept on disk, it comes back under the identity it showed.
        // (This once failed every time: an on-disk container could not be bound into the app's
        // namespace. It passes alone; under a loaded machine the restored identity was once
        // missing, not yet understood, hence intermittent.)
        withKnownIssue("the restored identity is sometimes missing under heavy load", isIntermittent: true) {
            for (identity, shown, managed) in [("adele@contoso.com", "adele@contoso.com", true), ("personal", "", false)] {
                let mail = try b.launch("Mail", keepContainer: true)
                #expect(try mail.send("identity", identity)["result"]?.string == "success")
                #expect(kill(try pid(mail), SIGKILL) == 0)
                _ = mail.finish()
                let again = try b.launch("Mail", keepContainer: true)
                let hello = try again.send("hello")
                #expect(hello["identity"]?.string == shown, "\(identity): \(hello)")
                #expect(try again.send("policy")["managed"]?.bool == managed, "\(identity) after restart")
                again.finish()
            }
        }
    }

    @Test func aMultiIdentityAppStartsWithNoIdentityAndNoPolicy() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let mail = try b.launch("Mail")
        let hello = try mail.send("hello")
        #expect(hello["identity"]?.isNull == true)
        let policy = try mail.send("policy")
        #expect(policy["managed"]?.bool == false && policy["policy"]?["isAppSharingAllowed"]?.bool == true)
        // Its policy for the enrolled account is there to ask for all the same.
        #expect(try mail.send("policy", "adele@contoso.com")["managed"]?.bool == true)
        #expect(try mail.send("policy", "ben@contoso.com")["managed"]?.bool == false)
        mail.finish()
        // A single-identity app acts under its enrolled account from the start.
        let docs = try b.launch("Docs")
        #expect(try docs.send("hello")["identity"]?.string == "adele@contoso.com")
        #expect(try docs.send("policy")["managed"]?.bool == true)
        docs.finish()
    }
}

/// The UI identity switch's results as the user and the broker make them.
@Suite("MAMKit: switching the UI identity", .serialized, .timeLimit(.minutes(2)))
struct IdentitySwitchTests {
    @Test func eachResultOfASwitch() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let mail = try b.launch("Mail")
        // The broker refuses an account Mail has not signed in: notAllowed, with its decision.
        let refused = try mail.send("identity", "ben@contoso.com")
        #expect(refused["result"]?.string == "notAllowed" && refused.outcome == "blocked" && refused.ruleName == "identityNotSignedIn", "\(refused)")
        // Four rules share section 1.identity: the answer and the audit name the one that decided, and where.
        let audited = b.auditRecord { $0["channel"] as? String == "identity" && $0["outcome"] as? String == "blocked" }
        #expect(audited?["ruleName"] as? String == "identityNotSignedIn", "\(audited ?? [:])")
        #expect(audited?["decidedAt"] as? String == refused.decidedAt
                && refused.decidedAt?.hasPrefix("Sources/MAMPolicy/Decisions/Identities.swift:") == true, "\(refused) vs \(audited ?? [:])")
        // The user cancels conditional launch (adele's policy asks for an access check):
        // cancelled, and the identity stays as it was.
        #expect(try mail.send("identity", "personal")["result"]?.string == "success")
        #expect(try mail.send("delegate", "conditional-launch", "cancel")["ok"]?.bool == true)
        let cancelled = try mail.send("identity", "adele@contoso.com")
        #expect(cancelled["result"]?.string == "cancelled" && cancelled["identity"]?.string == "", "\(cancelled)")
        #expect(try mail.send("policy")["managed"]?.bool == false)
        // And the broker went back with it: a copy now is personal data.
        #expect(try mail.send("copy", "personal note")["ok"]?.bool == true)
        let paste = try b.courier("Notes", ["hello", "paste", "bye"]).courierLines().first { $0["step"]?.string == "paste" }
        #expect(paste?.outcome == "allowed")
        #expect(try mail.send("delegate", "conditional-launch", "pass")["ok"]?.bool == true)
        #expect(try mail.send("identity", "adele@contoso.com")["result"]?.string == "success")
        mail.finish()
    }

    @Test func aRefusedSwitchKeepsTheIdentityWhenADocumentArrives() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let mail = try b.launch("Mail")
        #expect(try mail.send("identity", "personal")["result"]?.string == "success")
        #expect(try mail.send("delegate", "switch", "refuse")["ok"]?.bool == true)
        let docs = try b.launch("Docs")
        #expect(try docs.send("share", "com.contoso.mail", "com.adobe.pdf", "r.pdf", "report").outcome == "switched")
        let got = try mail.send("wait", "document")
        #expect(got["identity"]?.string == "" && got["owner"]?.string == "adele@contoso.com", "\(got)")
        // Issue 19: nothing of Adele's document reaches the personal identity (it arrived readable).
        #expect(got["readable"]?.bool == false && got["size"]?.number == 0, "\(got)")
        docs.finish()
        mail.finish()
    }
}

/// The restart delegate (SDK-API §5, issue 12): after a first policy an app that leaves the
/// restart to the SDK is started again by its launcher; one that restarts itself runs on.
@Suite("MAMKit: the restart after a first policy", .serialized, .timeLimit(.minutes(2)))
struct RestartDelegateTests {
    func restarted(_ b: KitBroker) -> Bool {
        for _ in 0..<100 {
            if b.auditRecords.contains(where: { $0["channel"] as? String == "enrollment.restart" }) { return true }
            usleep(50_000)
        }
        return false
    }

    @Test func anAppThatLeavesTheRestartToTheSDKIsStartedAgainAndKeepsItsEnrollment() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let docs = try b.launch("Docs")
        #expect(try docs.send("delegate", "restart", "sdk")["ok"]?.bool == true)
        #expect(try docs.send("enroll", "adele@contoso.com")["succeeded"]?.bool == true)
        #expect(restarted(b))
        #expect(b.auditRecords.contains { $0["outcome"] as? String == "restarted-by-launcher" })
        // The launcher says so once the first instance is gone: a command sent before that could
        // be read by the instance being killed and lost with it (the hang of issue 20).
        try docs.waitForError("restarted at the broker's request")
        let again = try docs.sendToRestarted("policy")
        #expect(again["managed"]?.bool == true, "\(again)")
        docs.finish()
    }

    @Test func anAppThatRestartsItselfRunsOn() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let docs = try b.launch("Docs")
        #expect(try docs.send("enroll", "adele@contoso.com")["succeeded"]?.bool == true)
        #expect(restarted(b))
        #expect(b.auditRecords.contains { $0["outcome"] as? String == "restarts-itself" })
        #expect(try docs.send("hello")["app"]?.string == "com.contoso.docs", "the same instance answers, line numbers go on")
        docs.finish()
    }
}
