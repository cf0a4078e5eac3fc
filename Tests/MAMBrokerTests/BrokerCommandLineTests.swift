import Foundation
import Glibc
import MAMTestSupport
import MAMWire
import Testing

/// mambroker's options that take one of a few words: a word outside them is refused before
/// anything starts, and the refusal lists the words it takes.
@Suite("mambroker's command line")
struct BrokerCommandLineTests {
    static func mambroker(_ arguments: [String]) throws -> (status: Int32, err: String) {
        let r = try ChildProcess.run(BuiltProducts.bin + "/mambroker", arguments, timeout: 30)
        return (r.status, r.err)
    }

    @Test func aClockOutsideRealAndVirtualIsRefusedNamingBoth() throws {
        let r = try Self.mambroker(["--tenant", "/nonexistent/tenant.json", "--clock", "sideways"])
        #expect(r.status != 0 && r.err.contains("sideways") && r.err.contains("'real'") && r.err.contains("'virtual'"), "\(r.err)")
    }

    @Test func aLogLevelOutsideSwiftLogsIsRefusedNamingThem() throws {
        let r = try Self.mambroker(["--tenant", "/nonexistent/tenant.json", "--log-level", "loud"])
        #expect(r.status != 0 && r.err.contains("loud") && r.err.contains("critical"), "\(r.err)")
    }

    /// A start that fails after the device folder was made (an invalid tenant) removes the
    /// folder it made, lock and all; a folder that was there before stays.
    @Test func aFailedStartLeavesNoDeviceFolderItMade() throws {
        let scratch = "/tmp/mamlab-broker-failed-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let tenant = scratch + "/tenant.json"
        try Data(#"{"tenant": "contoso.com", "users": [{"upn": 7}]}"#.utf8).write(to: URL(fileURLWithPath: tenant))
        let fresh = scratch + "/device"
        let r = try Self.mambroker(["--tenant", tenant, "--device", fresh])
        #expect(r.status == 1 && r.err.contains("tenant.json"), "\(r.err)")
        #expect(!FileManager.default.fileExists(atPath: fresh), "the folder the failed start made is gone")
        let kept = scratch + "/kept"
        try FileManager.default.createDirectory(atPath: kept, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let again = try Self.mambroker(["--tenant", tenant, "--device", kept])
        #expect(again.status == 1)
        #expect(FileManager.default.fileExists(atPath: kept), "a folder that was there stays")
    }

    /// `mambroker ... | head`: output whose reader has gone. SIGPIPE ended the broker at its
    /// `ready` line (status 141), its apps cut off mid-session; now a write to the closed pipe
    /// fails quietly and the broker serves on. Started with SIGPIPE at its default, as a shell
    /// starts it (this test process ignores it); its output and its log go to a pipe nobody
    /// reads, and a reload makes it log after it is up.
    @Test func aClosedOutputPipeDoesNotEndTheBroker() throws {
        let device = "/tmp/mamlab-broker-pipe-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: device) }
        let out = Pipe()
        try out.fileHandleForReading.close()
        // Its log joins its output (`2>&1`) in the pipe nobody reads.
        let child = try ChildProcess("/usr/bin/env", ["--default-signal=PIPE", "/bin/sh", "-c", #"exec "$0" "$@" 2>&1"#, BuiltProducts.bin + "/mambroker",
                                                      "--tenant", BuiltProducts.root + "/Policies/contoso/tenant.json", "--device", device,
                                                      "--apps", BuiltProducts.root + "/Apps"],
                                     standardOutput: out.fileHandleForWriting)
        try out.fileHandleForWriting.close()
        defer { child.killTree() }
        // No `ready` to read: up once its public socket answers a hello.
        let deadline = Date(timeIntervalSinceNow: 30)
        var socket: WireSocket?
        while socket == nil && Date() < deadline && child.process.isRunning {
            socket = try? WireSocket.connect(device + "/mambroker.sock")
            if socket == nil { usleep(20_000) }
        }
        let s = try #require(socket, "the broker never listened; running: \(child.process.isRunning)")
        defer { s.close() }
        kill(child.process.processIdentifier, SIGHUP)
        try s.send(Frame(id: 1, .hello(minVersion: 1, maxVersion: 1, integratesSDK: true)))
        let welcome = s.receive(within: 10)?.frame
        guard case .success(let frame)? = welcome, case .welcome = frame.message else {
            Issue.record("no welcome after the reload: \(String(describing: welcome)); running: \(child.process.isRunning)")
            return
        }
        kill(child.process.processIdentifier, SIGTERM)
        let status = try child.waitForExit("the broker's end after SIGTERM", timeout: 30)
        #expect(child.process.terminationReason == .exit, "killed by signal \(status)")
        #expect(status == 0)
    }
}
