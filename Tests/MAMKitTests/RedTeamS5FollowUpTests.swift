import Foundation
import MAMScript
import MAMTestSupport
import Testing

/// The red team's open suspicions of session 5 (issue 19), each tried through the real
/// processes (mambroker, mamlaunch, Courier speaking the protocol under an installed manifest).
@Suite("Red team s5, follow-up: sign-out, instances, containers", .serialized, .timeLimit(.minutes(2)))
struct RedTeamS5FollowUpTests {
    static let adele = "adele@contoso.com"
    static let adeleOID = "5f1c7a2e-3b4d-4e6f-8a9b-0c1d2e3f4a5b"
    static let ben = "ben@contoso.com"

    static func mamlaunch(_ arguments: [String]) throws -> (status: Int32, said: String) {
        let r = try ChildProcess.run(TestBroker.bin + "/mamlaunch", arguments, environment: TestBroker.environment, timeout: 30)
        return (r.status, r.out + r.err)
    }

    func courier(_ b: TestBroker, _ app: String, user: String, _ steps: [String]) throws -> ScriptedProcess {
        try ScriptedProcess(TestBroker.bin + "/mamlaunch",
                            ["run", "--manifest", "\(TestBroker.root)/Apps/\(app)/Info.plist", "--broker", b.launcherSocket,
                             "--containers", b.containers, "--developer", "--user", user, "--", TestBroker.bin + "/Courier"] + steps,
                            environment: TestBroker.environment)
    }

