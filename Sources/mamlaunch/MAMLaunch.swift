import ArgumentParser
import Foundation
import MAMLauncher
import MAMWire

@main
struct MAMLaunch: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mamlaunch",
        abstract: "Run and question MAMLab, the app-protection (MAM) sharing emulator.",
        discussion: """
            MAMLab answers, on Linux, the questions an app-protection policy answers on a phone:
            may this app send this document, paste this text, open this link, save to this \
            location? Every answer names the rule that gave it and where that rule comes from \
            (doc: the vendor's documentation; observed: reported behaviour; chosen: MAMLab's own \
            call where the sources are silent).

            Start with:
              mamlaunch matrix --out matrix.html   every channel between real sandboxed apps, each sample policy
              mamlaunch check                      validate Policies/ and Apps/
              mamlaunch explain --from Mail --to Notes --channel send
            """,
        subcommands: [MatrixCommand.self, Check.self, Explain.self, Run.self, Doctor.self, ClockCommand.self, DeviceCommand.self, SyncCommand.self, WipeCommand.self, SignInCommand.self, CredentialCommand.self, BenchLaunch.self, BenchBroker.self, BenchFlood.self]
    )

    /// A runtime failure (a file that does not load, a broker that does not answer) is one line
    /// and exit 1, with no usage, which is for arguments that are wrong. A file's diagnostic says
    /// "error:" itself, so the line does not say it twice.
    static func main() {
        // Before anything opens a file: a closed standard stream's number is never another file's.
        StandardStreams.ensureOpen()
        // Output whose reader has gone (`mamlaunch matrix | head`) must not end the command
        // before it has stopped what it started: a write to it fails (EPIPE) instead. Apps do
        // not inherit this: the sandbox starts them with every signal at its default.
        signal(SIGPIPE, SIG_IGN)
        var command: any ParsableCommand
        // What the parser refuses is a usage error: the usage and 64. `matrix merge` is taken
        // before the parser sees it: `matrix` has a positional argument, which would take
        // "merge" for an experiment's name.
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.count >= 2, arguments[0] == "matrix", arguments[1] == "merge" {
            do { command = try MatrixMerge.parseAsRoot(Array(arguments.dropFirst(2))) } catch { MatrixMerge.exit(withError: error) }
        } else {
            do { command = try parseAsRoot() } catch { exit(withError: error) }
        }
        do {
            try command.run()
        } catch let wrong as ValidationError {
            usageFailure(wrong.message, of: command)
        } catch let wrong as World.UsageError {
            usageFailure(wrong.message, of: command)
        } catch let failure as World.Failure {
            // What failed after an interruption failed because of it: said already.
            Interruption.exitIfInterrupted()
            let text = failure.description.contains("error: ") ? failure.description : "error: \(failure.description)"
            StandardStreams.writeError("mamlaunch: \(text)\n")
            Foundation.exit(1)
        } catch {
            Interruption.exitIfInterrupted()
            exit(withError: error)
        }
        Interruption.exitIfInterrupted()
    }

    /// An argument found wrong once the command ran (an unknown app, a bad duration): still a
    /// usage error, but the command's, not the root's list of subcommands.
    static func usageFailure(_ message: String, of command: any ParsableCommand) -> Never {
        Interruption.exitIfInterrupted()
        let name = type(of: command)._commandName
        StandardStreams.writeError("mamlaunch \(name): error: \(message)\nSee 'mamlaunch \(name) --help'.\n")
        Foundation.exit(ExitCode.validationFailure.rawValue)
    }
}
