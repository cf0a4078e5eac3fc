import Foundation
import Glibc
import MAMTestSupport
import Testing

/// Issue 22's first hour, through the real processes: an admin's typo is refused, not "issued";
/// one device has one broker; the wrong socket is named.
@Suite("Typos, second brokers and wrong sockets", .serialized, .hangGuard)
struct FirstHourTests {
    static func mamlaunch(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        try ChildProcess.run(BrokerHarness.bin + "/mamlaunch", arguments, environment: BrokerHarness.environment, timeout: 30)
    }

    @Test func aWipeOfAnAccountOrAppThatDoesNotExistIsRefused() throws {
        let b = try BrokerHarness()
        defer { b.stop() }
        let nobody = try Self.mamlaunch(["wipe", "--user", "nobody@contoso.com", "--broker", b.launcherSocket])
        #expect(nobody.status == 1, "\(nobody)")
        #expect(nobody.out.contains("wipe refused: no account nobody@contoso.com in tenant contoso.com"), "\(nobody)")
        #expect(!nobody.out.contains("issued"))
        let bogus = try Self.mamlaunch(["wipe", "--user", "adele@contoso.com", "--app", "com.bogus", "--broker", b.launcherSocket])
        #expect(bogus.status == 1, "\(bogus)")
        #expect(bogus.out.contains("wipe refused: no app com.bogus installed on this device"), "\(bogus)")
        // What exists is still issued.
        #expect(try b.run("Mail", ["hello", "enroll", "adele@contoso.com"]).step("enroll")["status"] as? Int == 100)
        let real = try Self.mamlaunch(["wipe", "--user", "adele@contoso.com", "--app", "com.contoso.mail", "--broker", b.launcherSocket])
        #expect(real.status == 0, "\(real)")
        #expect(real.out.contains("wipe of adele@contoso.com issued to com.contoso.mail"), "\(real)")
    }

    @Test func aWipeNamesTheAppAsRunDoesByFolderOrBundleID() throws {
        let b = try BrokerHarness()
        defer { b.stop() }
        #expect(try b.run("Mail", ["hello", "enroll", "adele@contoso.com"]).step("enroll")["status"] as? Int == 100)
        for name in ["Mail", "mail", "COM.CONTOSO.MAIL"] {
            let r = try Self.mamlaunch(["wipe", "--user", "adele@contoso.com", "--app", name, "--broker", b.launcherSocket])
            #expect(r.status == 0 && r.out.contains("wipe of adele@contoso.com issued to com.contoso.mail"), "\(name): \(r)")
        }
    }

    /// Issue 19: a wipe of an account with no enrollment was kept, and wiped the account's next
    /// enrollment, one the admin never saw. A wipe targets the enrollments that exist when it is
    /// issued (seed 000 FAQ: it unenrolls the user from the app); with none it is refused.
    @Test func aWipeOfAnAccountWithNoEnrollmentIsRefusedAndWipesNoLaterOne() throws {
        let b = try BrokerHarness()
        defer { b.stop() }
        for (extra, place) in [([String](), "any app"), (["--app", "Mail"], "com.contoso.mail")] {
            let r = try Self.mamlaunch(["wipe", "--user", "adele@contoso.com"] + extra + ["--broker", b.launcherSocket])
            #expect(r.status == 1, "\(r)")
            #expect(r.out.contains("wipe refused: nothing to wipe: adele@contoso.com is not enrolled in \(place) on this device"), "\(r)")
        }
        // Adele enrolls afterwards; Mail's next start brings no wipe, and she is still enrolled.
        #expect(try b.run("Mail", ["hello", "enroll", "adele@contoso.com"]).step("enroll")["status"] as? Int == 100)
        let again = try b.run("Mail", ["hello", "enroll", "adele@contoso.com"])
        #expect(again.step("enroll")["status"] as? Int == 208, "\(again)")
        #expect(!b.auditRecords.contains { $0["outcome"] as? String == "wipeReceived" }, "\(b.auditRecords)")
    }

    @Test func aSignInOfAnAccountTheTenantDoesNotKnowInItsOwnDomainIsRefusedSayingWhy() throws {
        let b = try BrokerHarness()
        defer { b.stop() }
        let mail = try b.launch("Mail", ["hello", "sleep", "3000"])
        mail.waitForLines(1)
        let typo = try ChildProcess.run(BrokerHarness.bin + "/mamlaunch", ["signin", "--user", "nobody@contoso.com", "--pid", "\(mail.process.processIdentifier)",
                                                                           "--broker", b.launcherSocket],
                                        environment: BrokerHarness.environment, input: "contoso-ben\n", timeout: 30)
        #expect(typo.status == 1, "\(typo)")
        #expect(typo.out.contains("signin refused: nobody@contoso.com is not a user of tenant contoso.com"), "\(typo)")
        // A known user with the wrong password hears why, not "see the broker's log".
        // (The broker knows the app by the pid its launcher handed over: one of the launcher's children.)
        var wrong: (status: Int32, out: String, err: String) = (0, "", "")
        for pid in ProcessTree.descendants(of: mail.process.processIdentifier) {
            wrong = try ChildProcess.run(BrokerHarness.bin + "/mamlaunch", ["signin", "--user", "ben@contoso.com", "--pid", "\(pid)", "--broker", b.launcherSocket],
                                         environment: BrokerHarness.environment, input: "not-bens\n", timeout: 30)
            if !wrong.out.contains("was handed over") { break }
        }
        #expect(wrong.status == 1 && wrong.out.contains("ben@contoso.com was not signed in: wrong or missing credential"), "\(wrong)")
        _ = mail.finish()
    }