    /// seed 000: an enrollment that failed is retried every 24 hours. Adele's enrollment in Chat
    /// fails (no policy targets Chat for her), she is signed out of Chat (she unenrolls with
    /// wipe, or the admin wipes her), and then the admin targets her: a day later the retry
    /// must not enroll her without her sign-in.
    /// (The control, `none`: with Adele still signed in, the retry enrolls her.)
    @Test(arguments: ["unenroll", "admin-wipe", "none"])
    func aPendingRetryDoesNotEnrollAnAccountSignedOutSince(_ signOut: String) throws {
        let dir = "/tmp/mamlab-red5f-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createSymbolicLink(atPath: dir + "/policies", withDestinationPath: TestBroker.root + "/Policies/contoso/policies")
        let tenant = dir + "/tenant.json"
        try FileManager.default.copyItem(atPath: TestBroker.root + "/Policies/contoso/tenant.json", toPath: tenant)
        let b = try TestBroker(prefix: "mamlab-red5f", tenant: tenant, extraArguments: ["--clock", "virtual"])
        defer { b.stop() }
        let enrollments = { b.auditRecords.filter { $0["channel"] as? String == "enrollment" && ($0["detail"] as? String)?.hasPrefix(Self.adele) == true } }
        func waitForEnrollment(_ detailSuffix: String) {
            let deadline = Date().addingTimeInterval(15)
            while !enrollments().contains(where: { ($0["detail"] as? String)?.hasSuffix(detailSuffix) == true }) && Date() < deadline { usleep(50_000) }
        }
        let chat = try courier(b, "Chat", user: Self.adele, ["hello", "enroll", Self.adele]
                               + (signOut == "unenroll" ? ["unenroll", Self.adele, "wipe"] : [])
                               + Array(repeating: ["wait-notice", "60"], count: 5).flatMap { $0 } + ["bye"])
        waitForEnrollment(": 225")
        #expect(enrollments().contains { $0["outcome"] as? String == "licensedNotTargeted" }, "\(enrollments())")
        var wiped = ""
        if signOut == "admin-wipe" {
            let (status, said) = try Self.mamlaunch(["wipe", "--user", Self.adele, "--app", "com.example.chat", "--broker", b.launcherSocket])
            #expect(status == 0, "\(said)")
            wiped = said
        }
        if signOut != "none" {
            let signedOutStatus = signOut == "unenroll" ? ": 104" : ": 102"
            waitForEnrollment(signedOutStatus)
            #expect(enrollments().contains { ($0["detail"] as? String)?.hasSuffix(signedOutStatus) == true }, "\(wiped) \(enrollments())")
        }
        // What is new afterwards is what has a larger id than any record now (the records are
        // read from two files, so a count of them is not a position).
        let before = enrollments().compactMap { $0["id"] as? Int }.max() ?? 0

        // The admin adds Chat to the policy that targets Adele's group: a retry would enroll her.
        var json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: tenant))) as! [String: Any]
        var policies = json["policies"] as! [[String: Any]]
        var apps = policies[0]["apps"] as! [[String: Any]]
        apps.append(["mobileAppIdentifier": ["@odata.type": "#microsoft.graph.iosMobileAppIdentifier", "bundleId": "com.example.chat"]])
        policies[0]["apps"] = apps
        json["policies"] = policies
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: tenant))
        kill(b.pid, SIGHUP)
        b.waitForLog("tenant reloaded")
        // The broker's tick runs before `clock advance` returns: what the retry does is done.
        let (status, said) = try Self.mamlaunch(["clock", "advance", "25h", "--broker", b.launcherSocket])
        #expect(status == 0, "\(said)")
        let after = enrollments().filter { ($0["id"] as? Int ?? 0) > before }
        if signOut == "none" {
            b.kill(SIGTERM)
            _ = chat.allLines()
            #expect(after.contains { $0["outcome"] as? String == "newPoliciesReceived" }, "the retry did not run: \(Array(after))")
            return
        }
        // Chat was running throughout (a retry is for running apps): it was still waiting, not
        // done, when the broker ended.
        b.kill(SIGTERM)
        let lines = chat.allLines()
        #expect(lines.contains { $0["closed"]?.bool == true } || !lines.contains { $0["step"]?.string == "bye" }, "\(lines)")
        #expect(after.isEmpty, "the retry enrolled Adele after she was signed out: \(Array(after))\n\(lines)")
        #expect(!lines.contains { $0["step"]?.string == "wait-notice" && $0["status"]?.number == 100 }, "\(lines)")
    }

    /// Enrollment, check-in and compliance notices went to every instance of the app: a second
    /// Mail, run for Ben beside Mail as Adele, heard Adele's policy check-in (a `mamlaunch sync`)
    /// and her remediation's compliance state. A notice reaches only the instances the account
    /// is signed in to; Ben's instance does not become managed as Adele, nor get her key.
    @Test func anotherUsersInstanceHearsNothingOfAdelesEnrollmentOrCompliance() throws {
        let b = try TestBroker(prefix: "mamlab-red5f")
        defer { b.stop() }
        // Adele's Mail is enrolled on launch (AutoEnrollOnLaunch: a policy, a restart request),
        // then waits for the check-in, then asks for a remediation.
        let adele = try courier(b, "Mail", user: Self.adele, ["hello", "wait-notice", "wait-notice", "wait-notice",
                                                             "remediate", Self.adeleOID, "silent", "wait-compliance", "bye"])
        _ = try adele.waitForLine("hello") { $0["step"]?.string == "hello" }
        let ben = try courier(b, "Mail", user: Self.ben, ["hello", "wait-notice", "12", "wait-compliance", "2", "key", Self.adele, "bye"])
        _ = try ben.waitForLine("hello") { $0["step"]?.string == "hello" }
        let started = Date()
        let (status, said) = try Self.mamlaunch(["sync", "--broker", b.launcherSocket])
        #expect(status == 0, "\(said)")
        let adeleLines = adele.allLines()
        let adeleTook = Date().timeIntervalSince(started)
        #expect(adeleLines.filter { $0["step"]?.string == "wait-notice" }.count == 3 && adeleLines.contains { $0["step"]?.string == "wait-compliance" },
                "\(adeleLines)")
        let benLines = ben.allLines()
        // Adele's notices were all said within Ben's wait, or the test proves nothing.
        #expect(adeleTook < 11, "Adele's instance took \(adeleTook) s")
        let heard = benLines.filter { ["wait-notice", "wait-compliance"].contains($0["step"]?.string) && $0["closed"] == nil && $0["error"] == nil }
        #expect(heard.allSatisfy { "\($0)".contains(Self.adele) == false && "\($0)".contains(Self.adeleOID) == false },
                "Ben's instance heard of Adele's enrollment or compliance: \(heard)")
        #expect(benLines.first { $0["step"]?.string == "key" }?["key"] == nil, "\(benLines)")
    }

    /// Each launch handed the app's on-disk container to the uid it runs under (mode 0700). A
    /// second instance of a running app (Docs for Ben beside Docs for Adele) took a new uid and
    /// was handed the folder the first instance keeps its files in (`--limit disk=none`), with
    /// its container kept or not: the running first instance could no longer read or write its
    /// own files. Now only an instance that keeps its container on disk is handed it, one at a
    /// time: a second one asking to keep it while the first runs is refused with the reason,
    /// one with its container in memory leaves the folder alone. (Joining the first's uid
    /// instead shared its process count: ContainerClaim says why not.)
    @Test(arguments: [(true, true), (true, false), (false, true)])
    func aSecondInstanceDoesNotLockTheFirstOutOfItsContainer(_ firstKeeps: Bool, _ secondKeeps: Bool) throws {
        let b = try KitBroker()
        defer { b.stop() }
        let first = try b.launch("Docs", user: Self.adele, keepContainer: firstKeeps)
        #expect(try first.send("write-file", "diary.txt", "personal", "my own")["error"] == nil)
        let second = try b.launch("Docs", user: Self.ben, keepContainer: secondKeeps)
        if firstKeeps && secondKeeps {
            #expect(second.finish() != 0, "a second instance kept the container a running one keeps")
            #expect(second.standardError.contains("a running instance of it keeps its container"), "\(second.standardError)")
        } else {
            #expect(try second.send("write-file", "note.txt", "personal", "Ben's")["error"] == nil)
        }
        let read = try first.send("read-file", "diary.txt")
        #expect(read["text"]?.string == "my own", "the first instance lost its own file: \(read)")
        let wrote = try first.send("write-file", "later.txt", "personal", "still mine")
        #expect(wrote["error"] == nil && wrote["code"] == nil, "the first instance can no longer write in its container: \(wrote)")
        second.finish()
        first.finish()
    }
}
