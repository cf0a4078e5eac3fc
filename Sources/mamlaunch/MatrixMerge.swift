import ArgumentParser
import Foundation
import MAMLauncher
import MAMMatrix
import MAMWire

/// `mamlaunch matrix merge FILE…`: the shards of a campaign joined into one report.
struct MatrixMerge: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Join the shards of a matrix campaign into the report one run would give.",
        discussion: """
            Each FILE is the JSON output of one shard (mamlaunch matrix … --shard K/N --format json). \
            The merge checks that they are shards of one campaign (the same experiment, shard \
            count and planned cells), each at most once, no cell in two; then writes the report \
            in --format as one run writes it, and exits as one run exits: 1 when a cell failed \
            or leaked. Missing shards, or a shard that was interrupted, make the report partial, \
            said on its first line, and the exit status 1.

            Example (four shards, then the merge):
              for k in 1 2 3 4; do mamlaunch matrix --random 100000 --seed 7 --shard $k/4 --format json --out shard-$k.json; done
              mamlaunch matrix merge shard-*.json
            """
    )

    @Argument(help: "The shards' JSON outputs.", completion: .file())
    var files: [String] = []

    @Option(help: ArgumentHelp("table, md, csv, json, html, junit or sarif (default: html when --out ends in .html, else table).", valueName: "FORMAT"))
    var format: MatrixFormat?

    @Option(help: ArgumentHelp("Write the report here instead of standard output.", valueName: "FILE"))
    var out: String?

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("name the shards' JSON outputs") }
    }

    func run() throws {
        var read: [(name: String, text: String)] = []
        for f in files {
            guard let data = FileManager.default.contents(atPath: f) else { throw World.Failure(description: "\(f): cannot be read") }
            read.append((f, String(decoding: data, as: UTF8.self)))
        }
        let report: MatrixReport
        do { report = try MatrixShard.merge(read) } catch { throw World.Failure(description: error.description) }
        let chosen = format ?? (out?.hasSuffix(".html") == true ? .html : .table)
        let text = report.render(chosen)
        if let out {
            do { try Data((text + "\n").utf8).write(to: URL(fileURLWithPath: out)) } catch {
                throw World.Failure(description: "cannot write \(out): \(error.localizedDescription)")
            }
        } else {
            print(text)
        }
        StandardStreams.writeError("matrix merge: \(files.count) \(files.count == 1 ? "shard" : "shards"); \(report.summary)"
                                   + (report.partial.map { "; \($0.line)" } ?? "") + "\n")
        // A campaign with shards or cells missing did not run whole: it fails as a failed cell does.
        if !report.failures.isEmpty || report.partial != nil { throw ExitCode(1) }
    }
}
