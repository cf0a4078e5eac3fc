import Foundation
import MAMTestSupport
import Testing

/// The first hour (issue 22's Done-when): the commands of README.md, docs/INTEGRATION.md and
/// docs/MATRIX.md, read from the documents as they are written (so a change to a document is
/// tested), run in order, each document as one shell script (a broker started in one block
/// serves the next), and every one must succeed. What cannot run here is left out by rule, each
/// rule with its reason. An app a person types into is run too: what its comment says to type
/// ("then: say hello, save dropbox, policy, quit"; "in another: send docs q3.txt ...") goes in
/// on standard input, with `-- --interactive` (the prompt without a terminal, as docs/SCRIPTING.md
/// says a script does), and nothing it answers may be an unknown command, a usage line or a
/// failure; one "in one terminal" serves in the background until the script ends. The typos
/// and interruptions of the same hour are TypoTests, FirstHourTests and InterruptionTests. An
/// app a script drives (`-- --script`) must answer no command with an error: two documented
/// scripts ran "clean" while every answer was "not signed in".
@Suite("The documented commands run as written", .serialized)
struct DocumentedCommandTests {
    /// Commands not run, and why.
    static let leftOut: [(pattern: String, reason: String)] = [
        ("scripts/demo", "the default live matrix: minutes on 2 cores (MatrixCommandTests runs it)"),
        ("scripts/test", "the suite itself"),
        ("swift test", "the suite itself"),
        ("swift build", "built before the tests run"),
        ("scripts/kernels", "the QEMU kernel lab: CI runs it"),
        ("scripts/hostile-pair", "Hostile against a second app: HostileTests run the same probes"),
        ("matrix --out matrix.html", "the default live matrix: minutes on 2 cores (MatrixCommandTests runs it)"),
        ("matrix --random 500", "500 random cells live: over 20 s (MatrixCommandTests runs 60)"),
        ("my-experiment.json", "a placeholder for your own file"),
        ("my-tenant.json", "a placeholder for your own file"),
        ("--pid PID", "a placeholder for a running app's pid"),
        ("scripts/package", "a release build of the package: minutes on 2 cores (PackageTests packages the suite's own build)"),
        ("apt-get install /tmp/mamlab", "installs the package system-wide: PackageTests installs, uses and removes it"),
        ("apt-get purge mamlab", "removes the installed package: PackageTests does"),
        ("mamlab-demo", "the installed demo: PackageTests runs it from an empty folder"),
        ("man mamlaunch", "the installed man page: PackageTests reads it"),
    ]

    /// Text for inside single quotes.
    static func quoted(_ text: String) -> String { text.replacingOccurrences(of: "'", with: "'\\''") }

