import Foundation
import GRDB
import Glibc
import MAMWire
import Testing

/// Issue 21's floods, with a quiet app beside them answered all the while (its 99th percentile
/// is `mamlaunch bench-flood`'s to measure): encrypted pushes to a receiver that hoards them (the broker makes the
/// ciphertext, then refuses beyond the receiver's quota), and enrollments of made-up accounts
/// (which must never reach the service's state, so its writes cannot grow).
@Suite("Issue 21's floods leave the quiet app answered", .serialized, .timeLimit(.minutes(3)))
struct HeldFloodTests {
    enum Kind: String, CaseIterable, Sendable {
        case encryptedPushes, madeUpEnrollments
    }

    /// The receiver: keeps every descriptor it is given, as a hoarding app would.
    final class Hoarder: @unchecked Sendable {
        let socket: WireSocket
        private let lock = NSLock()
        private var kept: [Int32] = []
        private var running = true
        init(_ socket: WireSocket) { self.socket = socket }
        var count: Int { lock.withLock { kept.count } }
        func start() {
            Thread { [self] in
                while lock.withLock({ running }) {
                    // Waits a bounded 200 ms at a time, so that stop() ends it.
                    var ready = pollfd(fd: socket.descriptor.rawValue, events: Int16(POLLIN), revents: 0)
                    guard poll(&ready, 1, 200) == 1 else { continue }
                    guard var r = socket.receive() else { return }
                    if let fd = r.descriptor.take()?.release() { lock.withLock { kept.append(fd) } }
                }
            }.start()
        }
        func stop() {
            lock.withLock { running = false }
            for fd in lock.withLock({ kept }) { close(fd) }
        }
    }

    @Test(arguments: Kind.allCases)
    func theQuietAppIsAnsweredWhileAnotherFloods(_ kind: Kind) throws {
        let b = try BrokerHarness(extraArguments: ["--encrypted-held-per-app", String(8 << 20)])
        defer { b.stop() }
        let launcher = try WireSocket.connect(b.launcherSocket)
        defer { launcher.close() }
        let quiet = try FloodTests.adopt(launcher, "com.contoso.docs", account: nil)
        let hoarder = Hoarder(try FloodTests.adopt(launcher, "com.example.notes", account: nil))
        hoarder.start()
        defer { hoarder.stop() }
        let loud = try FloodTests.adopt(launcher, "com.contoso.mail", account: "adele@contoso.com")
        let document = try SealedDocument.create([UInt8](repeating: 0x51, count: 256 << 10)).release()
        defer { close(document) }
        let flooder = FloodTests.Flooder(socket: loud) { id in
            switch kind {
            case .encryptedPushes: return (.share(target: "com.example.notes", contentType: "com.adobe.pdf", name: "f\(id).pdf"), dup(document))
            case .madeUpEnrollments: return (.enroll(account: "madeup\(id)@contoso.com"), nil)
            }
        }
        _ = flooder.start()
        // Measured once the flood has run long enough to have grown anything it grows (the
        // enrollment answers had tripled after 2.5 s).
        let underWay = Date(timeIntervalSinceNow: 2.5)
        while Date() < underWay { usleep(50_000) }
        #expect(flooder.sent >= 50, "the flood is under way")
        // Each of the quiet app's 200 requests is answered while the flood goes on (how fast is
        // measured by `mamlaunch bench-flood`, not judged here).
        for i in 0..<200 {
            let id = UInt32(10 + i)
            // The quiet app asks what the flood asks, where it can: an enrollment of an
            // account nobody signed in; else a paste.
            try quiet.send(Frame(id: id, kind == .madeUpEnrollments ? .enroll(account: "quiet\(i)@contoso.com") : .paste))
            var answered = false
            while !answered, let r = quiet.receive(within: 30) {
                if case .success(let f) = r.frame, f.id == id { answered = true }
            }
            guard answered else { Issue.record("\(kind): the quiet app's request \(i) went unanswered beside the flood"); break }
            usleep(2_000)
        }
        flooder.running = false
        shutdown(loud.descriptor.rawValue, Int32(SHUT_RDWR))
        switch kind {
        case .encryptedPushes:
            // 8 MiB of 256 KiB ciphertexts (a page of header each): at most 31 held at once.
            #expect(hoarder.count > 0 && hoarder.count <= 32, "the hoarder holds \(hoarder.count)")
        case .madeUpEnrollments:
            // Not one made-up account reached the service's state.
            let state = try DatabaseQueue(path: b.device + "/state.sqlite", configuration: { var c = Configuration(); c.readonly = true; return c }())
            let saved = try state.read { try String.fetchOne($0, sql: "SELECT value FROM meta WHERE key = 'enrollments'") } ?? ""
            #expect(!saved.contains("madeup") && !saved.contains("quiet"), "\(saved.prefix(500))")
        }
    }
}
