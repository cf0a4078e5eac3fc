import Foundation
import MAMScript
import Testing

/// An app process in scripted mode (docs/SCRIPTING.md) driven through pipes: a command line in,
/// its result line out; event lines are kept as they come. Every wait has a deadline
/// (`deadline`, seconds); past it the app and what it started are killed and the wait throws
/// with what the app printed (ChildProcess).
public final class ScriptedProcess: @unchecked Sendable {
    public let child: ChildProcess
    public var process: Process { child.process }
    /// Seconds a command's answer, or the app's end, may take.
    public var deadline: Double
    private var consumed = 0
    public private(set) var lines: [JSONValue] = []
    private var number = 0

    public struct Ended: Error, CustomStringConvertible {
        public var description: String
    }

    public init(_ executable: String, _ arguments: [String], environment: [String: String], deadline: Double = 60) throws {
        child = try ChildProcess(executable, arguments, environment: environment)
        self.deadline = deadline
    }

    /// What the app (and its launcher) printed on standard error so far.
    public var standardError: String { child.standardError }

    /// Waits up to the deadline until standard error says `text`; throws (the app killed, its
    /// output in the error) when it does not.
    public func waitForError(_ text: String) throws {
        try child.waitForError(text, timeout: deadline)
    }

    private func write(_ name: String, _ arguments: [String]) throws {
        do {
            try child.input?.fileHandleForWriting.write(contentsOf: Data((ScriptCommand(name, arguments).line + "\n").utf8))
        } catch {
            throw Ended(description: "the app is gone, \(name) could not be sent: \(endedErrors())")
        }
    }

    /// Sends one command and returns its result (the line with its id).
    @discardableResult
    public func send(_ name: String, _ arguments: String...) throws -> JSONValue {
        number += 1
        try write(name, arguments)
        let id = Double(number)
        guard let found = try waitForLine("the answer to \(name)", { $0["id"]?.number == id }) else {
            throw Ended(description: "the app ended before answering \(name): \(endedErrors())")
        }
        return found
    }

    /// Sends one command to an instance the launcher started anew (it numbers its lines from 1
    /// again) and returns the first result of that command after what was read so far.
    public func sendToRestarted(_ name: String, _ arguments: String...) throws -> JSONValue {
        number = 1
        let before = readLines().count
        try write(name, arguments)
        guard let found = try waitForLine("the restarted app's answer to \(name)", after: before, { $0["command"]?.string == name }) else {
            throw Ended(description: "the app ended before answering \(name): \(endedErrors())")
        }
        return found
    }

    /// The first line (after the first `after` lines) that `matches`, waiting for it up to the
    /// deadline; nil when the app's output ended without one.
    public func waitForLine(_ what: String, after: Int = 0, _ matches: (JSONValue) -> Bool) throws -> JSONValue? {
        var found: JSONValue?
        _ = try child.waitForOutput(what, timeout: deadline) { data in
            parse(data)
            found = lines.dropFirst(after).first(where: matches)
            return found != nil
        }
        return found ?? readLines().dropFirst(after).first(where: matches)
    }

    /// Turns the complete lines of `data` not yet parsed into values.
    private func parse(_ data: Data) {
        guard let end = data.lastIndex(of: UInt8(ascii: "\n")), end >= data.startIndex + consumed else { return }
        for line in data[(data.startIndex + consumed)..<end].split(separator: UInt8(ascii: "\n")) {
            if let value = try? JSONValue.parse(Array(line)) { lines.append(value) }
        }
        consumed = end + 1 - data.startIndex
    }

    private func readLines() -> [JSONValue] {
        parse(child.standardOutput)
        return lines
    }

    /// The app's errors once it has ended (briefly waited for: the point is the message).
    private func endedErrors() -> String {
        _ = try? child.waitForExit("its end after an error", timeout: 5)
        return child.standardError
    }

    /// Events of a kind seen so far.
    public func events(_ kind: String) -> [JSONValue] { readLines().filter { $0["event"]?.string == kind } }

    /// Says bye and waits for the process; returns its status. An app that does not end within
    /// the deadline is killed and the test fails with its output.
    @discardableResult
    public func finish(sourceLocation: SourceLocation = #_sourceLocation) -> Int32 {
        if process.isRunning { _ = try? send("bye") }
        try? child.input?.fileHandleForWriting.close()
        do { return try child.waitForExit("its end after bye", timeout: deadline) } catch {
            Issue.record("\(error)", sourceLocation: sourceLocation)
            return process.terminationStatus
        }
    }

    /// Everything the process printed, once it has ended (for Courier, which takes its steps as
    /// arguments). An app that does not end within the deadline is killed and the test fails
    /// with its output; the lines so far are returned.
    public func allLines(sourceLocation: SourceLocation = #_sourceLocation) -> [JSONValue] {
        try? child.input?.fileHandleForWriting.close()
        do { try child.waitForExit("its end", timeout: deadline) } catch { Issue.record("\(error)", sourceLocation: sourceLocation) }
        return readLines()
    }
}