    /// With --broker the launcher does not read the tenant; the broker does, and refuses the
    /// hand-off of an app run for a typo of a user (before: it ran signed in as an outsider).
    @Test func runWithABrokerRefusesAnUnknownUserInTheTenantsDomain() throws {
        let b = try BrokerHarness()
        defer { b.stop() }
        let typo = try b.launch("Mail", user: "adel@contoso.com", ["hello", "sleep", "3000"])
        _ = typo.finish()
        #expect(typo.process.terminationStatus == 1, "\(typo.standardError)")
        #expect(typo.standardError.contains("the broker refused com.contoso.mail: adel@contoso.com is not a user of tenant contoso.com"),
                "\(typo.standardError)")
        #expect(!b.auditRecords.contains { ($0["source"] as? [String: Any])?["identity"] as? String == "adel@contoso.com" })
        // The user spelled right is handed over as before.
        let right = try b.run("Mail", user: "adele@contoso.com", ["hello"])
        #expect(right.step("hello")["managedAccount"] as? String == "adele@contoso.com", "\(right)")
    }

    /// Issue 22 item 4: inside the apps, another app is named as `mamlaunch run` names it.
    @Test func insideTheAppsAnAppIsNamedByFolderOrBundleIDInAnyCase() throws {
        let b = try BrokerHarness()
        defer { b.stop() }
        let docs = try b.launch("Docs", ["hello", "wait-document", "serve-export", "n.txt", "from docs"])
        docs.waitForLines(1)
        let mail = try b.run("Mail", ["hello", "share", "docs", "public.plain-text", "q3.txt", "Q3", "import", "Docs", "public.plain-text"])
        #expect(mail.step("share").outcome == "allowed", "\(mail)")
        #expect(mail.step("import").outcome == "allowed", "\(mail)")
        let got = docs.finish()
        #expect(got.step("wait-document")["name"] as? String == "q3.txt", "\(got)")
        // An unknown name is unknown, not "not running".
        let typo = try b.run("Mail", ["hello", "import", "docs.contoso", "public.plain-text"])
        #expect(String(describing: typo.step("import")).contains("no installed app has the bundle id docs.contoso"), "\(typo)")
    }

    @Test func aSyncWithNoAppRunningIsRefused() throws {
        let b = try BrokerHarness()
        defer { b.stop() }
        let r = try Self.mamlaunch(["sync", "--broker", b.launcherSocket])
        #expect(r.status == 1, "\(r)")
        #expect(r.out.contains("sync refused: no app with the SDK is running"), "\(r)")
    }

    @Test func aSyncWithAnAppRunningNamesIt() throws {
        let b = try BrokerHarness()
        defer { b.stop() }
        let mail = try b.launch("Mail", ["hello", "enroll", "adele@contoso.com", "sleep", "3000"])
        mail.waitForLines(2)
        let r = try Self.mamlaunch(["sync", "--broker", b.launcherSocket])
        #expect(r.status == 0, "\(r)")
        #expect(r.out.contains("1 running app checked in: com.contoso.mail"), "\(r)")
        _ = mail.finish()
    }

    @Test func aSecondBrokerOnTheSameDeviceRefusesAndLeavesTheFirstOneServing() throws {
        let b = try BrokerHarness()
        defer { b.stop() }
        let before = try FileManager.default.attributesOfItem(atPath: b.launcherSocket)[.systemFileNumber] as? Int
        let second = try ChildProcess.run(BrokerHarness.bin + "/mambroker",
                                          ["--tenant", BrokerHarness.root + "/Policies/contoso/tenant.json", "--device", b.device],
                                          environment: BrokerHarness.environment, timeout: 20)
        #expect(second.status == 1, "\(second)")
        #expect(second.err.contains("already has a broker (pid \(b.pid)"), "\(second.err)")
        #expect(!second.out.contains("ready"))
        // The first broker's sockets are the same files, and it still answers.
        let after = try FileManager.default.attributesOfItem(atPath: b.launcherSocket)[.systemFileNumber] as? Int
        #expect(before == after)
        let wipe = try Self.mamlaunch(["wipe", "--user", "adele@contoso.com", "--broker", b.launcherSocket])
        #expect(wipe.out.contains("wipe refused: nothing to wipe"), "\(wipe)")
    }

    @Test func theLockGoesWithTheBrokerSoTheNextOneStarts() throws {
        let b = try BrokerHarness()
        defer { b.stop() }
        b.kill(SIGKILL)
        try b.start()
        #expect(b.pid > 0)
    }

    @Test func runPointedAtThePublicSocketSaysWhichSocketToUse() throws {
        let b = try BrokerHarness()
        defer { b.stop() }
        let r = try Self.mamlaunch(["run", "Mail", "--broker", b.publicSocket])
        #expect(r.status == 1, "\(r)")
        #expect(r.err.contains("is the broker's public socket"), "\(r.err)")
        #expect(r.err.contains("--broker \(b.launcherSocket)"), "\(r.err)")
        #expect(!r.err.contains("USAGE"), "a runtime error, not a usage error: \(r.err)")
        let sync = try Self.mamlaunch(["sync", "--broker", b.publicSocket])
        #expect(sync.status == 1 && sync.err.contains("--broker \(b.launcherSocket)"), "\(sync)")
    }

    @Test func anUnreachableBrokerIsARuntimeErrorNotAUsageError() throws {
        let r = try Self.mamlaunch(["sync", "--broker", "/tmp/mamlab-no-such-\(getpid())/launcher.sock"])
        #expect(r.status == 1, "\(r)")
        #expect(r.err.contains("cannot reach the broker at"), "\(r.err)")
        #expect(!r.err.contains("USAGE"), "\(r.err)")
    }
}
