import ArgumentParser
import Crypto
import Foundation
import MAMProtect
#if canImport(Glibc)
import Glibc
#endif

#if canImport(Glibc)
/// glibc's mallopt(3); the Glibc module leaves out <malloc.h>. Two ints in, one out: the same
/// registers under the Swift and the C calling conventions.
@_silgen_name("mallopt")
private func mallopt(_ parameter: Int32, _ value: Int32) -> Int32
#endif

@main
struct ProtectBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mamprotectbench",
        abstract: "Protect and unprotect throughput against bare AES-256-GCM on the same bytes.",
        discussion: """
            For each buffer size, blocks of the peer (AES.GCM.seal or open from swift-crypto, the \
            bytes and nothing else) and of MAMLab (AccountProtection.protect or \
            DataProtection.unprotect: owner header, key check, 64 KiB chunks bound to the header) \
            take turns, the order swapping every round, so both see the same machine. Each round \
            gives one ratio (ours / peer, adjacent blocks); the table shows the median time per \
            operation of each and the median ratio with its 10th-90th percentile spread. Target: \
            a ratio of at most 1.2. glibc's mmap and trim thresholds are fixed first, so a 16 MiB \
            output does not page-fault anew on every call. Build it in release: \
            swift build -c release --product mamprotectbench (or run Benchmarks/protect)
            """
    )

    @Option(help: "Rounds per size and operation (each round runs one block of each).")
    var rounds = 21

    @Option(help: "Bytes handled per block, which sets the operations per block (at least 1).")
    var blockBytes = 64 << 20

    @Flag(help: "Also time bare AES-GCM with 100 bytes of additional data (as the format binds its header) against bare AES-GCM: what the additional data alone costs.")
    var adProbe = false

    @Option(help: "Buffer sizes in bytes.")
    var sizes: [Int] = [4096, 16 << 20]

    mutating func run() throws {
        #if canImport(Glibc)
        // glibc serves a 16 MiB buffer with mmap and unmaps it on free, so whichever side
        // allocates its output in one piece pays page faults on every call, and the threshold
        // moves on its own as the run goes. Fixed thresholds keep freed memory for reuse and
        // both sides on the same footing.
        _ = mallopt(-3 /* M_MMAP_THRESHOLD */, 32 << 20)
        _ = mallopt(-1 /* M_TRIM_THRESHOLD */, 256 << 20)
        #endif
        let symmetric = SymmetricKey(size: .bits256)
        let key = try ProtectionKey(symmetric)
        let owner = try DataOwner(upn: "alice@contoso.com", objectID: "6f1c2d3e-4a5b-4c6d-8e9f-0a1b2c3d4e5f")
        let account = try AccountProtection(owner: owner, key: key)
        var sink = 0
        print("size       operation   peer (bare AES-GCM)   MAMLab                ratio (p10-p90)")
        for size in sizes {
            var g = SystemRandomNumberGenerator()
            let plain = (0..<size).map { _ in UInt8.random(in: 0...255, using: &g) }
            let perBlock = max(1, blockBytes / max(size, 1))
            let sealed = try AES.GCM.seal(plain, using: symmetric).combined!
            let protected = try DataProtection.protect(plain, for: owner, key: key)
            let seal = try compare(rounds: rounds, perBlock: perBlock,
                                   peer: { sink &+= Int(try AES.GCM.seal(plain, using: symmetric).combined!.last!) },
                                   ours: { sink &+= Int(try account.protect(plain).last!) })
            report(size, "protect", seal)
            let open = try compare(rounds: rounds, perBlock: perBlock,
                                   peer: { sink &+= Int(try AES.GCM.open(AES.GCM.SealedBox(combined: sealed), using: symmetric).first ?? 0) },
                                   ours: { sink &+= Int(try DataProtection.unprotect(protected, key: key).first ?? 0) })
            report(size, "unprotect", open)
            if adProbe {
                let ad = [UInt8](repeating: 7, count: 100)
                let sealedAD = try AES.GCM.seal(plain, using: symmetric, authenticating: ad).combined!
                report(size, "seal+AD", try compare(rounds: rounds, perBlock: perBlock,
                    peer: { sink &+= Int(try AES.GCM.seal(plain, using: symmetric).combined!.last!) },
                    ours: { sink &+= Int(try AES.GCM.seal(plain, using: symmetric, authenticating: ad).combined!.last!) }))
                report(size, "open+AD", try compare(rounds: rounds, perBlock: perBlock,
                    peer: { sink &+= Int(try AES.GCM.open(AES.GCM.SealedBox(combined: sealed), using: symmetric).first ?? 0) },
                    ours: { sink &+= Int(try AES.GCM.open(AES.GCM.SealedBox(combined: sealedAD), using: symmetric, authenticating: ad).first ?? 0) }))
            }
        }
        // Keeps the work observable so the optimizer cannot drop it.
        if sink == 42 { print("") }
    }

    struct Comparison { var peer: [Double]; var ours: [Double]; var ratios: [Double] }

    /// Rounds of one block of each, alternating which goes first; one warm-up block each first.
    func compare(rounds: Int, perBlock: Int, peer: () throws -> Void, ours: () throws -> Void) throws -> Comparison {
        func block(_ body: () throws -> Void) rethrows -> Double {
            let start = DispatchTime.now().uptimeNanoseconds
            for _ in 0..<perBlock { try body() }
            return Double(DispatchTime.now().uptimeNanoseconds - start) / Double(perBlock)
        }
        _ = try block(peer)
        _ = try block(ours)
        var result = Comparison(peer: [], ours: [], ratios: [])
        for round in 0..<rounds {
            let p: Double, o: Double
            if round % 2 == 0 { p = try block(peer); o = try block(ours) } else { o = try block(ours); p = try block(peer) }
            result.peer.append(p)
            result.ours.append(o)
            result.ratios.append(o / p)
        }
        return result
    }

    func report(_ size: Int, _ operation: String, _ c: Comparison) {
        let label = size >= 1 << 20 ? "\(size >> 20) MiB" : "\(size >> 10) KiB"
        func time(_ ns: Double) -> String {
            ns >= 1_000_000 ? String(format: "%.2f ms", ns / 1e6) : String(format: "%.2f µs", ns / 1e3)
        }
        func throughput(_ ns: Double) -> String { String(format: "%.2f GB/s", Double(size) / ns) }
        func cell(_ text: String, _ width: Int) -> String { text.padding(toLength: width, withPad: " ", startingAt: 0) }
        let peer = median(c.peer), ours = median(c.ours)
        print(cell(label, 11) + cell(operation, 12) + cell(time(peer), 10) + cell(throughput(peer), 12)
              + cell(time(ours), 10) + cell(throughput(ours), 12)
              + String(format: "%.3f (%.3f-%.3f)", median(c.ratios), percentile(c.ratios, 0.1), percentile(c.ratios, 0.9)))
    }

    func median(_ v: [Double]) -> Double { percentile(v, 0.5) }

    func percentile(_ v: [Double], _ p: Double) -> Double {
        let s = v.sorted()
        return s[min(s.count - 1, Int((Double(s.count - 1) * p).rounded()))]
    }
}
