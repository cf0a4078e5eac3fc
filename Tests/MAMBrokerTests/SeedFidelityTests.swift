import Foundation
import Glibc
import Testing

/// Seed statements checked through a real broker and sandboxed apps: storage locations, the
/// share sheet and Send = none (docs/SEMANTICS.md §4.1.3, §4.5, §4.6). Mail and Docs are
/// adele's ("Managed only") and ben's ("Locked down": Send = none); Notes has no SDK.
@Suite("Seed fidelity through the broker", .serialized, .timeLimit(.minutes(2)))
struct SeedFidelityTests {
    /// A copy of the sample tenant, edited by `change`, in a folder the test removes.
    func tenant(_ change: (inout String, inout String) -> Void) throws -> (dir: String, path: String) {
        let dir = "/tmp/mamlab-fidelity-\(UUID().uuidString.prefix(8))"
        let policies = BrokerHarness.root + "/Policies/contoso"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: policies + "/policies", toPath: dir + "/policies")
        var tenant = try String(contentsOfFile: policies + "/tenant.json", encoding: .utf8)
        var debug = try String(contentsOfFile: policies + "/policies/debug-managed-only.plist", encoding: .utf8)
        change(&tenant, &debug)
        try tenant.write(toFile: dir + "/tenant.json", atomically: true, encoding: .utf8)
        try debug.write(toFile: dir + "/policies/debug-managed-only.plist", atomically: true, encoding: .utf8)
        return (dir, dir + "/tenant.json")
    }

    // seed 000 §Unknown or unlisted locations: a service reached through an account that only
    // shares the managed UPN is `other`; the caller names that account and gets a decision.
    @Test func aSaveToOtherWithAnAccountIsDecided() throws {
        let b = try BrokerHarness()
        defer { b.stop() }
        let mail = try b.run("Mail", ["hello", "save", "0", "adele@contoso.com", "o.txt", "org", "save", "32", "adele@contoso.com", "l.txt", "org"])
        let other = mail.step("save")["decision"] as? [String: Any]
        #expect(other?["outcome"] as? String == "blocked" && other?["rule"] as? String == "4.6.save", "\(mail)")
        // Local drive still takes no account (seed 000: always paired with none).
        #expect(mail.step("save", 1)["error"] as? String == "notAllowed", "\(mail)")
        // An unmanaged owner saves to `other` under any service account; nothing is filed under it.
        let notes = try b.run("Notes", ["hello", "save", "0", "dana@dropbox.example", "n.txt", "mine"])
        #expect(notes.step("save").outcome == "allowed", "\(notes)")
        #expect(FileManager.default.fileExists(atPath: b.device + "/locations/other/n.txt"))
    }

    // seed 000 §Supported open locations: local storage is a location the admin may allow (the
    // debug form's bit 8); allowed, it opens, where MAMLab used to block it by a rule of its own.
    @Test func openingFromLocalStorageFollowsTheAdminSetting() throws {
        let t = try tenant { tenant, debug in
            // adele's group (sales) gets the debug-form policy, and pilot-debug "Managed only".
            tenant = tenant.replacingOccurrences(of: "policies/managed-only.json", with: "SWAP")
                .replacingOccurrences(of: "policies/debug-managed-only.plist", with: "policies/managed-only.json")
                .replacingOccurrences(of: "SWAP", with: "policies/debug-managed-only.plist")
            debug = debug.replacingOccurrences(of: "<key>OpenDataFromManagedLocations</key>\n\t<integer>23</integer>",
                                               with: "<key>OpenDataFromManagedLocations</key>\n\t<integer>31</integer>")
        }
        defer { try? FileManager.default.removeItem(atPath: t.dir) }
        #expect(try String(contentsOfFile: t.path, encoding: .utf8).contains("\"$ref\": \"policies/debug-managed-only.plist\",\n      \"apps\": [\n        {\n          \"mobileAppIdentifier\": {\n            \"@odata.type\": \"#microsoft.graph.iosMobileAppIdentifier\",\n            \"bundleId\": \"com.contoso.mail\""))
        #expect(try String(contentsOfFile: t.dir + "/policies/debug-managed-only.plist", encoding: .utf8).contains("<integer>31</integer>"))
        let b = try BrokerHarness(tenant: t.path)
        defer { b.stop() }
        #expect(try b.run("Notes", ["hello", "save", "32", "-", "n.txt", "mine"]).step("save").outcome == "allowed")
        let mail = try b.run("Mail", ["hello", "open", "8", "-", "n.txt"])
        #expect(mail.step("open").outcome == "allowed" && mail.step("open")["content"] as? String == "mine", "\(mail)")
        let line = b.auditRecords.first { $0["channel"] as? String == "open-from" }
        #expect(line?["rule"] as? String == "4.6.open" && (line?["target"] as? [String: Any])?["managed"] as? Bool == true, "\(String(describing: line))")
    }

    // seed 000 §'Copy To' actions: iOS offers every app that supports the document, running or not.
    @Test func theShareSheetListsInstalledAppsThatAreNotRunning() throws {
        let b = try BrokerHarness()
        defer { b.stop() }
        let mail = try b.run("Mail", ["hello", "targets", "public.html"])
        let apps = ((mail.step("targets")["targets"] as? [[String: Any]]) ?? []).compactMap { $0["app"] as? String }
        #expect(apps.contains("com.microsoft.msedge"), "\(mail)")
        #expect(!apps.contains("com.contoso.mail"), "the sender is not its own target")
    }

    // Send = none: the share sheet's Copy-to actions are gone (seed 000 §'Copy To' actions), so no
    // app is offered and a share delivers nothing; explain says the same (ExplainCommandTests).
    @Test func underSendNoneTheShareSheetOffersNothingAndAShareDeliversNothing() throws {
        let b = try BrokerHarness()
        defer { b.stop() }
        let docs = try b.launch("Docs", user: "ben@contoso.com", ["hello", "sleep", "1500"])
        docs.waitForLines(1)
        let mail = try b.run("Mail", user: "ben@contoso.com", ["hello", "targets", "com.adobe.pdf",
                                                                "share", "com.contoso.docs", "com.adobe.pdf", "q3.pdf", "Q3 numbers"])
        let targets = (mail.step("targets")["targets"] as? [[String: Any]]) ?? []
        #expect(!targets.isEmpty && targets.allSatisfy { $0["outcome"] as? Int == 3 }, "every target filtered: \(targets)")
        let share = mail.step("share")
        #expect(share.outcome == "filtered" && share.ruleName == "sendNoneOpenInFiltered", "\(mail)")
        let got = docs.finish()
        #expect(!got.contains { $0["type"] != nil || $0["content"] != nil }, "Docs received nothing: \(got)")
        let line = b.auditRecords.first { $0["channel"] as? String == "open-in" }
        #expect(line?["outcome"] as? String == "filtered" && line?["ruleName"] as? String == "sendNoneOpenInFiltered")
        #expect(line?["decidedAt"] as? String == share.decidedAt && share.decidedAt != nil, "\(share) vs \(line ?? [:])")
    }

    // seed 000 FAQ, "How often does the SDK retry enrollments?": a failed enrollment is retried
    // every 24 hours, and the 8-hour check-ins are for enrolled apps. Chat is not targeted for
    // adele (225); the admin then targets her: nothing before the retry, then an enrollment.
    @Test func aFailedEnrollmentWaitsForTheRetryWhenTheAdminTargetsTheUser() throws {
        let t = try tenant { _, _ in }
        defer { try? FileManager.default.removeItem(atPath: t.dir) }
        let b = try BrokerHarness(tenant: t.path, extraArguments: ["--clock", "virtual"])
        defer { b.stop() }
        let chat = try b.launch("Chat", user: "adele@contoso.com", ["hello", "enroll", "adele@contoso.com", "wait-notice", "wait-notice", "wait-notice"])
        let enrollments = { b.auditRecords.filter { $0["channel"] as? String == "enrollment" }.compactMap { $0["outcome"] as? String } }
        let deadline = Date().addingTimeInterval(15)
        while !enrollments().contains("licensedNotTargeted") && Date() < deadline { usleep(50_000) }
        #expect(enrollments().contains("licensedNotTargeted"), "\(enrollments())")

        // The admin adds Chat to the policy that targets adele's group.
        var json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: t.path))) as! [String: Any]
        var policies = json["policies"] as! [[String: Any]]
        var apps = policies[0]["apps"] as! [[String: Any]]
        apps.append(["mobileAppIdentifier": ["@odata.type": "#microsoft.graph.iosMobileAppIdentifier", "bundleId": "com.example.chat"]])
        policies[0]["apps"] = apps
        json["policies"] = policies
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: t.path))
        kill(b.pid, SIGHUP)
        b.waitForLog("tenant reloaded")
        // 8 and then 23 hours: check-ins are for enrolled apps; the failed one waits for its retry.
        for step in ["8h", "15h"] {
            let (status, said) = try VirtualClockTests.mamlaunch(["clock", "advance", step, "--broker", b.launcherSocket])
            #expect(status == 0, "\(said)")
            usleep(1_500_000)   // a tick (each second) has seen the new time
        }
        #expect(!enrollments().contains("newPoliciesReceived"), "nothing before 24 hours: \(enrollments())")
        let (status, said) = try VirtualClockTests.mamlaunch(["clock", "advance", "1h", "--broker", b.launcherSocket])
        #expect(status == 0, "\(said)")
        let lines = chat.finish()
        let notices = lines.filter { $0["step"] as? String == "wait-notice" }
        #expect(notices.contains { $0["notice"] as? String == "enrollment" && $0["status"] as? Int == 100 && $0["account"] as? String == "adele@contoso.com" },
                "the retry reports a successful enrollment: \(lines)")
        #expect(notices.contains { $0["restart"] as? String == "adele@contoso.com" }, "\(lines)")
        #expect(!notices.contains { $0["notice"] as? String == "policy" }, "no check-in enrolled her: \(lines)")
    }

    // seed 000, enrollment retries: they stop while another user has enrolled the app, and when
    // that user is unenrolled they begin again on the same 24-hour interval. Ben is refused in
    // Mail while adele holds it (227); she leaves; the next retry on his schedule enrolls him.
    @Test func anAccountRefusedWhileAnotherHeldTheAppIsEnrolledOnceThatOneLeft() throws {
        let t = try tenant { _, _ in }
        defer { try? FileManager.default.removeItem(atPath: t.dir) }
        let b = try BrokerHarness(tenant: t.path, extraArguments: ["--clock", "virtual"])
        defer { b.stop() }
        _ = try b.run("Mail", user: "adele@contoso.com", ["hello", "enroll", "adele@contoso.com"])
        let ben = try b.launch("Mail", user: "ben@contoso.com", ["hello", "enroll", "ben@contoso.com", "wait-notice", "40", "wait-notice", "20"])
        let enrollments = { b.auditRecords.filter { $0["channel"] as? String == "enrollment" }.compactMap { $0["detail"] as? String } }
        let deadline = Date().addingTimeInterval(15)
        while !enrollments().contains("ben@contoso.com: 227") && Date() < deadline { usleep(50_000) }
        #expect(enrollments().contains("ben@contoso.com: 227"), "\(enrollments())")
        func advance(_ step: String) throws {
            let (status, said) = try VirtualClockTests.mamlaunch(["clock", "advance", step, "--broker", b.launcherSocket])
            #expect(status == 0, "\(said)")
            usleep(1_500_000)   // a tick (each second) has seen the new time
        }
        // Adele still holds Mail at his first retry: nothing is tried.
        try advance("24h")
        #expect(!enrollments().contains("ben@contoso.com: 100"), "\(enrollments())")
        _ = try b.run("Mail", user: "adele@contoso.com", ["hello", "unenroll", "adele@contoso.com", "keep"])
        try advance("12h")
        #expect(!enrollments().contains("ben@contoso.com: 100"), "not before his next retry: \(enrollments())")
        try advance("12h")
        let lines = ben.finish()
        #expect(lines.contains { $0["notice"] as? String == "enrollment" && $0["status"] as? Int == 100 && $0["account"] as? String == "ben@contoso.com" },
                "the retry enrolls him: \(lines)")
    }
}
