import Foundation
import MAMScript
import MAMTestSupport
import Testing

/// Issue 19: the broker believed what an app said about who it is. Each test is an attack
/// through the real processes (mambroker, mamlaunch, Courier speaking the protocol step by
/// step under an installed app's manifest) that succeeded before accounts had to be signed in
/// by the user: an app naming an account got it enrolled, its key, its token and its
/// configuration.
@Suite("Sign-in is the user's act (issue 19)", .serialized, .timeLimit(.minutes(2)))
struct SignInAttackTests {
    static let ben = "ben@contoso.com"
    static let benOID = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
    static let adele = "adele@contoso.com"
    static let adeleOID = "5f1c7a2e-3b4d-4e6f-8a9b-0c1d2e3f4a5b"

    func step(_ lines: [JSONValue], _ name: String, _ n: Int = 0) -> JSONValue? {
        lines.filter { $0["step"]?.string == name }.dropFirst(n).first
    }

    func refusedAsNotSignedIn(_ line: JSONValue?) -> Bool {
        line?["error"]?.string == "notAllowed" && line?["detail"]?.string?.contains("not signed in") == true
    }

    @Test func dialerWithNoUserCannotEnrollBenNorTakeHisKeyTokenOrConfiguration() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let dialer = try b.courier("Dialer", ["hello", "enroll", Self.ben, "key", Self.ben, "remediate", Self.benOID, "silent",
                                              "enroll", Self.benOID, "token", Self.ben, "app-config", Self.ben, "key", Self.benOID, "bye"]).courierLines()
        for (name, n) in [("enroll", 0), ("enroll", 1), ("key", 0), ("key", 1), ("remediate", 0), ("token", 0), ("app-config", 0)] {
            let line = step(dialer, name, n)
            // (A key request is refused as any key request for an account not enrolled here.)
            #expect(name == "key" ? line?["error"]?.string == "notAllowed" : refusedAsNotSignedIn(line), "\(name) #\(n): \(String(describing: line))")
            #expect(line?["key"] == nil && line?["homeAccountId"] == nil && line?["config"] == nil && line?["status"] == nil)
        }
        // An app without the SDK learns nothing of Ben from the token endpoint either.
        let notes = try b.courier("Notes", ["hello", "token", Self.ben, "token", Self.benOID, "bye"]).courierLines()
        for n in 0..<2 {
            let token = step(notes, "token", n)
            #expect(refusedAsNotSignedIn(token) && token?["homeAccountId"] == nil, "\(String(describing: token))")
        }
        // Each refusal is audited.
        let refused = b.auditRecords.filter { $0["outcome"] as? String == "notSignedIn" }
        #expect(refused.count >= 7, "\(refused)")
    }

    /// Remediation enrolls the account it is for: an app signed in as Adele asking it for Ben's
    /// object id (or UPN) gets a refusal, and neither Ben's enrollment nor his token follows.
    @Test func remediationForAnotherUsersObjectIdIsRefusedWhileAdeleIsSignedIn() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let mail = try b.courier("Mail", user: Self.adele, ["hello", "remediate", Self.benOID, "silent", "remediate", Self.ben, "silent",
                                                            "enroll", Self.benOID, "token", Self.ben, "remediate", Self.adeleOID, "silent", "bye"])
            .courierLines()
        #expect(refusedAsNotSignedIn(step(mail, "remediate", 0)), "\(mail)")
        #expect(refusedAsNotSignedIn(step(mail, "remediate", 1)), "\(mail)")
        #expect(refusedAsNotSignedIn(step(mail, "enroll")) && step(mail, "enroll")?["status"] == nil, "\(mail)")
        #expect(refusedAsNotSignedIn(step(mail, "token")) && step(mail, "token")?["homeAccountId"] == nil, "\(mail)")
        // Her own object id is her, signed in here: remediation is taken up (not refused as another's).
        #expect(step(mail, "remediate", 2)?["error"] == nil, "\(mail)")
        #expect(!b.auditRecords.contains { $0["channel"] as? String == "ca.remediate" && ($0["detail"] as? String ?? "").contains("ben")
                                              && $0["outcome"] as? String != "notSignedIn" })
    }

    /// From the protocol client: a second Docs run as Ben got Ben's key while Docs was enrolled
    /// with Adele. Through the processes: the second instance's data for Ben is not encrypted
    /// under any key of Ben's, and Adele's instance keeps hers.
    @Test func aSecondDocsRunAsBenGetsNoKeyWhileDocsIsEnrolledWithAdele() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let first = try b.launch("Docs", user: Self.adele)
        #expect(try first.send("protect", Self.adele, "minutes")["encrypted"]?.bool == true)
        let second = try b.courier("Docs", user: Self.ben, developer: false, ["hello", "key", Self.ben, "bye"]).courierLines()
        #expect(step(second, "key")?["key"] == nil, "\(second)")
        let real = try b.launch("Docs", user: Self.ben)
        #expect(try real.send("protect", Self.ben, "ben's notes")["encrypted"]?.bool != true, "a key of Ben's reached the second Docs")
        real.finish()
        #expect(try first.send("protect", Self.adele, "more minutes")["encrypted"]?.bool == true)
        first.finish()
    }

    /// From the seeds' fidelity suite: with only Dana signed in, Mail listed Adele as signed in
    /// and enrolled. Its snapshot now names Dana only, and nobody is enrolled.
    @Test func withOnlyDanaSignedInMailListsNeitherAdeleSignedInNorEnrolled() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let mail = try b.launch("Mail", user: "dana@outlook.com")
        let who = try mail.send("hello")
        #expect(!"\(who)".lowercased().contains(Self.adele), "\(who)")
        #expect(try mail.send("policy", Self.adele)["managed"]?.bool == false)
        mail.finish()
    }

    @Test func anotherAppsUnenrollByObjectIdLeavesMailsEnrollmentAndKey() throws {
        let b = try KitBroker()
        defer { b.stop() }
        // The real Mail, signed in as Adele, protects a note under her key.
        let mail = try b.launch("Mail", user: Self.adele)
        let data = try #require(try mail.send("protect", Self.adele, "board minutes")["data"]?.string)
        mail.finish()
        // Dialer, launched for Adele, spells her by object id and unenrolls that spelling with a wipe.
        let dialer = try b.courier("Dialer", user: Self.adele, ["hello", "enroll", Self.adeleOID, "unenroll", Self.adeleOID, "wipe", "bye"]).courierLines()
        // (Dialer enrolls at launch by itself, AutoEnrollOnLaunch: the object id is a repeat, 208.)
        #expect(step(dialer, "enroll")?["status"]?.number == 208 && step(dialer, "unenroll")?["wipe"] != nil, "\(dialer)")
        // Mail is still enrolled with Adele, and her key (a new Mail asks the broker for it) still opens the note.
        let again = try b.launch("Mail", user: Self.adele)
        let enrolled = try again.send("enroll", Self.adele)
        #expect(enrolled["status"]?.number == 208, "\(enrolled)")
        let opened = try again.send("unprotect", data)
        #expect(opened["text"]?.string == "board minutes", "\(opened)")
        again.finish()
    }

    @Test func mailSignedInAsDanaGetsNeitherAdelesKeyNorHerIdentityNorHerClipboard() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let adele = try b.courier("Mail", user: Self.adele, ["hello", "enroll", Self.adele, "identity", Self.adele, "copy", "the merger memo", "bye"])
            .courierLines()
        #expect(step(adele, "copy")?["changeCount"] != nil, "\(adele)")
        let dana = try b.courier("Mail", user: "dana@outlook.com", ["hello", "key", Self.adele, "identity", Self.adele, "paste", "bye"]).courierLines()
        #expect(step(dana, "key")?["error"]?.string == "notAllowed" && step(dana, "key")?["key"] == nil, "\(dana)")
        #expect(step(dana, "identity")?["decision"]?["allowed"]?.bool == false, "\(dana)")
        #expect(step(dana, "paste")?["text"]?.string != "the merger memo", "\(dana)")
    }

    @Test func afterAWipeTheAppCannotEnrollAgainByItselfUntilTheUserSignsIn() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let first = try b.launch("Mail", user: Self.adele)
        let data = try #require(try first.send("protect", Self.adele, "board minutes")["data"]?.string)
        first.finish()
        try b.wipe(Self.adele)
        // Started again with nobody signed in: the wipe arrives, and the app may not take Adele back.
        let alone = try b.courier("Mail", ["hello", "wait-notice", "enroll", Self.adele, "key", Self.adele, "bye"]).courierLines()
        #expect(step(alone, "wait-notice")?["wipe"]?.string == Self.adele, "\(alone)")
        #expect(refusedAsNotSignedIn(step(alone, "enroll")), "\(alone)")
        #expect(refusedAsNotSignedIn(step(alone, "key")) || step(alone, "key")?["error"]?.string == "notAllowed", "\(alone)")
        // The user signs Adele in again (a launch with --user): enrolled anew (Mail enrolls at
        // launch, AutoEnrollOnLaunch, so the app's own request is a repeat), under a new key.
        let again = try b.launch("Mail", user: Self.adele)
        let enrolled = try again.send("enroll", Self.adele)
        #expect(enrolled["status"]?.number == 208, "\(enrolled)")
        #expect(try again.send("protect", Self.adele, "new minutes")["protected"]?.bool == true)
        // What was protected under the wiped key stays lost.
        #expect(try again.send("unprotect", data)["text"]?.string != "board minutes")
        again.finish()
    }

    // Item 3: the installed identity is the installed program's.

    @Test func anotherProgramUnderMailsManifestRunsAsAnUnknownApp() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let mail = try b.courier("Mail", user: Self.adele, developer: false, ["hello", "key", Self.adele, "enroll", Self.adele, "bye"]).courierLines()
        let hello = step(mail, "hello")
        #expect(hello?["bundleId"]?.string != "com.contoso.mail" && hello?["bundleId"]?.string?.hasPrefix("unknown.pid") == true, "\(mail)")
        #expect(step(mail, "key")?["error"]?.string == "notAllowed" && step(mail, "key")?["key"] == nil, "\(mail)")
        #expect(step(mail, "enroll")?["status"] == nil, "\(mail)")
    }

    @Test func anAppFolderWhoseManifestLinksToMailsRunsAsAnUnknownApp() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let folder = "/tmp/mamkit-fake-mail-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createSymbolicLink(atPath: folder + "/Info.plist", withDestinationPath: KitBroker.root + "/Apps/Mail/Info.plist")
        try FileManager.default.copyItem(atPath: KitBroker.bin + "/Courier", toPath: folder + "/Courier")
        let p = try ScriptedProcess(KitBroker.bin + "/mamlaunch", ["run", "--manifest", folder + "/Info.plist", "--broker", b.launcherSocket,
                                                                 "--containers", b.device + "-containers", "--user", Self.adele, "--",
                                                                 folder + "/Courier", "hello", "key", Self.adele, "bye"])
        let lines = p.courierLines()
        #expect(step(lines, "hello")?["bundleId"]?.string?.hasPrefix("unknown.pid") == true, "\(lines)")
        #expect(step(lines, "key")?["key"] == nil, "\(lines)")
    }

    @Test func theBuiltMailUnderItsManifestIsMailAndADevelopersProgramGetsNoKey() throws {
        let b = try KitBroker()
        defer { b.stop() }
        // The program built for Mail, named by --manifest: still Mail, with Adele's key.
        let built = try ScriptedProcess(KitBroker.bin + "/mamlaunch", ["run", "--manifest", KitBroker.root + "/Apps/Mail/Info.plist",
                                                                     "--broker", b.launcherSocket, "--containers", b.device + "-containers",
                                                                     "--user", Self.adele, "--", KitBroker.bin + "/Mail", "--script"])
        let enrolled = try built.send("enroll", Self.adele)
        #expect(enrolled["status"]?.number == 208, "enrolled at launch: \(enrolled)")
        #expect(try built.send("protect", Self.adele, "minutes")["encrypted"]?.bool == true)
        built.finish()
        // Courier with --developer: Mail's bundle id, never a key.
        let dev = try b.courier("Mail", user: Self.adele, ["hello", "key", Self.adele, "bye"]).courierLines()
        #expect(step(dev, "hello")?["bundleId"]?.string == "com.contoso.mail", "\(dev)")
        #expect(step(dev, "key")?["error"]?.string == "notAllowed" && step(dev, "key")?["detail"]?.string?.contains("developer") == true, "\(dev)")
    }
}

