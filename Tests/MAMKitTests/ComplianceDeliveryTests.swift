import Foundation
import MAMScript
import MAMTestSupport
import Testing

/// A remediation's compliance status (seed 003, App Protection CA) is sent once, at the broker's
/// tick after the remediation's time has come, to each running instance the account is signed in
/// to. It waits in that instance's connection until the app reads it: an app that is busy, or a
/// broker kept busy meanwhile, makes it late, never lost. It is lost only with the connection
/// (a receiver that lets its connection fill is disconnected, and asks `remediationProgress`
/// when it comes back).
@Suite("Compliance status: late under load, not lost", .serialized, .timeLimit(.minutes(2)))
struct ComplianceDeliveryTests {
    static let adeleOID = "5f1c7a2e-3b4d-4e6f-8a9b-0c1d2e3f4a5b"

    @Test func aStatusSentWhileTheAppIsNotReadingIsThereWhenItReads() throws {
        let b = try KitBroker(extraArguments: ["--clock", "virtual"])
        defer { b.stop() }
        // Mail as Adele asks for a remediation, then reads nothing for three seconds.
        let mail = try b.courier("Mail", user: "adele@contoso.com",
                                 ["hello", "remediate", Self.adeleOID, "silent", "sleep", "3000", "wait-compliance", "0.2", "bye"])
        let accepted = try mail.waitForLine("the remediation accepted") { $0["step"]?.string == "remediate" }
        #expect(accepted?["accepted"]?.string == "started", "\(accepted ?? .null)")
        let asleep = Date()
        // Meanwhile the remediation's time comes, and the broker is kept busy by check-ins of
        // every app, each a notice for Mail too, queued in its connection ahead of the status.
        for _ in 0..<4 {
            let advanced = try ChildProcess.run(KitBroker.bin + "/mamlaunch", ["clock", "advance", "60s", "--broker", b.launcherSocket], timeout: 10)
            #expect(advanced.status == 0, "\(advanced.err)")
            let synced = try ChildProcess.run(KitBroker.bin + "/mamlaunch", ["sync", "--broker", b.launcherSocket], timeout: 10)
            #expect(synced.status == 0, "\(synced.err)")
        }
        // All of it while Mail slept, or the test proves nothing.
        #expect(Date().timeIntervalSince(asleep) < 2.5, "the clock and the check-ins took longer than Mail's sleep")
        // Woken, it finds the status at once (a fifth of a second is all it waits).
        let lines = mail.allLines()
        let status = lines.first { $0["step"]?.string == "wait-compliance" }
        #expect(status?["compliance"]?.number == 0 && status?["title"]?.string == "Access confirmed",
                "the status was not in the connection: \(lines)")
        #expect(lines.last?["step"]?.string == "bye" && lines.last?["closed"] == nil, "\(lines)")
    }
}