    /// The shell commands of a document's ```sh blocks, continuation lines joined.
    static func commands(in document: String) throws -> [String] {
        let text = try String(contentsOfFile: CommandRunner.root.appendingPathComponent(document).path, encoding: .utf8)
        var commands: [String] = []
        var inBlock = false
        var pending = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("```") { inBlock = line.hasPrefix("```sh") && !inBlock; continue }
            guard inBlock else { continue }
            if line.hasSuffix("\\") { pending += line.dropLast() + " "; continue }
            let command = (pending + line).trimmingCharacters(in: .whitespaces)
            pending = ""
            if !command.isEmpty && !command.hasPrefix("#") { commands.append(command) }
        }
        return commands
    }

    /// The shell lines that run an app a person types into: the comment's "then: A, B, C" or "in
    /// another: A" typed in, then `quit`; "in one terminal", in the background until the end.
    static func typedRun(_ command: String, comment written: String, scratch: String, index: Int) -> String {
        let comment = written.range(of: #"\s#\s"#, options: .regularExpression).map { String(written[$0.upperBound...]) } ?? ""
        let interactive = command + " -- --interactive"
        if comment.contains("in one terminal") {
            let fifo = "\(scratch)/typed-\(index)", log = "\(scratch)/typed-\(index).out"
            return "mkfifo \(fifo); \(interactive) < \(fifo) > \(log) 2>&1 & exec 7> \(fifo); opened \(log)\n"
        }
        guard let said = ["then: ", "in another: "].lazy.compactMap({ comment.range(of: $0) }).first else {
            return "printf '%s\\n' '-- left out: \(Self.quoted(String(written.prefix(60)))) (nothing to type is written beside it)'\n"
        }
        let lines = comment[said.upperBound...].components(separatedBy: ", ").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && $0 != "quit" } + ["quit"]
        return "printf '%s\\n' " + lines.map { "'\(Self.quoted($0))'" }.joined(separator: " ") + " | \(interactive) 2>&1 | typed\n"
    }

    @Test(arguments: ["README.md", "docs/INTEGRATION.md", "docs/MATRIX.md"])
    func everyDocumentedCommandSucceeds(_ document: String) async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-docs-\(UUID().uuidString.prefix(6))").path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let bin = CommandRunner.executable.deletingLastPathComponent().path
        var script = """
            set -eo pipefail
            export PATH="\(bin):$PATH" MAMLAB_ROOT="\(CommandRunner.root.path)"
            cd "\(CommandRunner.root.path)"
            # (A job that ends between `jobs -p` and its kill makes xargs fail, 123: under set -e
            # that was the script's status, a failure of whichever document ran last.)
            trap 'status=$?; jobs -p | xargs -r kill 2>/dev/null || true; wait; exit $status' EXIT
            # A broker started in the background serves once its launcher socket is there.
            serving() { for _ in $(seq 200); do [ -S "$1/launcher.sock" ] && return 0; sleep 0.05; done; echo "no broker at $1" >&2; return 1; }
            # What a person typed into an app: every answer is read; none may be a refusal of the
            # command itself (an unknown command, a usage line, a failure, an unknown app).
            typed() {
                local out; out="$(cat)"; printf '%s\n' "$out"
                if grep -E "Unknown command|usage:|Could not|no installed app|is not running" <<<"$out" >&2; then return 1; fi
            }
            # An app driven by a script: no answer may be an error (a command it refused).
            scripted() {
                local out; out="$(cat)"; printf '%s\n' "$out"
                if grep -F '"error":' <<<"$out" >&2; then return 1; fi
            }
            # An app a person keeps open in another terminal: it serves until the script ends.
            opened() { for _ in $(seq 400); do grep -q "> " "$1" 2>/dev/null && return 0; sleep 0.05; done; cat "$1" >&2; return 1; }

            """
        var ran = 0
        for written in try Self.commands(in: document) {
            if let rule = Self.leftOut.first(where: { written.contains($0.pattern) }) {
                script += "printf '%s\\n' '-- left out: \(Self.quoted(String(written.prefix(60)))) (\(Self.quoted(rule.reason)))'\n"
                continue
            }
            // The documents' fixed folders (root's, under /var/lib/mamlab) and their log file
            // become this test's own (other runs share the machine), and their tools the ones
            // built for the tests.
            // Its comment goes (the documents set theirs off with spaces and "# ").
            let bare = written.replacingOccurrences(of: #"\s+#\s.*$"#, with: "", options: .regularExpression)
            var command = bare.replacingOccurrences(of: "\"$PWD/.build/debug/", with: "\"\(bin)/")
                .replacingOccurrences(of: ".build/debug/", with: "\(bin)/")
            for fixed in ["/var/lib/mamlab/integration", "/var/lib/mamlab/device", "/var/lib/mamlab/lab", "/tmp/docs.log", "/tmp/shards"] {
                command = command.replacingOccurrences(of: fixed, with: scratch + "/" + (fixed as NSString).lastPathComponent)
            }
            script += "printf '%s\\n' '-- \(Self.quoted(command))'\n"
            // An app a person drives at a terminal (a `run` with no input of its own, in the
            // foreground): what its comment says to type goes in, or it serves in the background.
            if command.contains(" run ") && !command.contains("--script") && !command.contains("<") && !command.hasSuffix("&")
                && !command.contains("Courier") {
                script += Self.typedRun(command, comment: written, scratch: scratch, index: ran)
                ran += 1
                continue
            }
            // An app a script drives answers each command in JSON: none may be an error.
            script += command + (command.hasSuffix("-- --script") ? " | scripted" : "") + "\n"
            if command.hasSuffix("&"), command.hasPrefix("mambroker") || command.hasPrefix("\(bin)/mambroker") {
                let device = command.components(separatedBy: "--device ").last?.split(separator: " ").first.map(String.init) ?? ""
                script += "serving \(device)\n"
            }
            ran += 1
        }
        #expect(ran > 0, "no command found in \(document)")
        let r = try await ChildProcess.runOffPool("/bin/bash", ["-c", script], environment: ProcessInfo.processInfo.environment, timeout: 150)
        #expect(r.status == 0, "\(document): a command failed (the last '--' line names it):\n\(r.out.suffix(3000))\n\(r.err.suffix(3000))")
    }
}