/// `mamlaunch signin`: the user signs an account in to a running app with its password.
@Suite("Interactive sign-in with a credential (issue 19)", .serialized, .timeLimit(.minutes(2)))
struct CredentialSignInProcessTests {
    /// `mamlaunch signin`, the password on standard input; its exit status.
    func signIn(_ b: KitBroker, _ account: String, pid: Int32, password: String) throws -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: KitBroker.bin + "/mamlaunch")
        p.arguments = ["signin", "--user", account, "--pid", "\(pid)", "--broker", b.launcherSocket]
        let input = Pipe()
        p.standardInput = input
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        try input.fileHandleForWriting.write(contentsOf: Data((password + "\n").utf8))
        try input.fileHandleForWriting.close()
        p.waitUntilExit()
        return p.terminationStatus
    }

    /// The pid the broker logged for the app's connection (its log names every hand-off).
    func pid(of bundle: String, in b: KitBroker) throws -> Int32 {
        let deadline = Date(timeIntervalSinceNow: 5)
        while Date() < deadline {
            let log = (try? String(contentsOfFile: b.log, encoding: .utf8)) ?? ""
            for line in log.split(separator: "\n") where line.contains("app connected") && line.contains("app=\(bundle) ") {
                if let range = line.range(of: " pid="), let pid = Int32(line[range.upperBound...].prefix { $0.isNumber }) { return pid }
            }
            usleep(50_000)
        }
        throw KitTestError("no 'app connected' line for \(bundle) in \(b.log) within 5 s")
    }

    @Test func benSignsInToARunningMailWithHisPasswordAndOnlyThen() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let mail = try b.launch("Mail")
        #expect(try mail.send("enroll", "ben@contoso.com")["status"] == nil, "not signed in yet")
        let pid = try pid(of: "com.contoso.mail", in: b)
        #expect(try signIn(b, "ben@contoso.com", pid: pid, password: "contoso-adele") != 0)
        #expect(try mail.send("enroll", "ben@contoso.com")["status"] == nil, "a wrong password signs nobody in")
        let quiet = try mail.send("events")
        #expect(quiet["events"]?.array?.contains { $0["event"]?.string == "signin" } == false, "a refused sign-in is not told: \(quiet)")
        #expect(try signIn(b, "ben@contoso.com", pid: pid, password: "contoso-ben") == 0)
        // The running app is told, through the broker, under the account's canonical name.
        let told = try mail.send("wait", "signin", "10")
        #expect(told["account"]?.string == "ben@contoso.com", "\(told)")
        #expect(try mail.send("policy", "ben@contoso.com")["managed"]?.bool == false, "signed in, not yet enrolled")
        let enrolled = try mail.send("enroll", "ben@contoso.com")
        #expect(enrolled["status"]?.number == 100, "\(enrolled)")
        mail.finish()
        #expect(b.auditRecords.contains { $0["channel"] as? String == "signIn" && $0["outcome"] as? String == "badCredential" })
    }

    /// The password check is PBKDF2, slow by design: the broker runs it on a worker, so while
    /// Ben's sign-in to Mail is checked (ten million rounds here, seconds) Docs is answered, and
    /// only then is Ben signed in. With the check on the broker's loop, Docs waited for it.
    @Test func otherAppsAreAnsweredWhileASignInIsChecked() throws {
        let dir = "/tmp/mamkit-slowcredential-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let policies = TestBroker.root + "/Policies/contoso"
        try FileManager.default.copyItem(atPath: policies + "/policies", toPath: dir + "/policies")
        var json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: policies + "/tenant.json"))) as! [String: Any]
        var users = json["users"] as! [[String: Any]]
        // "contoso-ben" under the most rounds a tenant file may ask for.
        users[1]["credential"] = "pbkdf2-sha256:10000000:5c1d0e8a7b6f4a3d2c1b0a9f8e7d6c5b:6e6d16fd0eeff10db53dda586f87749870e2f9a0b360b30dff20c55f62386f00"
        json["users"] = users
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: dir + "/tenant.json"))
        let b = try KitBroker(tenant: dir + "/tenant.json")
        defer { b.stop() }
        let mail = try b.launch("Mail"), docs = try b.launch("Docs")
        let pid = try pid(of: "com.contoso.mail", in: b)
        let signin = Process()
        signin.executableURL = URL(fileURLWithPath: KitBroker.bin + "/mamlaunch")
        signin.arguments = ["signin", "--user", "ben@contoso.com", "--pid", "\(pid)", "--broker", b.launcherSocket]
        let input = Pipe()
        signin.standardInput = input
        signin.standardOutput = FileHandle.nullDevice
        signin.standardError = FileHandle.nullDevice
        try signin.run()
        try input.fileHandleForWriting.write(contentsOf: Data("contoso-ben\n".utf8))
        try input.fileHandleForWriting.close()
        defer { if signin.isRunning { signin.terminate() } }
        b.waitForLog("sign-in: checking the password")
        let answered = try docs.send("policy")
        #expect(answered["managed"] != nil, "\(answered)")
        // Docs had its answer while the check still ran: nobody is signed in yet.
        let signedIn = { b.auditRecords.contains { $0["channel"] as? String == "signIn" && $0["outcome"] as? String == "signedIn" } }
        #expect(!signedIn(), "Docs was answered only after the password check")
        #expect(try mail.send("wait", "signin", "60")["account"]?.string == "ben@contoso.com")
        let deadline = Date(timeIntervalSinceNow: 30)
        while signin.isRunning && Date() < deadline { usleep(20_000) }
        #expect(!signin.isRunning && signin.terminationStatus == 0)
        #expect(signedIn())
        mail.finish()
        docs.finish()
    }

    /// Seed fidelity (item 4): a single-identity app has one process identity, its enrolled
    /// account. Dialer run for dana, then Adele signed in by the user and enrolled by the app:
    /// its identity is Adele's and its policy managed, as the broker enforces.
    @Test func aSingleIdentityAppThatEnrollsAdeleTakesHerAsItsProcessIdentity() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let dialer = try b.launch("Dialer", user: "dana@outlook.com")
        let before = try dialer.send("hello")
        #expect(before["identity"]?.string != "adele@contoso.com", "\(before)")
        #expect(try signIn(b, "adele@contoso.com", pid: try pid(of: "com.contoso.dialer", in: b), password: "contoso-adele") == 0)
        _ = try dialer.send("wait", "signin", "10")
        let enrolled = try dialer.send("enroll", "adele@contoso.com")
        #expect(enrolled["status"]?.number == 100, "\(enrolled)")
        let after = try dialer.send("hello")
        #expect(after["identity"]?.string == "adele@contoso.com", "\(after)")
        #expect(try dialer.send("policy")["managed"]?.bool == true)
        dialer.finish()
    }
}
