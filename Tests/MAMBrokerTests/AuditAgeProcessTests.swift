import Foundation
import Glibc
import MAMWire
import MAMTestSupport
import Testing

/// Retention by age through a real broker, on its virtual clock: `mamlaunch clock advance`
/// moves the audit's time, so a day passes without a sleep.
@Suite("The broker drops audit records past their age", .serialized, .hangGuard)
struct AuditAgeProcessTests {
    @Test func aDecisionOlderThanTheAuditsAgeIsGoneAndTheSecurityEventStays() throws {
        let b = try BrokerHarness(extraArguments: ["--clock", "virtual", "--audit-max-age", "1d", "--security-audit-max-age", "10d"])
        defer { b.stop() }
        let s = try AuditDurabilityTests.connect(b)
        defer { s.close() }
        try s.send(Frame(id: 2, .paste))
        _ = s.receive(within: 10)
        // A security event: a token for an account nobody signed in to this app.
        try s.send(Frame(id: 3, .acquireToken(account: "adele@contoso.com")))
        _ = s.receive(within: 10)
        let paste = { (r: [String: Any]) in r["channel"] as? String == "paste" && r["request"] as? Int == 2 }
        let token = { (r: [String: Any]) in r["channel"] as? String == "ca.token" && r["request"] as? Int == 3 }
        #expect(b.auditRecords.contains(where: paste) && b.auditRecords.contains(where: token))

        let (status, said) = try VirtualClockTests.mamlaunch(["clock", "advance", "2d", "--broker", b.launcherSocket])
        #expect(status == 0, "\(said)")
        // The loop ages the audit each second: bounded wait for the paste to go.
        let deadline = Date(timeIntervalSinceNow: 10)
        while b.auditRecords.contains(where: paste), Date() < deadline { usleep(50_000) }
        let records = b.auditRecords
        #expect(!records.contains(where: paste), "a two-day-old decision outlived its one day")
        #expect(records.contains(where: token), "the security event is kept its own ten days")
        // A new decision is recorded as before, at the clock's new time.
        try s.send(Frame(id: 4, .paste))
        _ = s.receive(within: 10)
        #expect(b.auditRecords.contains { $0["request"] as? Int == 4 && $0["channel"] as? String == "paste" })
    }
}
