import Foundation
import Glibc

/// The project and its built tools, as process tests find them: the repository root (from this
/// file's place in it) and the build folder that holds `mambroker`, `mamlaunch` and the apps.
public enum BuiltProducts {
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    public static var bin: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = (exe as NSString).deletingLastPathComponent
        for _ in 0..<4 where !FileManager.default.isExecutableFile(atPath: dir + "/mambroker") { dir = (dir as NSString).deletingLastPathComponent }
        return dir
    }
}

/// A broker the tests started (`mambroker` with their arguments), ready once it said so.
public final class BrokerProcess: @unchecked Sendable {
    public let child: ChildProcess
    public var process: Process { child.process }
    public var pid: Int32 { child.pid }

    public struct DidNotStart: Error, CustomStringConvertible {
        public var description: String
    }

    /// Starts the broker and waits up to `timeout` seconds for its `ready` line. `log`: the file
    /// that takes its standard error (nil: kept in memory).
    public init(_ arguments: [String], environment: [String: String]? = nil, log: String? = nil, timeout: Double = 60) throws {
        child = try ChildProcess(BuiltProducts.bin + "/mambroker", arguments, environment: environment, input: false, stderrTo: log)
        let ready = try child.waitForOutput("its ready line", timeout: timeout) { $0.starts(with: Data("ready".utf8)) }
        guard ready else {
            _ = try? child.waitForExit(timeout: 5)
            let said = log.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? child.standardError
            throw DidNotStart(description: "mambroker did not start: \(said)")
        }
    }

    /// Sends `signal` and waits up to `timeout` seconds for the broker's end; a broker that does
    /// not end is killed (and the wait throws, so the test fails saying so).
    public func stop(_ signal: Int32 = SIGTERM, timeout: Double = 30) throws {
        guard process.isRunning else { return }
        Glibc.kill(pid, signal)
        try child.waitForExit("its end after signal \(signal)", timeout: timeout)
    }
}
