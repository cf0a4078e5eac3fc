import Foundation
import MAMTestSupport
import MAMWire
import Testing

/// One app flooding the broker with decisions cannot push another app's records out of the
/// kept decision logs: past its share (one log's worth) its records go to a log of its own.
@Suite("The audit keeps each app's share", .serialized, .hangGuard)
struct AuditShareTests {
    @Test func aFloodOfOneAppsPastesLeavesMailsDecisionsInTheKeptLogs() throws {
        // Logs of 4 KiB (about ten records), nine kept: a flood of a thousand fills them all.
        let b = try BrokerHarness(extraArguments: ["--audit-max-bytes", "4096", "--requests-per-second", "1000000"])
        defer { b.stop() }
        let mail = try b.run("Mail", user: "adele@contoso.com", ["hello", "paste", "paste", "bye"])
        #expect(mail.filter { $0["step"] as? String == "paste" }.count == 2, "\(mail)")
        let mails = { (r: [String: Any]) in r["channel"] as? String == "paste" && (r["target"] as? [String: Any])?["app"] as? String == "com.contoso.mail" }
        try #require(b.auditRecords.filter(mails).count == 2)
        // A process that connected by itself, pasting as fast as the broker answers.
        let s = try AuditDurabilityTests.connect(b)
        defer { s.close() }
        for n in 0..<1000 {
            try s.send(Frame(id: UInt32(2 + n), .paste))
            _ = s.receive(within: 10)
        }
        let records = b.auditRecords
        #expect(records.filter(mails).count == 2, "Mail's decisions were pushed out of the kept logs")
        // The flood's decisions are still recorded, its newest in a log of its own, which its
        // own flood rotates.
        let own = (try? FileManager.default.contentsOfDirectory(atPath: b.auditFolder + "/apps")) ?? []
        #expect(own.contains("unknown.jsonl"), "\(own)")
        let newest = AuditFile.records(atPath: b.auditFolder + "/apps/unknown.jsonl").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(newest.contains { $0["request"] as? Int == 1001 && $0["channel"] as? String == "paste" }, "the flood's last paste: \(newest.suffix(2))")
    }
}

/// Security events: each app's first 120 a minute are written one by one. Every process that
/// connects to the public socket by itself is one app for this count, however many a local user
/// starts.
@Suite("Security records are bounded for all unknown processes together", .serialized, .hangGuard)
struct UnknownSecurityBudgetTests {
    @Test func fourProcessesAskingForBensIdentityShareOneBudget() throws {
        let b = try BrokerHarness(extraArguments: ["--requests-per-second", "1000000"])
        defer { b.stop() }
        let client = BrokerHarness.root + "/clients/python"
        let script = """
            import socket, sys
            sys.path.insert(0, sys.argv[1])
            import mamwire
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            s.connect(sys.argv[2])
            broker = mamwire.Broker(mamwire.Connection(s.detach()))
            broker.hello(integrates_sdk=False)
            for _ in range(100):
                broker.set_identity("ben@contoso.com")
            print("asked", flush=True)
            """
        let askers = try (0..<4).map { _ in
            try ChildProcess("/usr/bin/python3", ["-c", script, client, b.publicSocket], input: false)
        }
        for asker in askers {
            let status = try asker.waitForExit("an unknown process's 100 requests", timeout: 30)
            #expect(status == 0, "\(asker.standardError)")
        }
        let refused = b.auditRecords.filter { $0["channel"] as? String == "identity" && $0["outcome"] as? String != "allowed" }
        // 120 a minute for them all (240 should the minute turn during the test), not 120 each.
        #expect(refused.count <= 240 && refused.count >= 100, "\(refused.count) written one by one")
    }
}
