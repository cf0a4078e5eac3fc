import Foundation
import MAMTestSupport
import Testing

/// `mamlaunch matrix` live as an ordinary user (issue 22: 2,746 lines of FAIL and "549 failed"):
/// one line that says it needs root and that --predict does not; --predict runs.
@Suite("mamlaunch matrix as an ordinary user")
struct NonRootTests {
    static func asNobody(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        var env = ProcessInfo.processInfo.environment
        env["MAMLAB_ROOT"] = CommandRunner.root.path
        env["TMPDIR"] = "/tmp"
        return try ChildProcess.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", CommandRunner.executable.path] + arguments,
                                    environment: env, directory: "/", timeout: 60)
    }

    @Test func liveSaysInOneLineThatItNeedsRoot() throws {
        let r = try Self.asNobody(["matrix", "exit-criteria"])
        #expect(r.status == 1, "\(r.err)")
        let lines = r.err.split(separator: "\n")
        #expect(lines.count == 1, "\(r.err.prefix(2000))")
        #expect(r.err.contains("needs root") && r.err.contains("--predict"), "\(r.err)")
        #expect(r.out.isEmpty)
    }

    @Test func predictRunsWithoutRoot() throws {
        let r = try Self.asNobody(["matrix", "exit-criteria", "--predict"])
        #expect(r.status == 0, "\(r.err.suffix(2000))")
        #expect(r.err.contains("19 cells (predicted, nothing ran)"), "\(r.err.suffix(500))")
    }
}
