import Foundation
import MAMTestSupport
import Testing

/// `mamlaunch matrix` live as an ordinary user (issue 22: 2,746 lines of FAIL and "549 failed"):
/// one line that says it needs root and that --predict does not; --predict runs.
@Suite("mamlaunch matrix as an ordinary user")
struct NonRootTests {
    /// Runs `mamlaunch` as nobody against a copy of the project nobody may read: the checkout
    /// itself may sit in a folder of mode 0700 (a `mktemp -d` clone, a home directory).
    static func asNobody(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-nonroot-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: copy) }
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        for part in ["Apps", "Policies"] {
            try FileManager.default.copyItem(atPath: CommandRunner.root.appendingPathComponent(part).path, toPath: copy + "/" + part)
        }
        try FileManager.default.copyItem(atPath: CommandRunner.executable.path, toPath: copy + "/mamlaunch")
        // copyItem keeps the modes; a checkout's umask may have made them private.
        _ = try ChildProcess.run("/bin/chmod", ["-R", "a+rX", copy], timeout: 30)
        var env = ProcessInfo.processInfo.environment
        env["MAMLAB_ROOT"] = copy
        env["TMPDIR"] = "/tmp"
        return try ChildProcess.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", copy + "/mamlaunch"] + arguments,
                                    environment: env, directory: "/", timeout: 60)
    }

    /// A file the user may not reach is named as such, not as missing.
    @Test func anUnreadableTenantIsPermissionDeniedNotMissing() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-private-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let tenant = dir + "/tenant.json"
        try FileManager.default.copyItem(atPath: CommandRunner.root.appendingPathComponent("Policies/contoso/tenant.json").path, toPath: tenant)
        let r = try Self.asNobody(["check", tenant])
        #expect(r.status != 0)
        let said = r.out + r.err
        #expect(said.contains("tenant.json: error: permission denied") && !said.contains("no such file"), "\(said)")
    }

    @Test func liveSaysInOneLineThatItNeedsRoot() throws {
        let r = try Self.asNobody(["matrix", "exit-criteria"])
        #expect(r.status == 1, "\(r.err)")
        let lines = r.err.split(separator: "\n")
        #expect(lines.count == 1, "\(r.err.prefix(2000))")
        // One sentence: what is needed, why, and the way without it.
        #expect(r.err.hasSuffix("the live matrix needs root (sudo) to give each app a sandbox of its own; --predict answers from the engine alone, without it\n"),
                "\(r.err)")
        #expect(r.out.isEmpty)
    }

    @Test func predictRunsWithoutRoot() throws {
        let r = try Self.asNobody(["matrix", "exit-criteria", "--predict"])
        #expect(r.status == 0, "\(r.err.suffix(2000))")
        #expect(r.err.contains("19 cells (predicted, nothing ran)"), "\(r.err.suffix(500))")
    }
}
