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
        var env = ProcessInfo.processInfo.environment.merging(environment) { _, b in b }
        env["MAMLAB_ROOT"] = root.path
        // Bounded, both streams drained at once (MAMTestSupport's ChildProcess).
        let r = try ChildProcess.run(executable.path, arguments, environment: env, directory: directory.path, timeout: 120)
        return Result(status: r.status, stdout: r.out, stderr: r.err)
    }
}
