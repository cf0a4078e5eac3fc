import Dispatch
import Foundation
import Glibc
import MAMTestSupport
import MAMWire
import SystemPackage
import Testing

/// The audit's promises through a real broker: an answered decision is on record even when the
/// broker is killed the next instant, a flood of ordinary decisions cannot rotate a security
/// event away, and only root reads any of it.
@Suite("The audit survives the broker and the floods", .serialized, .hangGuard)
struct AuditDurabilityTests {
    /// Says hello as an unknown app on the public socket.
    static func connect(_ b: BrokerHarness) throws -> WireSocket {
        let s = try WireSocket.connect(b.publicSocket)
        try s.send(Frame(id: 1, .hello(minVersion: 1, maxVersion: 1, integratesSDK: false)))
        guard case .welcome? = try? s.receive(within: 10)?.frame.get().message else { throw WireError(.internalError, "no welcome") }
        return s
    }

    @Test func everyAnsweredDecisionIsInTheLogWholeAfterAKill9InTheMiddleOfAFlood() throws {
        let b = try BrokerHarness(extraArguments: ["--requests-per-second", "1000000"])
        defer { b.stop() }
        let s = try Self.connect(b)
        defer { s.close() }
        // Pastes kept 32 deep, so the broker is busy deciding when the kill comes.
        let killAfter = 2000
        let killNow = DispatchSemaphore(value: 0), killed = DispatchSemaphore(value: 0)
        let killer = Thread { [b] in
            _ = killNow.wait(timeout: .now() + 30)
            b.kill(SIGKILL)
            killed.signal()
        }
        killer.start()
        var answered: Set<UInt32> = []
        var next: UInt32 = 2, inFlight = 0, sending = true
        while true {
            while sending && inFlight < 32 {
                do { try s.send(Frame(id: next, .paste)) } catch { sending = false; break }
                next += 1
                inFlight += 1
            }
            guard inFlight > 0, let got = s.receive(within: 10), let frame = try? got.frame.get() else { break }
            inFlight -= 1
            if case .pasteResult = frame.message { answered.insert(frame.id) }
            if answered.count == killAfter { killNow.signal() }
        }
        killNow.signal()
        #expect(killed.wait(timeout: .now() + 40) == .success, "the broker was killed and reaped")
        #expect(answered.count >= killAfter, "the flood was answered until the kill")

        let lines = AuditFile.records(atPath: b.audit)
        let records = lines.map { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(records.allSatisfy { $0 != nil }, "every committed line is a whole record")
        let logged = Set(records.compactMap { r -> UInt32? in
            guard let r, r["channel"] as? String == "paste", let request = r["request"] as? Int else { return nil }
            return UInt32(request)
        })
        let missing = answered.subtracting(logged)
        #expect(missing.isEmpty, "\(missing.count) of \(answered.count) answered decisions are not in the log, e.g. \(missing.sorted().prefix(5))")

        // The broker starts again on the same log and carries on after the last whole record.
        try b.start()
        let again = try Self.connect(b)
        defer { again.close() }
        try again.send(Frame(id: 9, .paste))
        _ = again.receive(within: 10)
        #expect(b.auditRecords.last.map { $0["request"] as? Int == 9 && $0["channel"] as? String == "paste" } == true)
        #expect(AuditFile.records(atPath: b.audit).allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) != nil })
    }

    @Test func aFloodOfDecisionsDoesNotRotateASecurityEventAway() throws {
        let b = try BrokerHarness(extraArguments: ["--audit-max-bytes", "4096"])
        defer { b.stop() }
        let s = try Self.connect(b)
        defer { s.close() }
        // An unknown app asks for a token for an account nobody signed in to it: refused, and a
        // security event.
        try s.send(Frame(id: 2, .acquireToken(account: "adele@contoso.com")))
        _ = s.receive(within: 10)
        for id in UInt32(3)..<303 {
            try s.send(Frame(id: id, .paste))
            _ = s.receive(within: 10)
        }
        let records = b.auditRecords
        #expect(records.filter { $0["channel"] as? String == "paste" }.count < 300,
                "the flood rotated some of its ordinary decisions away (the control)")
        #expect(records.contains { $0["channel"] as? String == "ca.token" && $0["outcome"] as? String == "notSignedIn" && $0["request"] as? Int == 2 },
                "the refused token request is still on record")
    }

    @Test func onlyRootReadsTheAudit() throws {
        let b = try BrokerHarness()
        defer { b.stop() }
        let s = try Self.connect(b)
        defer { s.close() }
        try s.send(Frame(id: 2, .paste))
        _ = s.receive(within: 10)
        var st = stat()
        #expect(stat(b.auditFolder, &st) == 0 && st.st_mode & 0o777 == 0o700, "the folder: \(String(st.st_mode & 0o777, radix: 8))")
        for name in [AuditFile.decisions, AuditFile.security] {
            #expect(stat(b.auditFolder + "/" + name, &st) == 0 && st.st_mode & 0o777 == 0o600, "\(name): \(String(st.st_mode & 0o777, radix: 8))")
        }
    }

    @Test func anAppPastItsBudgetIsRefusedUnreadAndTheRefusalsAreCountedInTheAudit() throws {
        let b = try BrokerHarness(extraArguments: ["--requests-per-second", "50"])
        defer { b.stop() }
        let s = try Self.connect(b)
        defer { s.close() }
        var decided = 0, refused = 0
        for id in UInt32(2)..<202 {
            try s.send(Frame(id: id, .paste))
            switch try? s.receive(within: 10)?.frame.get().message {
            case .pasteResult?: decided += 1
            case .error(.limitReached, _)?: refused += 1
            default: Issue.record("request \(id): neither decided nor refused")
            }
        }
        // 200 requests in well under a second, or across one turn of the second at most.
        #expect(decided <= 100 && refused >= 100, "decided \(decided), refused \(refused)")
        let app = "unknown.pid\(getpid())"
        func counted() -> Int {
            b.auditRecords.filter { $0["channel"] as? String == "rate" && ($0["source"] as? [String: Any])?["app"] as? String == app }
                .reduce(0) { $0 + ($1["size"] as? Int ?? 0) }
        }
        let deadline = Date(timeIntervalSinceNow: 10)
        while counted() < refused && Date() < deadline { usleep(50_000) }  // recorded at the broker's next second
        #expect(counted() == refused, "every refusal counted in the audit")
        let pastes = b.auditRecords.filter { $0["channel"] as? String == "paste" && ($0["target"] as? [String: Any])?["app"] as? String == app }
        #expect(pastes.count == decided, "only what was decided is audited as a decision")
        // Another app has its own budget.
        #expect(try b.run("Notes", ["hello", "paste"]).step("paste").outcome != nil)
    }

    @Test func anUnmanagedAppsTokenRequestIsNotAuditedAsActingUnderTheAccountItNamed() throws {
        let b = try BrokerHarness()
        defer { b.stop() }
        let launcher = try WireSocket.connect(b.launcherSocket)
        defer { launcher.close() }
        // Notes has no SDK: whoever the user signed in, it acts under no account.
        let (mine, theirs) = try WireSocket.pair()
        defer { mine.close() }
        try LauncherMessage.adopt(Adoption(bundleID: "com.example.notes", pid: getpid(), account: "adele@contoso.com", developer: true))
            .send(on: launcher, descriptor: theirs.descriptor)
        theirs.close()
        try mine.send(Frame(id: 1, .hello(minVersion: 1, maxVersion: 1, integratesSDK: false)))
        _ = mine.receive(within: 10)
        try mine.send(Frame(id: 2, .acquireToken(account: "adele@contoso.com")))
        _ = mine.receive(within: 10)
        let record = try #require(b.auditRecords.last { $0["channel"] as? String == "ca.token" })
        let source = record["source"] as? [String: Any], target = record["target"] as? [String: Any]
        #expect(source?["app"] as? String == "com.example.notes")
        #expect(source?["identity"] as? String != "adele@contoso.com", "acting under no account: \(record)")
        #expect(target?["identity"] as? String == "adele@contoso.com", "the account it asked a token for: \(record)")
    }

    @Test func sandboxViolationsAreSecurityEventsAuditedAtTheFirstTenAndEveryTenfoldCount() throws {
        let b = try BrokerHarness()
        defer { b.stop() }
        let launcher = try WireSocket.connect(b.launcherSocket)
        defer { launcher.close() }
        for _ in 0..<1000 {
            try LauncherMessage.violation(SandboxViolation(bundleID: "com.example.hostile", pid: 4242, syscall: "ptrace", detail: nil,
                                                           action: .denied, time: "2026-11-24T17:00:00Z")).send(on: launcher)
        }
        func counts() -> [Int] {
            AuditFile.records(atPath: b.auditFolder + "/" + AuditFile.security).compactMap {
                let r = try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
                return r?["channel"] as? String == "sandbox" ? r?["size"] as? Int : nil
            }
        }
        let deadline = Date(timeIntervalSinceNow: 10)
        while counts().last != 1000 && Date() < deadline { usleep(20_000) }  // the broker reads them in its own time
        #expect(counts() == Array(1...10) + [100, 1000])
        #expect(!AuditFile.records(atPath: b.audit).contains { $0.contains(#""channel":"sandbox""#) }, "kept apart from ordinary decisions")
    }
}
