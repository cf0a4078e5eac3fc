import ArgumentParser
import Foundation
import Glibc
import MAMCatalog
import MAMWire
import Synchronization
import SystemPackage

struct BenchFlood: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-flood",
        abstract: "Measure what one app's flood costs another: a quiet app's round trip while a second app floods the broker.",
        discussion: """
            Starts its own mambroker (with its usual per-app request budget) on a scratch device \
            directory. For each kind of flood, a quiet app (Docs) pastes --round-trips times, \
            2 ms apart, first alone and then while another app sends that kind of request as \
            fast as it can; this repeats --blocks times. It prints the quiet app's median and \
            99th percentile round trip alone and under the flood, their ratio, and the target: \
            the 99th percentile under any flood at most 10 ms.

            Kinds: tiny-frames (canOpenURL), copies, pastes, large-saves (64 MiB documents to a \
            storage location), sparse-saves (1 GiB sparse documents), import-requests (to an app \
            that never answers), url-opens (to an app that never starts), encrypted-pushes (to an \
            app that hoards what it is given), made-up-enrollments (accounts nobody signed in).

            Needs mambroker and mambenchpeer built beside mamlaunch. Measure a release build: \
            Benchmarks/flood builds one and runs this.
            """
    )

    @Option(help: "Rounds of alone-then-flooded measurement for each kind.")
    var blocks = 3

    @Option(help: "The quiet app's round trips in each half of a round.")
    var roundTrips = 200

    @Option(parsing: .upToNextOption, help: "The kinds of flood to measure (all unless given).")
    var kind: [FloodKind] = FloodKind.allCases

    func validate() throws {
        guard blocks >= 1 else { throw ValidationError("--blocks must be at least 1") }
        guard roundTrips >= 100 else { throw ValidationError("--round-trips must be at least 100: fewer have no 99th percentile") }
    }

    func run() throws {
        guard let tenant = Catalog.projectRoot()?.appendingPathComponent("Policies/contoso/tenant.json").path else {
            throw BenchError("no sample tenant: \(Catalog.noProject)")
        }
        let processes = try BenchProcesses(name: "bench-flood")
        defer { processes.finish() }
        // The held-ciphertext quota the flood tests use, so that pushes reach it.
        let broker = try BenchBrokerPeers.startBroker(processes, tenant: tenant, requestsPerSecond: nil,
                                                      extraArguments: ["--encrypted-held-per-app", String(8 << 20)])
        defer { broker.close() }
        // Each request carries a duplicate of one of these two.
        let large = try SealedDocument.create([UInt8](repeating: 0x41, count: 64 << 20)).release()
        defer { close(large) }
        let pushed = try SealedDocument.create([UInt8](repeating: 0x51, count: 256 << 10)).release()
        defer { close(pushed) }

        print("quiet app's paste round trip, \(blocks) rounds of \(roundTrips) alone then \(roundTrips) flooded, 2 ms apart")
        print("  flood                  alone p50 / p99      flooded p50 / p99    p99 ratio   flood sent   target p99 <= 10 ms")
        var missed: [FloodKind] = []
        for kind in kind {
            let quiet = try broker.adopt("com.contoso.docs")
            defer { quiet.close() }
            let peers = try FloodPeers(broker, kind)
            defer { peers.close() }
            let flooder = Flooder(socket: peers.loud) { id in kind.request(id, large: large, pushed: pushed) }
            var alone: [Double] = [], flooded: [Double] = []
            for _ in 0..<blocks {
                alone += try Self.roundTrips(quiet, roundTrips)
                flooder.resume()
                let underWay = Date(timeIntervalSinceNow: 10)
                while flooder.sent < 50 && Date() < underWay { usleep(1_000) }
                guard flooder.sent >= 50 else { throw BenchError("the \(kind.rawValue) flood did not get under way: \(flooder.sent) requests sent in 10 s") }
                flooded += try Self.roundTrips(quiet, roundTrips)
                flooder.pause()
            }
            let sent = flooder.sent
            flooder.stop()
            // The broker's request budget is per app and per second: the next kind's apps
            // (the same bundle ids) start with a fresh one.
            usleep(1_100_000)
            let a = Percentiles(alone), f = Percentiles(flooded)
            if f.p99 > 10 { missed.append(kind) }
            print("  " + kind.rawValue.padding(toLength: 20, withPad: " ", startingAt: 0)
                  + String(format: "  %6.2f / %6.2f ms    %6.2f / %6.2f ms    %6.2fx   %10d   %@",
                           a.p50, a.p99, f.p50, f.p99, f.p99 / a.p99, sent, (f.p99 <= 10 ? "met" : "MISSED") as NSString))
        }
        if !missed.isEmpty { print("missed under: \(missed.map(\.rawValue).joined(separator: ", "))") }
    }

    /// `count` pastes, each answered before the next (2 ms apart, as an app's interactions are),
    /// in milliseconds.
    private static func roundTrips(_ quiet: WireSocket, _ count: Int) throws -> [Double] {
        var latencies: [Double] = []
        latencies.reserveCapacity(count)
        for i in 0..<count {
            let start = DispatchTime.now().uptimeNanoseconds
            try quiet.send(Frame(id: UInt32(10 + i), .paste))
            var ready = pollfd(fd: quiet.descriptor.rawValue, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 30_000) == 1, let r = quiet.receive(), case .success(let f) = r.frame, case .pasteResult = f.message else {
                throw BenchError("the quiet app got no paste result within 30 s")
            }
            latencies.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
            usleep(2_000)
        }
        return latencies
    }
}

