import Foundation
import Glibc
import MAMKit
import MAMWire
import MAMTestSupport
import Testing

/// A broker that goes silent, or answers with a frame that cannot be read, does not leave an
/// app waiting forever (issue 20): the request fails with a reason.
@Suite("MAMKit: requests end even when the broker does not answer", .hangGuard)
struct RequestTimeoutTests {
    /// The app's hello, read by the test playing a broker (bounded; polled without blocking, so
    /// the app's task gets the threads it needs to send it).
    static func hello(_ broker: WireSocket) async throws -> Frame {
        var pfd = pollfd(fd: broker.descriptor.rawValue, events: Int16(POLLIN), revents: 0)
        let deadline = ContinuousClock.now + .seconds(10)
        while poll(&pfd, 1, 0) == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        try #require(pfd.revents & Int16(POLLIN) != 0, "the app said hello")
        let frame = try #require(try broker.receive()?.frame.get())
        guard case .hello = frame.message else { throw MAMKitError(.unexpectedReply, "not a hello: \(frame)") }
        return frame
    }

    @Test func aRequestTheBrokerNeverAnswersFailsAtItsTimeout() async throws {
        let (broker, app) = try WireSocket.pair()
        defer { broker.close() }
        let starting = Task { try await MAMApp.start(connection: app.release()!, requestTimeout: 0.5) }
        _ = try await Self.hello(broker)
        // The broker never answers: only the time-out can end the request (the suite's time
        // limit would stop a hang; the code says it was the time-out that ended it).
        await #expect { _ = try await starting.value } throws: { ($0 as? MAMKitError)?.code == .timedOut }
    }

    @Test func aReplyThatCannotBeReadFailsItsRequestAtOnce() async throws {
        let (broker, app) = try WireSocket.pair()
        defer { broker.close() }
        // Were the frame dropped, the request would end at its time-out, as `timedOut`: the code
        // tells the two apart, and the time-out keeps a regression from hanging the suite.
        let starting = Task { try await MAMApp.start(connection: app.release()!, requestTimeout: 20) }
        let hello = try await Self.hello(broker)
        // A welcome under the hello's id whose header announces more bytes than came.
        var bytes: [UInt8] = [0x4D, 0x57, Wire.version, 0x02]
        withUnsafeBytes(of: hello.id.littleEndian) { bytes += $0 }
        withUnsafeBytes(of: UInt32(100).littleEndian) { bytes += $0 }
        try broker.sendRaw(bytes)
        await #expect { _ = try await starting.value } throws: { ($0 as? MAMKitError)?.code == .unexpectedReply }
    }
}
