import Foundation
import Glibc
import MAMScript
import MAMTestSupport
import Testing

/// An app's security records past its minute's budget are counted, and the count is audited
/// when the minute ends. When the first of the next minute's records came before the loop's own
/// once-a-second look, the count was audited while the core's effects were being carried out,
/// reading the core the interpreter held: an exclusivity violation, and the broker ended, for
/// every app. Any app could do it: refused key requests across a minute's end were enough.
@Suite("An app's flood of security records across a minute's end", .timeLimit(.minutes(3)))
struct SecurityMinuteTests {
    @Test func aFloodOfRefusedKeyRequestsAcrossAMinutesEndLeavesTheBrokerServing() throws {
        let b = try TestBroker(prefix: "mamlab-minute")
        defer { b.stop() }
        // The broker's minutes are CLOCK_MONOTONIC's, which this process reads too: the flood
        // starts 3 s before one ends (a wait of at most a minute).
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let wait = (60 - Int(now.tv_sec % 60) - 3 + 60) % 60
        usleep(useconds_t(wait) * 1_000_000)
        // 150 refused requests at once, past the minute's 120, then one every 20 ms for about
        // six seconds: some arrive after the minute's end and before the loop's next look.
        let steps = ["hello"] + Array(repeating: ["key", "ben@contoso.com"], count: 150).flatMap { $0 }
            + Array(repeating: ["sleep", "20", "key", "ben@contoso.com"], count: 300).flatMap { $0 } + ["bye"]
        let lines = try ScriptedProcess(TestBroker.bin + "/mamlaunch",
                                        ["run", "--manifest", "\(TestBroker.root)/Apps/Dialer/Info.plist", "--broker", b.launcherSocket,
                                         "--containers", b.containers, "--developer", "--", TestBroker.bin + "/Courier"] + steps,
                                        environment: TestBroker.environment, deadline: 120).allLines()
        let refused = lines.filter { $0["step"]?.string == "key" && $0["error"]?.string == "notAllowed" }
        #expect(refused.count == 450, "\(lines.suffix(3))")
        #expect(b.process?.isRunning == true, "the broker ended: \(((try? String(contentsOfFile: b.log, encoding: .utf8)) ?? "").prefix(3_000))")
        // Another app is still served.
        let docs = try ScriptedProcess(TestBroker.bin + "/mamlaunch",
                                       ["run", "--manifest", "\(TestBroker.root)/Apps/Docs/Info.plist", "--broker", b.launcherSocket,
                                        "--containers", b.containers, "--developer", "--", TestBroker.bin + "/Courier", "hello", "paste", "bye"],
                                       environment: TestBroker.environment).allLines()
        #expect(docs.contains { $0["step"]?.string == "paste" && $0["error"] == nil }, "\(docs)")
        // The minute's overflow was counted, as before.
        b.kill(SIGTERM)
        let counted = b.auditRecords.filter { $0["channel"] as? String == "security" && ($0["source"] as? [String: Any])?["app"] as? String == "com.contoso.dialer" }
        #expect(counted.reduce(0) { $0 + ($1["size"] as? Int ?? 0) } > 0, "\(counted)")
    }
}
