import Foundation
import Glibc

/// How a sample app was started, which decides what it does:
///
/// - `--script`: a test or an experiment drives it (docs/SCRIPTING.md): commands in, JSON out.
/// - no arguments, standard input a terminal: a person runs it (`mamlaunch run mail`): a prompt.
/// - no arguments, standard input not a terminal: the broker started it to hand it a URL or a
///   document (its stdin is /dev/null): it serves the broker until the broker closes.
///
/// `--interactive` asks for the prompt without a terminal (a pipe), for people who script it.
public enum SampleMode: Sendable, Equatable {
    case scripted
    case interactive
    case serve

    /// The mode for these arguments, or nil when they are not understood.
    public static func choose(_ arguments: [String], stdinIsTerminal: Bool = isatty(0) == 1) -> SampleMode? {
        switch arguments {
        case ["--script"]: return .scripted
        case ["--interactive"]: return .interactive
        case []: return stdinIsTerminal ? .interactive : .serve
        default: return nil
        }
    }

    /// The mode of this process; prints the usage and exits 2 when the arguments are wrong.
    public static func current(app: String) -> SampleMode {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments == ["--help"] || arguments == ["-h"] {
            print(usage(app))
            exit(0)
        }
        guard let mode = choose(arguments) else {
            FileHandle.standardError.write(Data((usage(app) + "\n").utf8))
            exit(2)
        }
        return mode
    }

    static func usage(_ app: String) -> String {
        """
        usage: \(app) [--script | --interactive]
          (no arguments)  a prompt when started from a terminal (mamlaunch run \(app.lowercased())),
                          else serve the broker (it started the app to hand it a URL or document)
          --script        commands on stdin, one JSON result per line on stdout (docs/SCRIPTING.md)
          --interactive   the prompt, even when stdin is not a terminal
        """
    }
}
