import Foundation
import MAMTestSupport
import Testing

/// Guessing an account's password through `mamlaunch signin`, as fast as the broker answers:
/// after three wrong passwords each attempt waits twice as long as the last, after ten in a row
/// the account is locked for 30 minutes (even the right password is refused), and each refusal
/// is a security record. The broker's virtual clock stands in for the waits.
@Suite("Sign-in: guessing backs off and locks", .serialized, .timeLimit(.minutes(2)))
struct PasswordGuessingTests {
    static let ben = "ben@contoso.com"

    static func mamlaunch(_ arguments: [String], input: String? = nil) throws -> (status: Int32, said: String) {
        let r = try ChildProcess.run(KitBroker.bin + "/mamlaunch", arguments, input: input, timeout: 30)
        return (r.status, r.out + r.err)
    }

    static func signIn(_ b: KitBroker, pid: Int32, password: String) throws -> (status: Int32, said: String) {
        try mamlaunch(["signin", "--user", ben, "--pid", "\(pid)", "--broker", b.launcherSocket], input: password + "\n")
    }

    @Test func wrongPasswordsWaitThenLockTheAccountAndEachRefusalIsAudited() throws {
        let b = try KitBroker(extraArguments: ["--clock", "virtual"])
        defer { b.stop() }
        let mail = try b.launch("Mail")
        defer { mail.finish() }
        let pid = try CredentialSignInProcessTests().pid(of: "com.contoso.mail", in: b)
        // Three wrong passwords are answered at once: a person mistypes.
        for n in 1...3 {
            let r = try Self.signIn(b, pid: pid, password: "guess-\(n)")
            #expect(r.status != 0 && r.said.contains("wrong or missing credential"), "attempt \(n): \(r.said)")
        }
        // The fourth, at once, is refused unchecked, saying how long to wait.
        let early = try Self.signIn(b, pid: pid, password: "guess-4")
        #expect(early.status != 0 && early.said.contains("too many wrong passwords for ben@contoso.com; try again in 2 s"), "\(early.said)")
        // Waiting each time as told, the tenth wrong password in a row locks the account.
        var last = (status: Int32(0), said: "")
        for n in 4...10 {
            _ = try Self.mamlaunch(["clock", "advance", "5m", "--broker", b.launcherSocket])
            last = try Self.signIn(b, pid: pid, password: "guess-\(n)")
            #expect(last.status != 0 && last.said.contains("wrong or missing credential"), "attempt \(n): \(last.said)")
        }
        // Locked: even the right password is refused, unchecked, until 30 minutes have passed.
        let locked = try Self.signIn(b, pid: pid, password: "contoso-ben")
        #expect(locked.status != 0 && locked.said.contains("is locked after 10 wrong passwords in a row; try again in 30 min"), "\(locked.said)")
        #expect(try mail.send("enroll", Self.ben)["status"] == nil, "not signed in while locked")
        _ = try Self.mamlaunch(["clock", "advance", "31m", "--broker", b.launcherSocket])
        let right = try Self.signIn(b, pid: pid, password: "contoso-ben")
        #expect(right.status == 0, "after the lock's time the right password signs Ben in: \(right.said)")
        // The security log holds every refusal, the lock and the sign-in.
        let outcomes = b.auditRecords.filter { $0["channel"] as? String == "signIn" }.compactMap { $0["outcome"] as? String }
        #expect(outcomes.filter { $0 == "badCredential" }.count == 10, "\(outcomes)")
        #expect(outcomes.filter { $0 == "throttled" }.count == 2, "\(outcomes)")
        #expect(outcomes.filter { $0 == "locked" }.count == 1, "\(outcomes)")
        #expect(outcomes.last == "signedIn", "\(outcomes)")
    }
}
