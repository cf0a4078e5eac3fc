import ArgumentParser
import CMAMSandbox
import Foundation
import Glibc
import MAMCatalog
import MAMWire

struct BenchBroker: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-broker",
        abstract: "Measure the broker: round trips, concurrency, and a large Open-in push.",
        discussion: """
            Starts a mambroker on a scratch device directory and, in one run: times a paste decision round \
            trip through it against a bare SOCK_SEQPACKET ping-pong between two threads; runs 1, 8 and 64 \
            concurrent connections pasting as fast as they can and reports decisions per second and the 99th \
            percentile latency; and pushes a 64 MiB document through Open-in while watching the broker's \
            resident memory.
            """
    )

    @Option(help: "Round trips per measurement.")
    var iterations = 5000

    func run() throws {
        let dir = Catalog.toolDirectory
        let device = NSTemporaryDirectory() + "mamlab-bench-broker-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: device) }
        guard let tenant = Catalog.projectRoot()?.appendingPathComponent("Policies/contoso/tenant.json").path else {
            throw ValidationError("no MAMLab project found for the sample tenant")
        }
        let broker = Process()
        broker.executableURL = URL(fileURLWithPath: dir + "/mambroker")
        broker.arguments = ["--tenant", tenant, "--device", device, "--log-level", "error"]
        let out = Pipe()
        broker.standardOutput = out
        try broker.run()
        defer { broker.terminate(); broker.waitUntilExit() }
        guard String(decoding: out.fileHandleForReading.availableData, as: UTF8.self).hasPrefix("ready") else {
            throw ValidationError("mambroker did not start")
        }
        let launcher = mam_connect_seqpacket(device + "/launcher.sock")
        guard launcher >= 0 else { throw ValidationError("cannot reach the broker's launcher socket") }

        /// An app handed to the broker as the launcher would: returns our end of its connection.
        func adopt(_ bundle: String) throws -> WireSocket {
            let (mine, theirs) = try WireSocket.pair()
            Handoff.send(launcher, Handoff.adopt(bundleID: bundle, pid: getpid(), account: nil), fd: theirs.fd)
            theirs.close()
            try mine.send(Frame(id: 1, .hello(minVersion: 1, maxVersion: 1, integratesSDK: true)))
            _ = mine.receive()
            return mine
        }

        // 1. Round trip: a paste decision through the broker, against a bare ping-pong.
        let app = try adopt("com.contoso.mail")
        try app.send(Frame(id: 2, .copy(text: "Q3", types: ["public.utf8-plain-text"])))
        _ = app.receive()
        let (a, b) = try WireSocket.pair()
        let echo = Thread {
            while let r = b.receiveRaw(), r.error == nil { try? b.sendRaw(r.bytes) }
        }
        echo.start()
        let request = Wire.encode(Frame(id: 1, .paste))
        // Interleaved, so that a noisy moment on a shared machine hits both alike.
        var brokerTimes: [Double] = [], bareTimes: [Double] = []
        for i in 0..<iterations {
            var t = DispatchTime.now().uptimeNanoseconds
            try? app.send(Frame(id: UInt32(i + 10), .paste))
            _ = app.receive()
            brokerTimes.append(Double(DispatchTime.now().uptimeNanoseconds - t))
            t = DispatchTime.now().uptimeNanoseconds
            try? a.sendRaw(request)
            _ = a.receiveRaw()
            bareTimes.append(Double(DispatchTime.now().uptimeNanoseconds - t))
        }
        a.close()
        let brokerMedian = median(brokerTimes), bareMedian = median(bareTimes)
        print(String(format: "round trip        broker %.1f µs, bare SEQPACKET ping-pong %.1f µs: %.2fx", brokerMedian / 1000, bareMedian / 1000, brokerMedian / bareMedian))

        // 2. Concurrency.
        for n in [1, 8, 64] {
            let sockets = try (0..<n).map { _ in try adopt("com.contoso.docs") }
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
            sockets.forEach { $0.close() }
        }

        // 3. A 64 MiB Open-in push: the broker passes the descriptor and never maps the bytes.
        let receiver = try adopt("com.contoso.docs")
        let sender = try adopt("com.contoso.mail")
        let before = rss(broker.processIdentifier)
        let size = 64 << 20
        let doc = try SealedDocument.create([UInt8](repeating: 0x41, count: size))
        try sender.send(Frame(id: 99, .share(target: "com.contoso.docs", contentType: "com.adobe.pdf", name: "big.pdf")), descriptor: doc)
        close(doc)
        _ = sender.receive()
        let got = receiver.receive()
        let after = rss(broker.processIdentifier)
        let received = got?.descriptor.map { SealedDocument.size($0) } ?? -1
        print(String(format: "64 MiB open-in    delivered %d bytes; broker RSS %.1f MiB before, %.1f MiB after (+%.1f MiB)",
                     received, Double(before) / 1024, Double(after) / 1024, Double(after - before) / 1024))
    }

    private func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }

    /// Resident set size in KiB, from /proc.
    private func rss(_ pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return -1 }
        return Int(line.split(separator: " ").dropFirst().first.map(String.init) ?? "") ?? -1
    }
}