/// The kinds of flood, each a request one app can send as fast as it likes.
enum FloodKind: String, CaseIterable, ExpressibleByArgument {
    case tinyFrames = "tiny-frames", copies, pastes, largeSaves = "large-saves", sparseSaves = "sparse-saves"
    case importRequests = "import-requests", urlOpens = "url-opens", encryptedPushes = "encrypted-pushes"
    case madeUpEnrollments = "made-up-enrollments"

    /// The flood's request number `id`, and the descriptor it carries (the flooder closes it).
    func request(_ id: UInt32, large: Int32, pushed: Int32) -> (Message, Int32?) {
        switch self {
        case .tinyFrames: return (.canOpenURL(url: "x:"), nil)
        case .copies: return (.copy(text: "flood \(id)", types: ["public.utf8-plain-text"]), nil)
        case .pastes: return (.paste, nil)
        case .largeSaves: return (.saveTo(location: 32, account: nil, name: "big\(id % 4)"), dup(large))
        case .sparseSaves: return (.saveTo(location: 32, account: nil, name: "sparse"), try? SealedDocument.zeros(1 << 30, name: "sparse").release())
        case .importRequests: return (.importRequest(source: "com.example.chat", contentType: "public.plain-text"), nil)
        // The bench holds the launcher's socket and never starts Mail: each open waits, then is refused.
        case .urlOpens: return (.openURL(url: "contosomail://flood/\(id)"), nil)
        case .encryptedPushes: return (.share(target: "com.example.notes", contentType: "com.adobe.pdf", name: "f\(id).pdf"), dup(pushed))
        case .madeUpEnrollments: return (.enroll(account: "madeup\(id)@contoso.com"), nil)
        }
    }
}

/// The apps a flood needs beside the quiet one: the flooding app, and what it floods.
private struct FloodPeers {
    let loud: WireSocket
    private let others: [WireSocket]
    private let hoarder: Hoarder?

    init(_ broker: BrokerUnderTest, _ kind: FloodKind) throws {
        switch kind {
        case .encryptedPushes, .madeUpEnrollments:
            let receiver = try broker.adopt("com.example.notes")
            hoarder = kind == .encryptedPushes ? Hoarder(receiver) : nil
            loud = try broker.adopt("com.contoso.mail", account: "adele@contoso.com")
            others = [receiver]
        default:
            loud = try broker.adopt("com.example.notes")
            // The import source: adopted, and never answers.
            others = [try broker.adopt("com.example.chat")]
            hoarder = nil
        }
    }

    func close() {
        hoarder?.stop()
        loud.close()
        others.forEach { $0.close() }
    }
}

/// Keeps every descriptor it is given, as a hoarding app would, so that the broker's quota of
/// held ciphertext is what stops the pushes.
private final class Hoarder: Sendable {
    private let running = Atomic(true)

    init(_ socket: WireSocket) {
        Thread { [self] in
            var kept: [Int32] = []
            while running.load(ordering: .acquiring) {
                var ready = pollfd(fd: socket.descriptor.rawValue, events: Int16(POLLIN), revents: 0)
                guard poll(&ready, 1, 200) == 1 else { continue }
                guard var r = socket.receive() else { break }
                if let fd = r.descriptor.take() { kept.append(fd.release()) }
            }
            kept.forEach { _ = close($0) }
        }.start()
    }

    func stop() { running.store(false, ordering: .releasing) }
}

/// The flooding app: a writer thread sending as fast as the socket takes, and a reader thread
/// taking the answers; `pause()` and `resume()` switch the writer off and on.
private final class Flooder: Sendable {
    private let flooding = Atomic(false), alive = Atomic(true)
    private let sentCount = Atomic(0)
    private let socket: WireSocket
    var sent: Int { sentCount.load(ordering: .relaxed) }

    init(socket: WireSocket, make: @escaping @Sendable (UInt32) -> (Message, Int32?)) {
        self.socket = socket
        Thread { [self] in
            // What the answers carry closes as each is dropped.
            while alive.load(ordering: .acquiring), socket.receiveRaw() != nil {}
        }.start()
        Thread { [self] in
            var id: UInt32 = 1
            while alive.load(ordering: .acquiring) {
                guard flooding.load(ordering: .acquiring) else { usleep(1_000); continue }
                let (m, fd) = make(id)
                do { try socket.send(Frame(id: id, m), descriptor: fd.map(FileDescriptor.init(rawValue:))) } catch { fd.map { _ = close($0) }; break }
                fd.map { _ = close($0) }
                id &+= 1
                sentCount.add(1, ordering: .relaxed)
            }
        }.start()
    }

    func resume() { flooding.store(true, ordering: .releasing) }
    func pause() { flooding.store(false, ordering: .releasing) }
    /// Ends both threads: the reader's blocking receive ends when the socket is shut down.
    func stop() {
        alive.store(false, ordering: .releasing)
        shutdown(socket.descriptor.rawValue, Int32(SHUT_RDWR))
    }
}

/// The median and 99th percentile of some round trips, in their unit.
private struct Percentiles {
    let p50: Double, p99: Double
    init(_ values: [Double]) {
        let sorted = values.sorted()
        p50 = sorted[sorted.count / 2]
        p99 = sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))]
    }
}
