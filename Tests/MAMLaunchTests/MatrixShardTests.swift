import Foundation
import MAMTestSupport
import Testing

/// A campaign split into shards run as separate processes, then merged, gives the single run's
/// cells, summary and exit status.
@Suite("mamlaunch matrix --shard and matrix merge", .serialized)
struct MatrixShardTests {
    static func folder() throws -> URL {
        let dir = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("mamlab-shards-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// Each cell line without the shard's record, by id.
    static func cells(_ file: URL) throws -> [Int: [String: Any]] {
        var out: [Int: [String: Any]] = [:]
        for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n") {
            guard var o = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], let id = o["id"] as? Int else { continue }
            o["record"] = nil
            out[id] = o
        }
        return out
    }

    /// The same cells, compared as canonical JSON text (sorted keys).
    static func same(_ a: [Int: [String: Any]], _ b: [Int: [String: Any]]) -> Bool {
        func text(_ o: [String: Any]) -> Data? { try? JSONSerialization.data(withJSONObject: o, options: [.sortedKeys]) }
        return a.count == b.count && a.allSatisfy { id, x in b[id].map { text(x) != nil && text(x) == text($0) } ?? false }
    }

    /// Shards K/N of `arguments`, run at once as separate processes, then merged.
    static func shardsAndMerge(_ arguments: [String], count: Int, in dir: URL) async throws -> (merge: CommandRunner.Result, merged: URL, shards: [URL]) {
        let shards = (1...count).map { dir.appendingPathComponent("shard-\($0).json") }
        // One after another: each is a process of its own all the same, and the suite's other
        // tests keep their share of the two cores.
        for k in 1...count {
            let r = try await CommandRunner.runOffPool(arguments + ["--shard", "\(k)/\(count)", "--format", "json", "--out", shards[k - 1].path])
            #expect(r.status == 0 || r.status == 1, "\(r.stderr.suffix(800))")
        }
        let merged = dir.appendingPathComponent("merged.json")
        let merge = try await CommandRunner.runOffPool(["matrix", "merge", "--format", "json", "--out", merged.path] + shards.map(\.path))
        return (merge, merged, shards)
    }

    /// Cells of the sharded campaign: MAMLAB_SHARD_CELLS (a multiple of 4) for a longer run,
    /// such as the 100,000 of a campaign past one machine.
    static let shardCells = ProcessInfo.processInfo.environment["MAMLAB_SHARD_CELLS"].flatMap(Int.init).map { max(4, $0 / 4 * 4) } ?? 4000

    @Test("four shards of a random campaign, run one after another and merged, are the single run")
    func fourShardsAreTheSingleRun() async throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let n = Self.shardCells, quarter = Self.shardCells / 4
        let campaign = ["matrix", "--predict", "--random", "\(n)", "--seed", "11"]
        let single = dir.appendingPathComponent("single.json")
        let whole = try await CommandRunner.runOffPool(campaign + ["--format", "json", "--out", single.path])
        #expect(whole.status == 0, "\(whole.stderr.suffix(800))")
        let (merge, merged, shards) = try await Self.shardsAndMerge(campaign, count: 4, in: dir)
        #expect(merge.status == whole.status, "\(merge.stderr)")
        let a = try Self.cells(single), b = try Self.cells(merged)
        #expect(a.count == n && Self.same(a, b), "\(a.count) cells in one run, \(b.count) merged")
        // Each shard answered its contiguous quarter.
        for (k, shard) in shards.enumerated() {
            let ids = try Self.cells(shard).keys.sorted()
            #expect(ids.first == quarter * k + 1 && ids.last == quarter * (k + 1), "shard \(k + 1): \(ids.first ?? -1)...\(ids.last ?? -1)")
        }
        // The summary counts as the single run's does.
        #expect(merge.stderr.contains("\(n) cells (predicted, nothing ran), 9 policies: every expectation met"), "\(merge.stderr) vs \(whole.stderr.suffix(300))")
        // A shard left out: partial, and a failure.
        let short = try await CommandRunner.runOffPool(["matrix", "merge", "--format", "table"] + [shards[0], shards[1], shards[3]].map(\.path))
        #expect(short.status == 1 && short.stdout.hasPrefix("PARTIAL RUN: shards missing: 3 after \(3 * quarter) of \(n) cells"), "\(short.stdout.prefix(300))")
        // The same shard twice, or a file that is no shard, is refused with where.
        let twice = try await CommandRunner.runOffPool(["matrix", "merge", shards[0].path, shards[0].path])
        #expect(twice.status == 1 && twice.stderr.contains("shard-1.json:2: cell #1 is in another shard too"), "\(twice.stderr)")
        let stranger = try await CommandRunner.runOffPool(["matrix", "merge", single.path])
        #expect(stranger.status == 1 && stranger.stderr.contains("single.json:1: not a shard's output"), "\(stranger.stderr)")
    }

    /// Live, with a broker that answers pastes wrongly (mambroker's test-only flip): the shards'
    /// failures are the single run's, and so is the exit status.
    @Test("live shards with failing cells merge to the single run's failures and exit status")
    func liveShardsKeepTheirFailures() async throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let campaign = ["matrix", "--random", "240", "--seed", "5", "--test-flip", "paste"]
        let single = dir.appendingPathComponent("single.json")
        let whole = try await CommandRunner.runOffPool(campaign + ["--format", "json", "--out", single.path])
        #expect(whole.status == 1, "\(whole.stderr.suffix(800))")
        let (merge, merged, _) = try await Self.shardsAndMerge(campaign, count: 3, in: dir)
        #expect(merge.status == 1, "\(merge.stderr)")
        let a = try Self.cells(single), b = try Self.cells(merged)
        let failedA = Set(a.filter { $0.value["passed"] as? Bool == false }.keys), failedB = Set(b.filter { $0.value["passed"] as? Bool == false }.keys)
        #expect(!failedA.isEmpty && failedA == failedB, "\(failedA.sorted()) vs \(failedB.sorted())")
        #expect(a.count == 240 && b.count == 240)
        #expect(b.values.allSatisfy { $0["live"] is [String: Any] }, "every merged cell keeps its live answer")
    }
}
