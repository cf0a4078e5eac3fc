import Foundation
import Glibc
import MAMTestSupport
import Testing

/// What two sandboxed apps can both reach must carry nothing between them: each app's null
/// device is a node of its own, dnotify is refused, and uname(2) names no machine. Two real
/// apps (Python programs under PyHello's manifest) run at once, the second probing while the
/// first holds what it would signal with.
@Suite("Sandbox: no inode two apps share carries a bit", .serialized, .timeLimit(.minutes(2)))
struct SharedInodeTests {
    static var python: String { "/usr/bin/python3" }
    static var manifest: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("clients/python/Info.plist").path
    }

    /// Runs `code` as a sandboxed app (no broker) with its container under `containers`.
    static func app(_ code: String, containers: String) throws -> ChildProcess {
        try ChildProcess(Built.directory.appendingPathComponent("mamlaunch").path,
                         ["run", "--manifest", manifest, "--no-broker", "--containers", containers, "--", python, "-c", code])
    }

    @Test("a lock one app holds on /dev/null is not seen by another; the host name is not the host's; dnotify is refused")
    func nullDeviceHostNameAndDnotify() throws {
        let containers = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-inodes-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: containers) }
        let holder = try Self.app("""
            import fcntl, os, time
            fd = os.open("/dev/null", os.O_RDONLY)
            fcntl.flock(fd, fcntl.LOCK_EX)
            print("locked", flush=True)
            time.sleep(30)
            """, containers: containers)
        defer { holder.killTree() }
        let locked = try holder.waitForOutput("the first app's lock", timeout: 60) { String(decoding: $0, as: UTF8.self).contains("locked") }
        try #require(locked, "\(holder.standardError)")
        let prober = try Self.app("""
            import fcntl, os
            fd = os.open("/dev/null", os.O_RDONLY)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                print("lock: free")
            except BlockingIOError:
                print("lock: held by another app")
            print("name:", os.uname().nodename)
            folder = os.open("/usr/share/zoneinfo", os.O_RDONLY | os.O_DIRECTORY)
            try:
                fcntl.fcntl(folder, fcntl.F_NOTIFY, fcntl.DN_ACCESS | fcntl.DN_MULTISHOT)
                print("dnotify: set")
            except OSError as e:
                print("dnotify: refused", e.errno)
            """, containers: containers)
        defer { prober.killTree() }
        let status = try prober.waitForExit("the second app's end", timeout: 60)
        let out = String(decoding: prober.standardOutput, as: UTF8.self)
        #expect(status == 0, "\(out)\(prober.standardError)")
        #expect(out.contains("lock: free"), "the two apps share a null device: \(out)")
        var host = [CChar](repeating: 0, count: 256)
        gethostname(&host, host.count)
        #expect(out.contains("name: mamlab\n") && !out.contains("name: \(String(cString: host))\n"), "\(out)")
        #expect(out.contains("dnotify: refused \(EPERM)"), "\(out)")
        #expect(prober.standardError.contains("fcntl F_NOTIFY denied"), "reported by name: \(prober.standardError)")
    }
}
