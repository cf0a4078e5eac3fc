import Foundation
import Glibc
import MAMScript
import MAMTestSupport
import Testing

/// `allowedAccounts` and its change notification in a real app process (seed 000 §Allowed
/// accounts): the list the tenant's device allows, nil for none, and a notice when the admin
/// changes it.
@Suite("MAMKit: allowed accounts", .serialized, .timeLimit(.minutes(2)))
struct AllowedAccountsTests {
    @Test func theAppReadsTheAllowedAccountsAndHearsWhenTheAdminChangesThem() throws {
        let dir = "/tmp/mamkit-allowed-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let policies = TestBroker.root + "/Policies/contoso"
        try FileManager.default.copyItem(atPath: policies + "/policies", toPath: dir + "/policies")
        try FileManager.default.copyItem(atPath: policies + "/tenant.json", toPath: dir + "/tenant.json")
        let b = try KitBroker(tenant: dir + "/tenant.json")
        defer { b.stop() }
        let mail = try b.launch("Mail", user: "adele@contoso.com")
        #expect(try mail.send("allowed-accounts")["accounts"]?.isNull == true, "no restriction")

        var json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/tenant.json"))) as! [String: Any]
        var device = json["device"] as! [String: Any]
        device["allowedAccounts"] = ["adele@contoso.com"]
        json["device"] = device
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: dir + "/tenant.json"))
        kill(b.pid, SIGHUP)
        let heard = try mail.send("wait", "allowed-accounts", "10")
        #expect(heard["accounts"]?.array?.compactMap(\.string) == ["adele@contoso.com"], "\(heard)")
        #expect(try mail.send("allowed-accounts")["accounts"]?.array?.compactMap(\.string) == ["adele@contoso.com"])
        mail.finish()
    }
}

/// `registeredAccountIds` (SDK-API §6): an account stays registered while its enrollment
/// succeeded or waits for the 24-hour retry (seed 000 §Enrollment), and goes with an
/// unenrollment; a notice read after the unenrollment does not bring it back.
@Suite("MAMKit: registered accounts", .serialized, .timeLimit(.minutes(2)))
struct RegisteredAccountsTests {
    @Test func aFailedEnrollmentStaysRegisteredUntilTheAccountIsUnenrolled() throws {
        let b = try KitBroker()
        defer { b.stop() }
        // Chat: no policy targets adele for it (225), so she is registered but not enrolled.
        let chat = try b.launch("Chat", user: "adele@contoso.com")
        #expect(try chat.send("enroll", "adele@contoso.com")["status"]?.number == 225)
        let first = try chat.send("registered")
        #expect(first["accounts"]?.array?.compactMap(\.string) == ["adele@contoso.com"], "\(first)")
        // Chat also enrolls its user at launch (AutoEnrollOnLaunch); that notice may be read
        // after the unenrollment, and must not register her again.
        let gone = try chat.send("unenroll", "adele@contoso.com", "keep")
        let after = try chat.send("registered")
        #expect(after["accounts"]?.array?.isEmpty == true, "\(gone) \(after)")
        _ = try chat.send("wait", "notice", "2")
        #expect(try chat.send("registered")["accounts"]?.array?.isEmpty == true, "a late notice registers nobody")
        chat.finish()
    }

    /// The SDK keeps the registered accounts on the device: a relaunched app (its container kept,
    /// as an iOS app's is) still lists the account it registered, and the user's unenrollment
    /// ends that across a relaunch too.
    @Test func registeredAccountsSurviveARelaunch() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let chat = try b.launch("Chat", user: "adele@contoso.com", keepContainer: true)
        #expect(try chat.send("enroll", "adele@contoso.com")["status"]?.number == 225)
        #expect(try chat.send("registered")["accounts"]?.array?.compactMap(\.string) == ["adele@contoso.com"])
        chat.finish()
        let again = try b.launch("Chat", user: "adele@contoso.com", keepContainer: true)
        let registered = try again.send("registered")
        #expect(registered["accounts"]?.array?.compactMap(\.string) == ["adele@contoso.com"], "\(registered)")
        _ = try again.send("unenroll", "adele@contoso.com", "keep")
        again.finish()
        let third = try b.launch("Chat", keepContainer: true)
        let none = try third.send("registered")
        #expect(none["accounts"]?.array?.isEmpty == true, "\(none)")
        third.finish()
    }
}
