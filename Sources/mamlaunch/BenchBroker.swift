import ArgumentParser
import CMAMBench
import CMAMSandbox
import Foundation
import Glibc
import MAMCatalog
import MAMWire
import SystemPackage

struct BenchBroker: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-broker",
        abstract: "Measure the broker: its round trip against two peers, concurrency, and a large Open-in push.",
        discussion: """
            Starts its own mambroker on a scratch device directory, then in one run:

            Round trips. Three kinds take turns in blocks (--blocks of each, at least 10; \
            --round-trips in a block), each sending the same request bytes (broker and bare \
            also get the same answer bytes back, decoded alike):
              broker  a paste decision through mambroker, from a Mail app
              bare    a SOCK_SEQPACKET ping-pong with a C process that answers each
                      request with the broker's own answer bytes: the floor
              D-Bus   Echo(ay) -> ay through a private dbus-daemon to an sd-bus
                      echo service, the way Flatpak portals are called
            It prints each kind's median per round trip (with the fastest and slowest block), \
            and the ratios broker/bare and broker/D-Bus block by block: their median, smallest \
            and largest. Targets (Benchmarks/README.md): broker/bare at most 1.3, broker/D-Bus at most 0.4.

            Concurrency. 1, 8 and 64 apps paste as fast as they can: decisions per second and \
            the 99th percentile round trip.

            A large push. A 64 MiB document through Open-in, watching the broker's resident \
            memory (the broker passes the descriptor and never maps the bytes).

            Needs mambroker and mambenchpeer built beside mamlaunch, and dbus-daemon (Debian's \
            dbus-daemon package). Every process it starts, and its scratch directory, go away \
            when it ends, however it ends. Measure a release build: Benchmarks/broker builds \
            one and runs this.
            """
    )

    @Option(help: "Blocks of each kind of round trip (at least 10); the kinds take turns block by block.")
    var blocks = 20

    @Option(help: "Round trips in each block.")
    var roundTrips = 1000

    @Option(help: "Round trips for each number of apps in the concurrency measurement.")
    var iterations = 5000

    @Option(help: ArgumentHelp("Run the bench and every process it starts on this one CPU.", discussion: """
        Unpinned, a ping-pong is quick when both ends share a CPU and slow when each wake-up \
        crosses to another, and the scheduler chooses differently from block to block. On one \
        CPU every kind pays the same switches and the figures say what each side's work costs.
        """))
    var cpu: Int?

    func validate() throws {
        guard blocks >= 10 else { throw ValidationError("--blocks must be at least 10: fewer say little about the spread") }
        guard roundTrips >= 1 else { throw ValidationError("--round-trips must be at least 1") }
        guard iterations >= 1 else { throw ValidationError("--iterations must be at least 1") }
        if let cpu, !(0..<min(64, ProcessInfo.processInfo.activeProcessorCount)).contains(cpu) {
            throw ValidationError("--cpu must name one of this machine's CPUs, 0 to \(ProcessInfo.processInfo.activeProcessorCount - 1)")
        }
    }

    func run() throws {
        guard let tenant = Catalog.projectRoot()?.appendingPathComponent("Policies/contoso/tenant.json").path else {
            throw BenchError("no sample tenant: \(Catalog.noProject)")
        }
        let dbusDaemon = try Self.findDBusDaemon()
        if let cpu { try Self.pin(toCPU: cpu) }
        let processes = try BenchProcesses(name: "bench-broker")
        defer { processes.finish() }

        let broker = try BenchBrokerPeers.startBroker(processes, tenant: tenant)
        defer { broker.close() }
        let bus = try BenchBrokerPeers.startBus(processes, dbusDaemon: dbusDaemon)
        defer { mam_bench_dbus_close(bus) }

        // 1. Round trips: broker, bare, D-Bus, the same request bytes each time.
        let app = try broker.adopt("com.contoso.mail")
        defer { app.close() }
        try app.send(Frame(id: 2, .copy(text: "Q3", types: ["public.utf8-plain-text"])))
        _ = app.receive()
        let request = Wire.encode(Frame(id: 1, .paste))
        // The broker and the bare peer are asked and answered alike, so that their ratio is the
        // broker's work alone: the same request bytes out; back, the same answer bytes (the
        // peer sends the broker's own answer to this paste), received into one buffer and
        // decoded by the same code.
        let answers = ReceiveBuffer()
        func pasteResult(from socket: WireSocket, _ who: String) throws -> [UInt8] {
            guard let raw = socket.receiveRaw(buffer: answers), raw.error == nil, case .pasteResult? = try? Wire.decode(raw.bytes).message else {
                throw BenchError("\(who) answered a paste with something other than a paste result")
            }
            return raw.bytes
        }
        try app.sendRaw(request)
        let answer = try pasteResult(from: app, "the broker")
        let echo = try BenchBrokerPeers.startEcho(processes, answer: answer)
        defer { echo.close() }
        var why = [CChar](repeating: 0, count: 256)
        let comparison = RoundTripComparison(contenders: [
            .init(name: "broker: paste decision through mambroker") {
                try app.sendRaw(request)
                _ = try pasteResult(from: app, "the broker")
            },
            .init(name: "bare: SOCK_SEQPACKET ping-pong, the same answer") {
                try echo.sendRaw(request)
                _ = try pasteResult(from: echo, "the answering process")
            },
            .init(name: "D-Bus: Echo(ay) through a private dbus-daemon") {
                guard mam_bench_dbus_echo(bus, request, request.count, &why, why.count) == 0 else {
                    throw BenchError("D-Bus call failed: \(text(why))")
                }
            },
        ], blocks: blocks, roundTrips: roundTrips)
        let medians = try comparison.run()
        printComparison(comparison, medians)

        // 2. Concurrency.
        for n in [1, 8, 64] {
            let sockets = try (0..<n).map { _ in try broker.adopt("com.contoso.docs") }
            defer { sockets.forEach { $0.close() } }
            let per = max(200, iterations / n)
            nonisolated(unsafe) var latencies = [[Double]](repeating: [], count: n)
            let start = DispatchTime.now().uptimeNanoseconds
            DispatchQueue.concurrentPerform(iterations: n) { k in
                var mine: [Double] = []
                mine.reserveCapacity(per)
                for i in 0..<per {
                    let t = DispatchTime.now().uptimeNanoseconds
                    try? sockets[k].send(Frame(id: UInt32(i + 10), .paste))
                    _ = sockets[k].receive()
                    mine.append(Double(DispatchTime.now().uptimeNanoseconds - t))
                }
                latencies[k] = mine
            }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            let all = latencies.flatMap { $0 }.sorted()
            let p99 = all[min(all.count - 1, Int(Double(all.count) * 0.99))]
            print(String(format: "%2d apps           %8.0f decisions/s, p99 %.2f ms", n, Double(all.count) / seconds, p99 / 1e6))
        }

        // 3. A 64 MiB Open-in push: the broker passes the descriptor and never maps the bytes.
        let receiver = try broker.adopt("com.contoso.docs")
        let sender = try broker.adopt("com.contoso.mail")
        defer { receiver.close(); sender.close() }
        let before = rss(broker.pid)
        let size = 64 << 20
        let doc = try SealedDocument.create([UInt8](repeating: 0x41, count: size))
        try sender.send(Frame(id: 99, .share(target: "com.contoso.docs", contentType: "com.adobe.pdf", name: "big.pdf")), descriptor: FileDescriptor(rawValue: doc.rawValue))
        doc.close()
        _ = sender.receive()
        var got = receiver.receive()
        let after = rss(broker.pid)
        var received = -1
        if let fd = got?.descriptor.take() { received = SealedDocument.size(FileDescriptor(rawValue: fd.rawValue)) }
        print(String(format: "64 MiB open-in    delivered %d bytes; broker RSS %.1f MiB before, %.1f MiB after (+%.1f MiB)",
                     received, Double(before) / 1024, Double(after) / 1024, Double(after - before) / 1024))
    }

    private func printComparison(_ comparison: RoundTripComparison, _ medians: [[Double]]) {
        let placement = cpu.map { "all on CPU \($0)" } ?? "not pinned"
        print("round trip        \(blocks) blocks of \(roundTrips) each, taking turns, \(placement); median per round trip (fastest–slowest block)")
        for (contender, times) in zip(comparison.contenders, medians) {
            let s = Spread(times)
            let name = contender.name.padding(toLength: 52, withPad: " ", startingAt: 0)
            print("  " + name + String(format: "%7.1f µs  (%.1f–%.1f)", s.median / 1000, s.min / 1000, s.max / 1000))
        }
        let (broker, bare, dbus) = (medians[0], medians[1], medians[2])
        for (label, peer, target) in [("broker / bare ", bare, 1.3), ("broker / D-Bus", dbus, 0.4)] {
            let ratio = Spread(zip(broker, peer).map { $0 / $1 })
            let verdict = ratio.median <= target
                ? "met"
                : String(format: "MISSED by %.0f%%", (ratio.median / target - 1) * 100)
            print(String(format: "  %@  %.2fx  (min %.2fx, max %.2fx)   target <= %.1fx: %@",
                         label as NSString, ratio.median, ratio.min, ratio.max, target, verdict as NSString))
        }
    }

    /// Pins this thread, and so every process and thread it starts from now on, to one CPU.
    private static func pin(toCPU cpu: Int) throws {
        guard mam_bench_pin_cpu(Int32(cpu)) == 0 else {
            throw BenchError("cannot pin to CPU \(cpu): \(String(cString: strerror(errno)))")
        }
    }

    /// dbus-daemon from PATH or where Debian puts it.
    private static func findDBusDaemon() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for dir in path.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/sbin", "/bin"] {
            let candidate = dir + "/dbus-daemon"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw BenchError("dbus-daemon not found: the D-Bus comparison runs a private bus of its own. Install Debian's dbus-daemon package (apt-get install dbus-daemon) and run again.")
    }

    /// Resident set size in KiB, from /proc.
    private func rss(_ pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return -1 }
        return Int(line.split(separator: " ").dropFirst().first.map(String.init) ?? "") ?? -1
    }
}
