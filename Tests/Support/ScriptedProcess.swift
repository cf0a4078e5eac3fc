import Foundation
import MAMScript

/// An app process in scripted mode (docs/SCRIPTING.md) driven through pipes: a command line in,
/// its result line out; event lines are kept as they come.
public final class ScriptedProcess: @unchecked Sendable {
    public let process = Process()
    public let input = Pipe()
    public let output = Pipe()
    public let errors = Pipe()
    private var pending = Data()
    public private(set) var lines: [JSONValue] = []
    private var number = 0

    public struct Ended: Error, CustomStringConvertible {
        public var description: String
    }

    public init(_ executable: String, _ arguments: [String], environment: [String: String]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
    }

    /// Sends one command and returns its result (the line with its id).
    @discardableResult
    public func send(_ name: String, _ arguments: String...) throws -> JSONValue {
        number += 1
        do {
            try input.fileHandleForWriting.write(contentsOf: Data((ScriptCommand(name, arguments).line + "\n").utf8))
        } catch {
            throw Ended(description: "the app is gone, \(name) could not be sent: \(String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))")
        }
        while true {
            if let found = lines.first(where: { $0["id"]?.number == Double(number) }) { return found }
            guard readLine() else {
                throw Ended(description: "the app ended before answering \(name): \(String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))")
            }
        }
    }

    /// Sends one command to an instance the launcher started anew (it numbers its lines from 1
    /// again) and returns the first result of that command after what was read so far.
    public func sendToRestarted(_ name: String, _ arguments: String...) throws -> JSONValue {
        number = 1
        let before = lines.count
        do {
            try input.fileHandleForWriting.write(contentsOf: Data((ScriptCommand(name, arguments).line + "\n").utf8))
        } catch {
            throw Ended(description: "the app is gone, \(name) could not be sent")
        }
        while true {
            if let found = lines.dropFirst(before).first(where: { $0["command"]?.string == name }) { return found }
            guard readLine() else { throw Ended(description: "the app ended before answering \(name)") }
        }
    }

    /// Reads one more line; false at the end of output.
    private func readLine() -> Bool {
        while true {
            if let i = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = pending[pending.startIndex..<i]
                pending = Data(pending[(i + 1)...])
                if let value = try? JSONValue.parse(Array(line)) { lines.append(value) }
                return true
            }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { return false }
            pending.append(chunk)
        }
    }

    /// Events of a kind seen so far.
    public func events(_ kind: String) -> [JSONValue] { lines.filter { $0["event"]?.string == kind } }

    /// Says bye and waits for the process; returns its status.
    @discardableResult
    public func finish() -> Int32 {
        if process.isRunning { _ = try? send("bye") }
        try? input.fileHandleForWriting.close()
        while readLine() {}
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Everything the process printed, once it has ended (for Courier, which takes its steps as
    /// arguments).
    public func allLines() -> [JSONValue] {
        try? input.fileHandleForWriting.close()
        while readLine() {}
        process.waitUntilExit()
        return lines
    }
}
