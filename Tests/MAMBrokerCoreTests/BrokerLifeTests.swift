import Foundation
import Logging
@testable import MAMBroker
import MAMBrokerCore
import Testing

/// The broker's start and stop (issue 20): `stop` used to wait forever for a loop that never
/// ran, when `start` was never called or threw.
@Suite("Broker: start and stop", .timeLimit(.minutes(1)))
struct BrokerLifeTests {
    static func broker(_ dir: String) throws -> Broker {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return try Broker(Broker.Configuration(deviceDirectory: dir), tenant: CoreLab.sampleTenant, apps: CoreLab.sampleApps,
                          starter: nil, logger: Logger(label: "test"))
    }

    /// Runs `stop` twice on a thread of its own; true when both returned within ten seconds.
    static func stopsInTime(_ broker: Broker) -> Bool {
        let done = DispatchSemaphore(value: 0)
        Thread { broker.stop(); broker.stop(); done.signal() }.start()
        return done.wait(timeout: .now() + 10) == .success
    }

    @Test func aBrokerThatNeverStartedStopsAtOnce() throws {
        let dir = "/tmp/mamlab-unstarted-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(Self.stopsInTime(try Self.broker(dir)))
    }

    @Test func aBrokerWhoseStartThrewStops() throws {
        let dir = "/tmp/mamlab-nostart-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var configuration = Broker.Configuration(deviceDirectory: dir)
        configuration.publicSocket = dir + "/no-such-folder/mambroker.sock"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let broker = try Broker(configuration, tenant: CoreLab.sampleTenant, apps: CoreLab.sampleApps, starter: nil, logger: Logger(label: "test"))
        #expect(throws: (any Error).self) { try broker.start() }
        #expect(Self.stopsInTime(broker))
    }

    @Test func aStartedBrokerStopsOnceAndAgain() throws {
        let dir = "/tmp/mamlab-started-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let broker = try Self.broker(dir)
        try broker.start()
        #expect(Self.stopsInTime(broker))
        #expect(!FileManager.default.fileExists(atPath: broker.configuration.publicSocket))
    }
}
