import Foundation
import MAMTestSupport

/// Runs the built `mamlaunch` as a separate process, the way a person would.
struct CommandRunner {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The `mamlaunch` built beside this test bundle.
    static var executable: URL {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        // The test bundle may sit one level down (…/debug/X.xctest/…): walk up to the folder that holds the tool.
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("mamlaunch")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return root.appendingPathComponent(".build/debug/mamlaunch")
    }

    static func run(_ arguments: [String], in directory: URL = root, environment: [String: String] = [:]) throws -> Result {
        // Bounded, both streams drained at once (MAMTestSupport's ChildProcess).
        let r = try ChildProcess.run(executable.path, arguments, environment: Self.environment(environment), directory: directory.path, timeout: 120)
        return Result(status: r.status, stdout: r.out, stderr: r.err)
    }

    /// `run` for an async test: the wait is on a thread of its own, not the shared pool's
    /// (ChildProcess.runOffPool). For the commands that take seconds (a live matrix).
    static func runOffPool(_ arguments: [String], in directory: URL = root, environment: [String: String] = [:]) async throws -> Result {
        let r = try await ChildProcess.runOffPool(executable.path, arguments, environment: Self.environment(environment),
                                                  directory: directory.path, timeout: 120)
        return Result(status: r.status, stdout: r.out, stderr: r.err)
    }

    static func environment(_ extra: [String: String]) -> [String: String] {
        var env = ProcessInfo.processInfo.environment.merging(extra) { _, b in b }
        env["MAMLAB_ROOT"] = root.path
        return env
    }
}
