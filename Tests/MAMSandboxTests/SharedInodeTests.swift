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

    /// The host's /dev/null as "device inode", as Python's os.stat says it.
    static var hostNull: String {
        var st = stat()
        stat("/dev/null", &st)
        return "\(st.st_dev) \(st.st_ino)"
    }

    static let describeStreams = """
        import os
        for fd in (0, 1, 2):
            st = os.fstat(fd)
            print(fd, os.readlink(f"/proc/self/fd/{fd}"), st.st_dev, st.st_ino, flush=True)
        """

    @Test("standard streams the launcher was given as the host's /dev/null are the app's own null device")
    func hostNullStreams() throws {
        let containers = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-inodes-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: containers) }
        // As cron or a service starts it: every stream the null device (stdout read back through a file).
        let out = containers + ".out"
        defer { unlink(out) }
        let r = try ChildProcess.run("/bin/sh", ["-c", "exec \"$0\" run --manifest \"$1\" --no-broker --containers \"$2\" -- /usr/bin/python3 -c \"$3\" </dev/null 2>/dev/null >\"$4\"",
                                                  Built.directory.appendingPathComponent("mamlaunch").path, Self.manifest, containers, Self.describeStreams, out], timeout: 60)
        let said = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        #expect(r.status == 0, "\(said)\(r.err)")
        let lines = said.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(said)")
        for line in lines where !line.hasPrefix("1 ") {
            #expect(line.contains(" /dev/null ") && !line.hasSuffix(" " + Self.hostNull), "not the host's null device: \(line) (host's \(Self.hostNull))")
        }
    }

    @Test("a launcher started with its standard input closed gives the app no descriptor of its own")
    func closedStandardInput() throws {
        let containers = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-inodes-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: containers) }
        let r = try ChildProcess.run("/bin/sh", ["-c", "exec \"$0\" run --manifest \"$1\" --no-broker --containers \"$2\" -- /usr/bin/python3 -c \"$3\" 0<&-",
                                                  Built.directory.appendingPathComponent("mamlaunch").path, Self.manifest, containers, Self.describeStreams], timeout: 60)
        #expect(r.status == 0, "\(r.out)\(r.err)")
        let input = r.out.split(separator: "\n").first { $0.hasPrefix("0 ") }.map(String.init) ?? ""
        #expect(input.hasPrefix("0 /dev/null ") && !input.hasSuffix(" " + Self.hostNull), "stdin: \(input) (an epoll of the launcher's was handed over before)")
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
