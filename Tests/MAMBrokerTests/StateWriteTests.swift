import Foundation
import GRDB
import Glibc
import MAMWire
import SystemPackage
import MAMTestSupport
import Testing

/// The broker's state writes are the persistence queue's, not the loop's: while one waits for
/// the disk the other apps are answered, and the app whose enrollment it records hears of it
/// only once it is written, so a kill -9 right after the answer loses nothing the app was told.
@Suite("State writes are off the loop and done before the answer", .serialized, .hangGuard)
struct StateWriteTests {
    /// Opens the broker's state database beside it, as another writer would.
    static func database(_ b: BrokerHarness) throws -> DatabaseQueue {
        var c = Configuration()
        // The test holds a write transaction across two accesses on purpose.
        c.allowsUnsafeTransactions = true
        return try DatabaseQueue(path: b.device + "/state.sqlite", configuration: c)
    }

    static func savedEnrollments(_ b: BrokerHarness) throws -> String {
        try database(b).read { try String.fetchOne($0, sql: "SELECT value FROM meta WHERE key = 'enrollments'") } ?? ""
    }

    /// The first frame that `matches`, skipping the others; nil when none came by the deadline
    /// (which a test may expect).
    static func first(_ s: WireSocket, within seconds: Double, _ matches: (Frame) -> Bool) -> Message? {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while true {
            var ready = pollfd(fd: s.descriptor.rawValue, events: Int16(POLLIN), revents: 0)
            let remaining = Int32(max(0, deadline.timeIntervalSinceNow) * 1000)
            guard poll(&ready, 1, remaining) == 1, let r = s.receive() else { return nil }
            if case .success(let f) = r.frame, matches(f) { return f.message }
        }
    }

    /// The answer to request `id`.
    static func answer(_ s: WireSocket, _ id: UInt32, within seconds: Double) -> Message? {
        first(s, within: seconds) { $0.id == id }
    }

    /// The first enrollment notice the app hears.
    static func notice(_ s: WireSocket, within seconds: Double) -> Message? {
        first(s, within: seconds) { if case .enrollmentNotice = $0.message { true } else { false } }
    }

    /// Mail, handed over by the launcher with adele signed in: it enrolls her at hello
    /// (AutoEnrollOnLaunch), which the broker must write before Mail hears of it.
    static func mail(_ launcher: WireSocket) throws -> WireSocket {
        let (mine, theirs) = try WireSocket.pair()
        try LauncherMessage.adopt(Adoption(bundleID: "com.contoso.mail", pid: getpid(), account: "adele@contoso.com", developer: true))
            .send(on: launcher, descriptor: theirs.descriptor)
        theirs.close()
        try mine.send(Frame(id: 1, .hello(minVersion: 1, maxVersion: 1, integratesSDK: true)))
        return mine
    }

    @Test func anEnrollmentIsAnsweredOnceWrittenWhileTheLoopServesTheOthers() throws {
        let b = try BrokerHarness()
        defer { b.stop() }
        let launcher = try WireSocket.connect(b.launcherSocket)
        defer { launcher.close() }
        let quiet = try FloodTests.adopt(launcher, "com.contoso.docs")
        defer { quiet.close() }
        // A first decision, so the audit's block of ids is reserved before the disk is held.
        try quiet.send(Frame(id: 2, .paste))
        #expect(Self.answer(quiet, 2, within: 10) != nil)

        // Another writer holds the database: the broker's write of the enrollment must wait.
        let other = try Self.database(b)
        try other.writeWithoutTransaction { try $0.execute(sql: "BEGIN IMMEDIATE") }
        var held = true
        defer { if held { try? other.writeWithoutTransaction { try $0.execute(sql: "ROLLBACK") } } }
        let mail = try Self.mail(launcher)
        defer { mail.close() }
        // The other apps are answered meanwhile (the loop is not waiting for the disk)...
        for id in UInt32(4)..<UInt32(14) {
            // The database stays held until the commit below: an answer at all says the loop
            // did not wait for it.
            try quiet.send(Frame(id: id, .paste))
            #expect(Self.answer(quiet, id, within: 10) != nil, "the quiet app's paste waited for the held database")
        }
        // ...but Mail is not told it is enrolled before it is written.
        #expect(Self.notice(mail, within: 0.5) == nil, "Mail was told of its enrollment before it was written")
        try other.writeWithoutTransaction { try $0.execute(sql: "COMMIT") }
        held = false
        let told = Self.notice(mail, within: 15)
        guard case let .enrollmentNotice(_, account, status)? = told else {
            Issue.record("Mail was never told of its enrollment")
            return
        }
        #expect(account == "adele@contoso.com" && status == 100, "\(String(describing: told))")

        // kill -9 at once: what Mail was told is in the database, and a restarted broker knows it.
        b.kill(SIGKILL)
        let saved = try Self.savedEnrollments(b)
        #expect(saved.contains("\"account\":\"adele@contoso.com\"") && saved.contains("\"state\":\"enrolled\""), "\(saved.prefix(400))")
        try b.start()
        let launcherAgain = try WireSocket.connect(b.launcherSocket)
        defer { launcherAgain.close() }
        let again = try FloodTests.adopt(launcherAgain, "com.contoso.mail", account: "adele@contoso.com")
        defer { again.close() }
        try again.send(Frame(id: 2, .enroll(account: "adele@contoso.com")))
        guard case let .enrollmentNotice(_, _, repeated)? = Self.answer(again, 2, within: 10) else {
            Issue.record("the restarted broker did not answer the repeated enrollment")
            return
        }
        #expect(repeated == 208, "already enrolled after the restart")
    }
}
