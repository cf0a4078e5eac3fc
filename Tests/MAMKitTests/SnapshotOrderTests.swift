import Foundation
import Glibc
import MAMKit
import MAMPolicy
import MAMWire
import MAMTestSupport
import Testing

/// Two policy refreshes in flight (a launch notice's and an unenrollment's) can resume the app's
/// tasks in either order. Played here by a broker that answers the second request first: the
/// app must keep the later snapshot, never fall back to the one the broker no longer holds.
@Suite("MAMKit: a later policy snapshot is never replaced by an earlier one", .hangGuard)
struct SnapshotOrderTests {
    static let adele = Account(userIndex: 0, upn: "adele@contoso.com", oid: "5f1c7a2e-3b4d-4e6f-8a9b-0c1d2e3f4a5b")

    /// The next frame the app sends, polled without blocking (the app's tasks need the
    /// threads), within a deadline.
    static func next(_ broker: WireSocket) async throws -> Frame {
        var pfd = pollfd(fd: broker.descriptor.rawValue, events: Int16(POLLIN), revents: 0)
        let deadline = ContinuousClock.now + .seconds(10)
        while poll(&pfd, 1, 0) == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(2)) }
        try #require(pfd.revents & Int16(POLLIN) != 0, "the app sent a frame within 10 s")
        return try #require(try broker.receive()?.frame.get())
    }

    static func snapshot(enrolled: Account?, revision: Int, sequence: Int) throws -> Message {
        var s = PolicySnapshot(app: AppManifest(bundleID: "com.contoso.mail"), enrolled: enrolled, policy: nil, identity: .personal,
                               signedIn: [adele], isMDMManaged: false, revision: revision)
        s.sequence = sequence
        return .policySnapshot(json: String(decoding: try JSONEncoder().encode(s), as: UTF8.self))
    }

    @Test func theAnswerToAnEarlierRequestArrivingLastIsNotTaken() async throws {
        let (broker, appEnd) = try WireSocket.pair()
        defer { broker.close() }
        let starting = Task { try await MAMApp.start(connection: appEnd.release()!, requestTimeout: 20) }
        let hello = try await Self.next(broker)
        try broker.send(Frame(id: hello.id, .welcome(version: Wire.version, bundleID: "com.contoso.mail", managedAccount: nil)))
        let first = try await Self.next(broker)
        #expect(first.message == .policyRequest)
        try broker.send(Frame(id: first.id, try Self.snapshot(enrolled: Self.adele, revision: 1, sequence: 1)))
        let app = try await starting.value
        defer { app.stop() }
        #expect(app.enrollment.enrolledAccount == "adele@contoso.com")

        // Two refreshes: the broker reads them in order, so the second request's snapshot is the
        // later one (made after the unenrollment); its reply is delivered first.
        let earlier = Task { try await app.policyManager.refresh() }
        let a = try await Self.next(broker)
        let later = Task { try await app.policyManager.refresh() }
        let b = try await Self.next(broker)
        #expect(a.message == .policyRequest && b.message == .policyRequest)
        try broker.send(Frame(id: b.id, try Self.snapshot(enrolled: nil, revision: 3, sequence: 3)))
        #expect(try await later.value == 3)
        try broker.send(Frame(id: a.id, try Self.snapshot(enrolled: Self.adele, revision: 2, sequence: 2)))
        #expect(try await earlier.value == 3, "the earlier request returns the snapshot the app holds")
        #expect(app.enrollment.enrolledAccount == nil, "the unenrollment's snapshot stays")
    }
}
