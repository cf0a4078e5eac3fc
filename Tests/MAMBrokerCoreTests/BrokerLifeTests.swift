import Foundation
import Logging
@testable import MAMBroker
import MAMBrokerCore
import MAMTestSupport
import Testing

/// The broker's start and stop (issue 20): `stop` used to wait forever for a loop that never
/// ran, when `start` was never called or threw.
@Suite("Broker: start and stop", .hangGuard)
struct BrokerLifeTests {
    static func broker(_ dir: String) throws -> Broker {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return try Broker(Broker.Configuration(deviceDirectory: dir), tenant: CoreLab.sampleTenant, apps: CoreLab.sampleApps,
                          starter: nil, logger: Logger(label: "test"))
    }

    /// Runs `stop` twice on a thread of its own; true when both returned within ten seconds.
    /// The thread lets go of the broker before it signals: the broker's state database closes
    /// (and SQLite removes its log) when the last reference goes, which must come before the test
    /// removes the folder, or the folder is left behind, empty.
    static func stopsInTime(_ broker: Broker) -> Bool {
        let done = DispatchSemaphore(value: 0)
        let held = Held(broker)
        Thread {
            held.broker?.stop()
            held.broker?.stop()
            held.broker = nil
            done.signal()
        }.start()
        return done.wait(timeout: .now() + 10) == .success
    }

    /// Waits until `broker` has gone, for at most ten seconds; true when it went. `stop` returns
    /// once the loop has ended; its thread lets go of the broker a moment later.
    static func released(_ broker: () -> Broker?) -> Bool {
        let deadline = Date(timeIntervalSinceNow: 10)
        while broker() != nil {
            if Date() >= deadline { return false }
            usleep(1000)
        }
        return true
    }

    /// Removes a stopped broker's folder, again while that fails, for at most ten seconds; nil
    /// once it is gone, else why not. The state database closes as the broker goes, and SQLite
    /// then deletes its log: a removal that listed the log before was refused it ("no such
    /// file") and left the folder behind, emptied by SQLite (1 run in 30, seen after full
    /// suites as `/tmp/mamlab-started-*`).
    static func removed(_ dir: String) -> String? {
        let deadline = Date(timeIntervalSinceNow: 10)
        while true {
            do {
                try FileManager.default.removeItem(atPath: dir)
                return nil
            } catch {
                if !FileManager.default.fileExists(atPath: dir) { return nil }
                if Date() >= deadline { return "\(error)" }
                usleep(1000)
            }
        }
    }

    final class Held: @unchecked Sendable {
        var broker: Broker?
        init(_ broker: Broker) { self.broker = broker }
    }

    @Test func aBrokerThatNeverStartedStopsAtOnce() throws {
        let dir = "/tmp/mamlab-unstarted-\(UUID().uuidString.prefix(8))"
        defer { _ = Self.removed(dir) }
        #expect(Self.stopsInTime(try Self.broker(dir)))
    }

    @Test func aBrokerWhoseStartThrewStops() throws {
        let dir = "/tmp/mamlab-nostart-\(UUID().uuidString.prefix(8))"
        defer { _ = Self.removed(dir) }
        var configuration = Broker.Configuration(deviceDirectory: dir)
        configuration.publicSocket = dir + "/no-such-folder/mambroker.sock"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        var broker: Broker? = try Broker(configuration, tenant: CoreLab.sampleTenant, apps: CoreLab.sampleApps, starter: nil, logger: Logger(label: "test"))
        #expect(throws: (any Error).self) { try broker!.start() }
        #expect(Self.stopsInTime(broker!))
        broker = nil
    }

    @Test func aStartedBrokerStopsOnceAndAgain() throws {
        let dir = "/tmp/mamlab-started-\(UUID().uuidString.prefix(8))"
        defer { _ = Self.removed(dir) }
        var broker: Broker? = try Self.broker(dir)
        try broker!.start()
        let socket = broker!.configuration.publicSocket
        weak var stopped = broker
        #expect(Self.stopsInTime(broker!))
        broker = nil
        #expect(!FileManager.default.fileExists(atPath: socket))
        #expect(Self.released { stopped }, "the stopped broker was still held 10 s after stop returned")
        let left = Self.removed(dir)
        #expect(left == nil, "\(dir) is left behind: \(left ?? "")")
    }
}
