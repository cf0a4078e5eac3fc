import Foundation
import Glibc
@testable import MAMBroker
import MAMBrokerCore
import MAMWire
import Synchronization
import Testing

/// Audit retention by age, on an injected wall clock: ordinary decisions go after their age,
/// security events are kept apart and longer, and what the broker restarts on is aged from the
/// records' own times.
@Suite("The audit is kept by age as well as size")
struct AuditAgeTests {
    static let day: Int = 86_400

    /// A wall clock the test moves.
    final class Wall: Sendable {
        let seconds = Atomic<Int>(1_800_000_000)
        func advance(hours: Int) { seconds.add(hours * 3600, ordering: .relaxed) }
        var now: @Sendable () -> timespec { { [self] in timespec(tv_sec: seconds.load(ordering: .relaxed), tv_nsec: 0) } }
    }

    static func entry(_ channel: String, _ outcome: String) -> AuditEntry {
        AuditEntry(session: SessionID(1), request: 1, channel: channel, source: .init(app: "com.example.a", identity: "", managed: false),
                   target: nil, dataType: nil, size: nil, outcome: outcome, rule: "r", tag: "chosen", detail: nil, revision: 1)
    }

    static func ids(_ folder: String) -> Set<Int> {
        Set(AuditFile.allRecords(inFolder: folder).compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? Int
        })
    }

    @Test func recordsOlderThanTheirAgeAreDroppedAndSecurityEventsAreKeptLonger() throws {
        let folder = "/tmp/mamlab-audit-age-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let wall = Wall()
        let open = { try AuditTrail(folder: folder, maximumBytes: 1 << 20, maximumAge: .seconds(Self.day), securityMaximumAge: .seconds(10 * Self.day), now: wall.now) }
        var trail = try open()
        trail.append(Self.entry("paste", "allowed"), id: 1)
        trail.append(Self.entry("key", "refused"), id: 2)
        // The record carries the injected time.
        #expect(AuditFile.records(atPath: folder + "/" + AuditFile.decisions).first?.contains("\"time\":\"2027-01-15T08:00:00.000Z\"") == true)
        wall.advance(hours: 7)
        trail.append(Self.entry("paste", "allowed"), id: 3)
        trail.expire()
        #expect(Self.ids(folder) == [1, 2, 3], "nothing is a day old yet")

        // A restart reads the first record's time from the log, not from its own start.
        trail = try open()
        wall.advance(hours: 18)
        trail.expire()
        #expect(Self.ids(folder) == [2, 3], "record 1 is 25 hours old: gone; record 3 is 18 hours old")
        wall.advance(hours: 7)
        trail.expire()
        #expect(Self.ids(folder) == [2], "record 3 is a day old too; the security event stays")

        // A flood of new decisions does not bring the old ones back, nor push the security event out.
        for id in 10..<200 { trail.append(Self.entry("paste", "allowed"), id: UInt64(id)) }
        #expect(Self.ids(folder).contains(2))
        wall.advance(hours: 10 * 24)
        trail.expire()
        #expect(!Self.ids(folder).contains(2), "the security event goes after its own ten days")
        #expect(Self.ids(folder).isEmpty, "and so did every decision")
        // The folder holds no file for the aged logs but the two current ones.
        let left = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        #expect(left == [AuditFile.decisions, AuditFile.security], "\(left)")
    }

    @Test func withoutAnAgeOnlyTheSizeRotates() throws {
        let folder = "/tmp/mamlab-audit-age-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let wall = Wall()
        let trail = try AuditTrail(folder: folder, maximumBytes: 1 << 20, now: wall.now)
        trail.append(Self.entry("paste", "allowed"), id: 1)
        wall.advance(hours: 24 * 3650)
        trail.expire()
        #expect(Self.ids(folder) == [1])
    }
}
