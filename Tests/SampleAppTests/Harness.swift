import CMAMSandbox
import Foundation
import Glibc
import MAMScript
import MAMTestSupport
import Testing

/// The built tools and the project, as the tests find them.
enum Built {
    static let root = BuiltProducts.root
    static var bin: String { BuiltProducts.bin }
    static var environment: [String: String] { ProcessInfo.processInfo.environment.merging(["MAMLAB_ROOT": root]) { _, b in b } }

    /// Runs a tool to its end (bounded: one that does not end within `timeout` seconds is
    /// killed and the call throws with what it printed): status, output and errors.
    static func run(_ tool: String, _ arguments: [String], timeout: Double = 60) throws -> (status: Int32, out: String, err: String) {
        try ChildProcess.run(bin + "/" + tool, arguments, environment: environment, timeout: timeout)
    }
}

struct SampleTestError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// A real broker on a throwaway device directory (the contoso tenant, the project's apps):
/// MAMTestSupport's TestBroker.
final class Broker: TestBroker, @unchecked Sendable {
    init() throws {
        try super.init(prefix: "mamlab-samples", extraArguments: ["--log-level", "warning"])
    }

    /// `mamlaunch run APP` against this broker, with more arguments (`--user`, `--`, ...).
    func launchArguments(_ app: String, _ more: [String]) -> [String] {
        ["run", app, "--broker", launcherSocket, "--containers", containers] + more
    }

    func audit() -> [[String: Any]] { auditRecords }
}

/// A sample app in scripted mode (`-- --script`): a command line in, its JSON result out.
typealias ScriptedApp = MAMTestSupport.ScriptedProcess

extension ScriptedProcess {
    convenience init(_ broker: Broker, _ app: String, user: String? = nil) throws {
        try self.init(Built.bin + "/mamlaunch", broker.launchArguments(app, (user.map { ["--user", $0] } ?? []) + ["--", "--script"]),
                      environment: Built.environment)
    }
}

/// A person at a terminal: `mamlaunch run APP` on a pseudo-terminal, typing lines and reading
/// the screen as they would.
final class TerminalSession: @unchecked Sendable {
    let process = Process()
    let primary: Int32
    /// Everything shown so far (the echo of what was typed included).
    private(set) var screen = ""
    /// Where the text not yet matched by `waitFor` starts.
    private var mark: String.Index

    init(_ broker: Broker, _ app: String, user: String? = nil) throws {
        var p: Int32 = -1, s: Int32 = -1
        guard mam_open_pty(&p, &s) == 0 else { throw SampleTestError("no pseudo-terminal: \(String(cString: strerror(errno)))") }
        primary = p
        let secondary = FileHandle(fileDescriptor: s, closeOnDealloc: true)
        process.executableURL = URL(fileURLWithPath: Built.bin + "/mamlaunch")
        process.arguments = broker.launchArguments(app, user.map { ["--user", $0] } ?? [])
        process.environment = Built.environment
        process.standardInput = secondary
        process.standardOutput = secondary
        process.standardError = secondary
        try process.run()
        try secondary.close()
        mark = screen.startIndex
    }

    /// Types a line, as a person would, and presses return.
    func type(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(primary, $0.baseAddress, $0.count) }
    }

    /// Reads the screen until `text` shows after what was already matched; returns the text
    /// shown up to and including it. A generous bound ends a wait for something that never
    /// comes, so a failing test fails instead of hanging.
    @discardableResult
    func waitFor(_ text: String, bound seconds: Int32 = 20) throws -> String {
        let deadline = time(nil) + Int(seconds)
        while true {
            if let r = screen.range(of: text, range: mark..<screen.endIndex) {
                let shown = String(screen[mark..<r.upperBound])
                mark = r.upperBound
                return shown
            }
            var pfd = pollfd(fd: primary, events: Int16(POLLIN), revents: 0)
            guard time(nil) < deadline, poll(&pfd, 1, 1000) >= 0 else {
                throw SampleTestError("\"\(text)\" never showed; the screen after the last match:\n\(screen[mark...])")
            }
            if pfd.revents == 0 { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = read(primary, &buffer, buffer.count)
            if n <= 0 { throw SampleTestError("the session ended before \"\(text)\" showed; the screen after the last match:\n\(screen[mark...])") }
            let offset = screen.distance(from: screen.startIndex, to: mark)
            screen += String(decoding: buffer[0..<n], as: UTF8.self)
            mark = screen.index(screen.startIndex, offsetBy: offset)
        }
    }

    @discardableResult
    /// Types a command and returns the screen from there up to `last`, the end of what it
    /// should print. (Not up to the next prompt: a notice that arrives meanwhile shows its own.)
    func command(_ line: String, until last: String) throws -> String {
        type(line)
        return try waitFor(last)
    }

    /// Types `quit`, waits for the goodbye and the launcher's exit; returns its status.
    func quit() throws -> Int32 {
        type("quit")
        try waitFor("Bye.")
        process.waitUntilExit()
        close(primary)
        return process.terminationStatus
    }
}
