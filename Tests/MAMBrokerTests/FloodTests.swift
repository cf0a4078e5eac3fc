import CMAMWire
import Foundation
import Glibc
import Synchronization
import MAMWire
import SystemPackage
import Testing

/// One app floods the broker; a quiet one beside it is answered all the while (issue 9 item 6;
/// its 10 ms at the 99th percentile is measured by `mamlaunch bench-flood`). Both are connections this test
/// hands over through the launcher socket, as `mamlaunch run` does, so the flood is as fast as
/// a process can make it.
@Suite("One app cannot stall the others", .serialized, .timeLimit(.minutes(3)))
struct FloodTests {
    /// The flooding app: a writer and a reader thread; the counters are atomics because the
    /// test reads them while both threads write.
    final class Flooder: Sendable {
        let socket: WireSocket
        let make: @Sendable (UInt32) -> (Message, Int32?)
        private let isRunning = Atomic(true)
        private let sentCount = Atomic(0), answeredCount = Atomic(0)
        var running: Bool {
            get { isRunning.load(ordering: .acquiring) }
            set { isRunning.store(newValue, ordering: .releasing) }
        }
        var sent: Int { sentCount.load(ordering: .relaxed) }
        var answered: Int { answeredCount.load(ordering: .relaxed) }
        init(socket: WireSocket, make: @escaping @Sendable (UInt32) -> (Message, Int32?)) {
            self.socket = socket
            self.make = make
        }

        func start() -> [Thread] {
            let reader = Thread { [self] in
                // (A descriptor that came with a packet closes as the packet is dropped.)
                while running, socket.receiveRaw() != nil {
                    answeredCount.add(1, ordering: .relaxed)
                }
            }
            let writer = Thread { [self] in
                var id: UInt32 = 1
                while running {
                    let (m, fd) = make(id)
                    do { try socket.send(Frame(id: id, m), descriptor: fd.map(FileDescriptor.init(rawValue:))) } catch { fd.map { _ = close($0) }; break }
                    fd.map { _ = close($0) }
                    id &+= 1
                    sentCount.add(1, ordering: .relaxed)
                }
            }
            reader.start()
            writer.start()
            return [reader, writer]
        }
    }

    /// Hands a connection to the broker as the launcher would, and greets.
    static func adopt(_ launcher: WireSocket, _ bundle: String, account: String? = nil) throws -> WireSocket {
        let (mine, theirs) = try WireSocket.pair()
        // The test process is no installed app's build: it says so (developer), keeping the id.
        try LauncherMessage.adopt(Adoption(bundleID: bundle, pid: getpid(), account: account, developer: true)).send(on: launcher, descriptor: theirs.descriptor)
        theirs.close()
        try mine.send(Frame(id: 1, .hello(minVersion: 1, maxVersion: 1, integratesSDK: true)))
        _ = mine.receive(within: 10)
        return mine
    }

    static func sealed(_ bytes: Int, sparse: Bool = false) -> Int32? {
        if sparse {
            let fd = mam_memfd_sealable("sparse")
            guard fd >= 0, ftruncate(fd, off_t(bytes)) == 0, SealedDocument.seal(FileDescriptor(rawValue: fd)) else { return nil }
            return fd
        }
        return try? SealedDocument.create([UInt8](repeating: 0x41, count: bytes)).release()
    }

    enum Kind: String, CaseIterable, Sendable {
        case tinyFrames, copies, pastes, largeSaves, sparseSaves, importRequests, urlOpens
    }

    @Test(arguments: Kind.allCases)
    func theQuietAppIsAnsweredWhileAnotherFloods(_ kind: Kind) throws {
        // URLs flood a Mail that cannot start (they wait, then are refused), as they always did;
        // a Mail that really starts would measure Mail's work on the same two cores.
        let apps = try BrokerHarness.appsWithMailThatCannotStart()
        defer { try? FileManager.default.removeItem(atPath: (apps as NSString).deletingLastPathComponent) }
        let b = try BrokerHarness(apps: apps)
        defer { b.stop() }
        let launcher = try WireSocket.connect(b.launcherSocket)
        defer { launcher.close() }
        let quiet = try Self.adopt(launcher, "com.contoso.docs")
        let loud = try Self.adopt(launcher, "com.example.notes")
        let chat = try Self.adopt(launcher, "com.example.chat")  // an import source that never answers
        defer { chat.close() }
        let large = Self.sealed(64 << 20)
        defer { large.map { _ = close($0) } }
        let flooder = Flooder(socket: loud) { id in
            switch kind {
            case .tinyFrames: return (.canOpenURL(url: "x:"), nil)
            case .copies: return (.copy(text: "flood \(id)", types: ["public.utf8-plain-text"]), nil)
            case .pastes: return (.paste, nil)
            case .largeSaves: return (.saveTo(location: 32, account: nil, name: "big\(id % 4)"), large.map { dup($0) })
            case .sparseSaves: return (.saveTo(location: 32, account: nil, name: "sparse"), Self.sealed(1 << 30, sparse: true))
            case .importRequests: return (.importRequest(source: "com.example.chat", contentType: "public.plain-text"), nil)
            case .urlOpens: return (.openURL(url: "contosomail://flood/\(id)"), nil)
            }
        }
        _ = flooder.start()
        let deadline = Date(timeIntervalSinceNow: 10)
        while flooder.sent < 50 && Date() < deadline { usleep(1_000) }
        #expect(flooder.sent >= 50, "the flood is under way")
        try Self.quietAppIsServedBeside(flooder, quiet: quiet, kind.rawValue)
        flooder.running = false
        shutdown(loud.descriptor.rawValue, Int32(SHUT_RDWR))
    }

    /// The quiet app's 200 pastes are each answered, in order, while the flood goes on (or waits
    /// on the flooder's request budget). How fast is not the test's verdict (the machines
    /// running it are shared): `mamlaunch bench-flood` measures the 99th percentile against
    /// its 10 ms target.
    static func quietAppIsServedBeside(_ flooder: Flooder, quiet: WireSocket, _ kind: String) throws {
        for i in 0..<200 {
            try quiet.send(Frame(id: UInt32(10 + i), .paste))
            guard let r = quiet.receive(within: 30), case .success(let f) = r.frame, case .pasteResult = f.message, f.id == UInt32(10 + i) else {
                Issue.record("\(kind): the quiet app's paste \(i) went unanswered beside the flood")
                return
            }
            usleep(2_000)
        }
    }
}
