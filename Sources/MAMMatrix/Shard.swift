import Foundation
import MAMScript

/// A campaign split over processes or machines (`--shard K/N`) and joined again (`matrix merge`):
/// shard K of N answers a contiguous part of the planned cells (so each policy's cells stay
/// mostly on one shard, and its broker is started once), keeping their ids; its JSON output
/// starts with a header and carries each cell whole; the merge reads the shards back into the
/// report, summary and exit status one run would give.
public enum MatrixShard {
    public struct Part: Sendable, Hashable, Codable {
        /// 1-based.
        public var index: Int
        public var count: Int
        /// Cells the whole campaign plans.
        public var planned: Int

        public init(index: Int, count: Int, planned: Int) {
            self.index = index
            self.count = count
            self.planned = planned
        }

        /// "K/N", with both in range.
        public init?(_ text: String) {
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, let k = Int(parts[0]), let n = Int(parts[1]), (1...10_000).contains(n), (1...n).contains(k) else { return nil }
            self.init(index: k, count: n, planned: 0)
        }

        /// This shard's part of `cells` (the planned ones, in plan order).
        public func slice<C>(_ cells: [C]) -> ArraySlice<C> {
            cells[(cells.count * (index - 1) / count)..<(cells.count * index / count)]
        }
    }

    /// What a merge needs besides the cells: the first line of a shard's JSON.
    struct Header: Codable {
        var shard: Part
        var experiment: String
        var description: String
        var live: Bool
        var seconds: Double
        var sandbox: String?
        var standIns: [String]
        var partial: PartialRun?
        var inputs: RunInputs?
    }

    static func header(_ part: Part, report: MatrixReport) -> String {
        let h = Header(shard: part, experiment: report.experiment.name, description: report.experiment.description, live: report.live,
                       seconds: report.seconds, sandbox: report.sandbox, standIns: report.standIns, partial: report.partial,
                       inputs: report.inputs)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = String(decoding: (try? encoder.encode(h)) ?? Data("{}".utf8), as: UTF8.self)
        return "{\"shard\":\(body)}"
    }

    static func record(_ r: CellResult) -> JSONValue {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(r), let value = try? JSONValue.parse(Array(data)) else { return .null }
        return value
    }

    public struct MergeError: Error, CustomStringConvertible {
        public var description: String
    }

    /// The shards' JSON outputs (`files`: name and text) joined into one report: every shard of
    /// one campaign at most once, no cell twice. Missing shards or cells make it partial.
    public static func merge(_ files: [(name: String, text: String)]) throws(MergeError) -> MatrixReport {
        var headers: [(name: String, header: Header)] = []
        var results: [Int: CellResult] = [:]
        let decoder = JSONDecoder()
        // One decoding per line (a hundred thousand cells per campaign is usual): a line is the
        // header, the partial mark, or a cell with its record; other keys are the cell's columns.
        struct Line: Decodable { var shard: Header?; var partial: PartialRun.Mark?; var record: CellResult? }
        for (name, text) in files {
            var header: Header?
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: true).enumerated() {
                let at = "\(name):\(n + 1)"
                let read: Line
                do { read = try decoder.decode(Line.self, from: Data(line.utf8)) } catch {
                    throw MergeError(description: "\(at): not a line of a shard's JSON output (\(error))")
                }
                if n == 0 {
                    guard let h = read.shard else {
                        throw MergeError(description: "\(at): not a shard's output (its first line is {\"shard\": …}: run mamlaunch matrix --shard K/N --format json)")
                    }
                    header = h
                    continue
                }
                if read.partial != nil { continue }
                guard let r = read.record else { throw MergeError(description: "\(at): a cell without its record (\"record\")") }
                if results[r.cell.id] != nil { throw MergeError(description: "\(at): cell #\(r.cell.id) is in another shard too") }
                results[r.cell.id] = r
            }
            guard let header else { throw MergeError(description: "\(name): empty") }
            headers.append((name, header))
        }
        guard let first = headers.first?.header else { throw MergeError(description: "no shard given") }
        for (name, h) in headers.dropFirst() where h.shard.count != first.shard.count || h.shard.planned != first.shard.planned
            || h.experiment != first.experiment || h.live != first.live {
            throw MergeError(description: "\(name): shard \(h.shard.index)/\(h.shard.count) of \"\(h.experiment)\" (\(h.shard.planned) cells) is not of the campaign of \(headers[0].name) (\(first.shard.index)/\(first.shard.count) of \"\(first.experiment)\", \(first.shard.planned) cells)")
        }
        var seen: [Int: String] = [:]
        for (name, h) in headers {
            if let other = seen[h.shard.index] { throw MergeError(description: "\(name): shard \(h.shard.index) is \(other) too") }
            seen[h.shard.index] = name
        }
        var experiment = Experiment(name: first.experiment, description: first.description, parties: [])
        experiment.policies = []
        var report = MatrixReport(experiment: experiment, results: results.values.sorted { $0.cell.id < $1.cell.id }, live: first.live,
                                  seconds: headers.map(\.header.seconds).max() ?? 0)
        report.sandbox = first.sandbox
        report.inputs = headers.first?.header.inputs
        report.standIns = headers.flatMap(\.header.standIns).reduce(into: []) { if !$0.contains($1) { $0.append($1) } }
        let missing = (1...first.shard.count).filter { seen[$0] == nil }
        let cut = headers.compactMap { h in h.header.partial.map { "shard \(h.header.shard.index) \($0.reason)" } }
        if !missing.isEmpty || !cut.isEmpty || report.results.count != first.shard.planned {
            let why = (missing.isEmpty ? [] : ["shards missing: \(missing.map(String.init).joined(separator: ", "))"]) + cut
            report.partial = PartialRun(reason: why.isEmpty ? "cells missing" : why.joined(separator: "; "), answered: report.results.count,
                                        planned: first.shard.planned, notRun: [])
        }
        return report
    }
}
