import Foundation
import MAMKit

/// The interactive mode's prompt: reads a line, splits it into words, runs the command of that
/// name and prints what it says. Each app adds its own commands; `help` and `quit` are here.
///
/// Output is plain text: the launcher relays it to the user's terminal and turns every control
/// character into `?`, so no colours, no cursor tricks.
public final class Console: @unchecked Sendable {
    public typealias Action = @Sendable (_ arguments: [String]) async throws -> Void

    struct Command {
        var name: String
        var usage: String
        var summary: String
        var action: Action
    }

    public let title: String
    let prompt: String
    private let lock = NSLock()
    private var commands: [Command] = []
    /// Whether the prompt is on screen now (an event then prints on a line of its own first).
    private var prompting = false
    private var greeted = false

    /// `title` is the first line a person sees; `prompt` what precedes their input ("mail> ").
    public init(title: String, prompt: String) {
        self.title = title
        self.prompt = prompt
    }

    /// Adds a command: `usage` its arguments ("LOCATION [ACCOUNT]"), `summary` one line of help.
    public func add(_ name: String, _ usage: String = "", _ summary: String, _ action: @escaping Action) {
        lock.withLock { commands.append(Command(name: name, usage: usage, summary: summary, action: action)) }
    }

    /// Prints a message; safe from any task, also while the prompt waits for input.
    public func say(_ text: String) {
        lock.withLock {
            var out = prompting ? "\n" : ""
            out += text + "\n"
            if prompting { out += prompt }
            write(out)
        }
    }

    private func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    private func showPrompt() {
        lock.withLock {
            prompting = true
            write(prompt)
        }
    }

    /// The title and how to get help: the first thing on screen, once.
    public func greet() {
        guard lock.withLock({ () -> Bool in defer { greeted = true }; return !greeted }) else { return }
        say("\(title)\nType `help` for the commands, `quit` to leave.")
    }

    /// Runs until `quit` or the end of input.
    public func run(lines: AsyncStream<String>) async {
        greet()
        showPrompt()
        for await line in lines {
            lock.withLock { prompting = false }
            let words: [String]
            do { words = try Self.words(line) } catch {
                say("\(error)")
                showPrompt()
                continue
            }
            guard let name = words.first else { showPrompt(); continue }
            if name == "quit" || name == "exit" { say("Bye."); return }
            if name == "help" { say(help()) } else if let command = lock.withLock({ commands.first { $0.name == name } }) {
                do { try await command.action(Array(words.dropFirst())) } catch let e as UsageError {
                    say("usage: \(command.name) \(command.usage)" + (e.hint.isEmpty ? "" : "\n  \(e.hint)"))
                } catch {
                    say(Explain.failure(error, command.name))
                }
            } else {
                say("Unknown command \"\(name)\". Type `help` for the commands.")
            }
            showPrompt()
        }
        say("")
    }

    func help() -> String {
        let all = lock.withLock { commands } + [Command(name: "help", usage: "", summary: "This list.", action: { _ in }),
                                                Command(name: "quit", usage: "", summary: "Leave the app.", action: { _ in })]
        let width = all.map { ($0.name + " " + $0.usage).count }.max() ?? 0
        return "Commands:\n" + all.map { c in
            let head = c.usage.isEmpty ? c.name : c.name + " " + c.usage
            return "  " + head.padding(toLength: width + 2, withPad: " ", startingAt: 0) + c.summary
        }.joined(separator: "\n") + "\nWords with spaces go in double quotes: \"the Q3 forecast\"."
    }

    /// Words separated by spaces; "double quotes" keep spaces, \" and \\ escape.
    static func words(_ line: String) throws -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false, quoted = false, escaped = false
        for c in line {
            if escaped { current.append(c); escaped = false; continue }
            if c == "\\" && quoted { escaped = true; continue }
            if c == "\"" { quoted.toggle(); inWord = true; continue }
            if c == " " || c == "\t", !quoted {
                if inWord { words.append(current); current = ""; inWord = false }
                continue
            }
            current.append(c)
            inWord = true
        }
        if quoted { throw UsageError("a double quote is not closed") }
        if inWord { words.append(current) }
        return words
    }
}

/// Wrong arguments to a command: the console prints its usage (and the hint).
public struct UsageError: Error, CustomStringConvertible {
    public var hint: String
    public init(_ hint: String = "") { self.hint = hint }
    public var description: String { hint }
}

extension Array where Element == String {
    /// The arguments when there are `count` of them; otherwise the command's usage is shown.
    public func exactly(_ count: Int) throws -> [String] {
        guard self.count == count else { throw UsageError() }
        return self
    }
}
