import Foundation
import MAMTestSupport
import Testing

/// Issue 22's smaller items, each through the built `mamlaunch` (or the demo's own shell): what
/// a person reads in the first hour says what happened, and only what happened.
@Suite("The first hour's smaller words", .serialized)
struct FirstHourCommandTests {
    /// A file or policy that is not there is a runtime error: one line, exit 1, "error:" once,
    /// no usage (the usage and 64 are for arguments that are wrong).
    @Test(arguments: [
        ["matrix", "/nonexistent/e.json", "--predict"],
        ["matrix", "--predict", "--policy", "no-such-policy"],
        ["explain", "--policy", "/nonexistent/p.json", "--from", "Mail", "--to", "Notes", "--channel", "send"],
        ["explain", "--tenant", "/nonexistent/t.json", "--from", "Mail", "--to", "Notes", "--channel", "send"],
        ["sync", "--broker", "/nonexistent/launcher.sock"],
    ])
    func aRuntimeErrorIsOneLineAndExitsOne(_ arguments: [String]) throws {
        let r = try CommandRunner.run(arguments)
        #expect(r.status == 1, "\(r.stderr)")
        #expect(!r.stderr.contains("Usage") && !r.stderr.contains("USAGE"), "\(r.stderr)")
        #expect(r.stderr.components(separatedBy: "error:").count == 2, "\"error:\" once: \(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
    }

    /// An argument found wrong while the command runs is a usage error of that command: 64 and
    /// where its help is, not the list of every subcommand.
    @Test func aWrongArgumentNamesItsCommandsHelp() throws {
        let r = try CommandRunner.run(["run", "Nowhere"])
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stderr.contains("mamlaunch run: error: unknown app \"Nowhere\""), "\(r.stderr)")
        #expect(r.stderr.contains("See 'mamlaunch run --help'."), "\(r.stderr)")
        #expect(!r.stderr.contains("<subcommand>"), "\(r.stderr)")
    }

    /// The predicted table is as wide as its ordinary cells: a long URL runs past its column on
    /// its own line instead of padding all 1,107 lines to 160 columns; nothing trails.
    @Test func thePredictedTableIsNotPaddedToItsLongestCell() throws {
        let r = try CommandRunner.run(["matrix", "--predict"])
        #expect(r.status == 0)
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.count > 1000)
        let header = lines.first { $0.hasPrefix("#") } ?? ""
        #expect(header.count <= 130, "\(header)")
        #expect(!header.contains(" live "), "a prediction has no live column: \(header)")
        // Before: every line 160 columns and more (a 60-character URL set the channel's width).
        let median = lines.map(\.count).sorted()[lines.count / 2]
        #expect(median <= 110, "\(median)")
        // A line runs long only where one of its values is over the cap, and that value is whole.
        let long = lines.filter { $0.count > 140 }
        #expect(long.allSatisfy { $0.split(separator: " ").contains { $0.count > 32 } }, "\(long.prefix(3))")
        #expect(r.stdout.contains("open-from oneDriveForBusiness:adele@contoso.com"), "a value over the cap is cut")
        #expect(!lines.contains { $0.hasSuffix(" ") })
    }

    /// A document no app declares is not a link: open-in to Edge says so in its own words.
    @Test func anOpenInNoAppDeclaresSpeaksOfTheDocument() throws {
        let r = try CommandRunner.run(["explain", "--from", "Mail:adele@contoso.com", "--to", "Edge", "--channel", "open-in", "--type", "com.adobe.pdf"])
        #expect(r.stdout.contains("by openInTypeNotDeclared"), "\(r.stdout)")
        #expect(r.stdout.contains("No app on this device can open this type of document."), "\(r.stdout)")
        #expect(!r.stdout.contains("this link"), "\(r.stdout)")
    }

    /// The demo echoes each command as it would be typed: a word with spaces in quotes.
    @Test func theDemoQuotesWhatItEchoes() throws {
        let script = """
            source <(sed -n '/^shown()/,/^}/p' "\(CommandRunner.root.path)/scripts/demo")
            shown --from Mail:adele@contoso.com --channel paste --text "Q3 forecast: 4.2M" --url 'contosodocs://open?doc=42' "it's"
            """
        let r = try ChildProcess.run("/bin/bash", ["-c", script], timeout: 30)
        #expect(r.out == #"--from Mail:adele@contoso.com --channel paste --text 'Q3 forecast: 4.2M' --url 'contosodocs://open?doc=42' 'it'\''s'"#,
                "\(r.out)\(r.err)")
    }

    /// MAMLAB_MATRIX_KEEP keeps each policy's broker folder and says where.
    @Test func aKeptMatrixFolderIsNamed() throws {
        var env = ProcessInfo.processInfo.environment
        env["MAMLAB_ROOT"] = CommandRunner.root.path
        env["MAMLAB_MATRIX_KEEP"] = "1"
        let r = try ChildProcess.run(CommandRunner.executable.path, ["matrix", "--random", "2", "--seed", "7", "--format", "json"],
                                     environment: env, directory: CommandRunner.root.path, timeout: 120)
        let kept = r.err.split(separator: "\n").compactMap { line -> String? in
            guard let range = line.range(of: "is kept at ") else { return nil }
            return String(line[range.upperBound...]).components(separatedBy: " (MAMLAB_MATRIX_KEEP)").first
        }
        defer { for folder in kept { try? FileManager.default.removeItem(atPath: folder) } }
        #expect(r.status == 0, "\(r.err.suffix(1000))")
        #expect(!kept.isEmpty, "\(r.err.suffix(1000))")
        for folder in kept { #expect(FileManager.default.fileExists(atPath: folder + "/audit"), "\(folder)") }
    }
}
