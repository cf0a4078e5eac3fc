import CMAMSandbox
import Foundation
import Testing

/// Runs built executables (mamlaunch, Hostile) as processes.
enum Built {
    static var directory: URL {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        for _ in 0..<4 where !FileManager.default.isExecutableFile(atPath: dir.appendingPathComponent("mamlaunch").path) {
            dir = dir.deletingLastPathComponent()
        }
        return dir
    }

    static func run(_ tool: String, _ args: [String], in cwd: URL? = nil) throws -> (status: Int32, out: String, err: String) {
        let p = Process()
        p.executableURL = directory.appendingPathComponent(tool)
        p.arguments = args
        if let cwd { p.currentDirectoryURL = cwd }
        let o = Pipe(), e = Pipe()
        p.standardOutput = o
        p.standardError = e
        p.standardInput = FileHandle.nullDevice
        try p.run()
        // Read both pipes at once so neither fills up and stalls the child.
        nonisolated(unsafe) var errData = Data()
        let t = Thread { errData = e.fileHandleForReading.readDataToEndOfFile() }
        t.start()
        let out = o.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        while t.isExecuting || !t.isFinished { usleep(1000) }
        return (p.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: errData, as: UTF8.self))
    }
}

/// A throwaway world for the hostile app: another app's container with a secret, a broker
/// folder with state and audit files, a path outside any container, a public socket.
struct Scene {
    let root: URL
    var other: URL { root.appendingPathComponent("other") }
    var brokerDir: URL { root.appendingPathComponent("broker") }
    var outside: URL { root.appendingPathComponent("escaped.txt") }
    var publicSocket: String { root.appendingPathComponent("public.sock").path }
    var containers: URL { root.appendingPathComponent("containers") }

    init() throws {
        root = URL(fileURLWithPath: "/tmp").appendingPathComponent("mamlab-hostile-\(UUID().uuidString.prefix(8))")
        let fm = FileManager.default
        for d in [other, brokerDir, containers] { try fm.createDirectory(at: d, withIntermediateDirectories: true) }
        try Data("secret".utf8).write(to: other.appendingPathComponent("secret.txt"))
        try Data("state".utf8).write(to: brokerDir.appendingPathComponent("state.sqlite"))
        try Data("{}\n".utf8).write(to: brokerDir.appendingPathComponent("audit.jsonl"))
    }

    func arguments(otherPID: Int32) -> [String] {
        ["--public-socket", publicSocket, "--other-container", other.path, "--broker-dir", brokerDir.path,
         "--outside", outside.path, "--other-pid", String(otherPID)]
    }

    func remove() { try? FileManager.default.removeItem(at: root) }
}

func lines(_ text: String) -> [[String: Any]] {
    text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
}

/// Another process to aim signals at: a plain sleeper outside any sandbox.
func sleeper() throws -> Process {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/bin/sleep")
    p.arguments = ["30"]
    try p.run()
    return p
}

@Suite("Sandbox: the hostile app", .serialized, .timeLimit(.minutes(2)))
struct HostileTests {
    static let attempts = [
        "tcp_socket", "udp_socket", "unix_socketpair", "connect_broker_public_socket", "connect_abstract_socket",
        "read_other_container", "read_broker_state", "read_broker_audit", "write_outside_container", "exec_shell",
        "exec_shell_via_loader", "signal_other_app", "io_uring_setup", "keyctl", "process_vm_readv_parent",
        "unshare_user_namespace", "ptrace_parent", "mount_tmpfs", "bpf_prog_load", "fork_bomb", "memory_bomb",
    ]

    @Test func everyEscapeIsBlockedAndReportedByName() throws {
        let scene = try Scene()
        defer { scene.remove() }
        let target = try sleeper()
        defer { target.terminate() }
        // Stand-ins: a public socket the app should not reach, and the broker end of the hand-off.
        let publicListener = mam_listen_seqpacket(scene.publicSocket, 4)
        #expect(publicListener >= 0)
        defer { close(publicListener) }
        let brokerSocket = scene.root.appendingPathComponent("launcher.sock").path
        let broker = mam_listen_seqpacket(brokerSocket, 4)
        #expect(broker >= 0)
        defer { close(broker) }
        nonisolated(unsafe) var messages: [[String: Any]] = []
        nonisolated(unsafe) var appByte: Int = -1
        let listener = Thread {
            let conn = accept(broker, nil, nil)
            guard conn >= 0 else { return }
            var buffer = [UInt8](repeating: 0, count: 65536)
            var fd: Int32 = -1
            while true {
                let n = mam_receive_with_fd(conn, &buffer, buffer.count, &fd)
                if n <= 0 { break }
                if let m = try? JSONSerialization.jsonObject(with: Data(buffer[0..<n])) as? [String: Any] { messages.append(m) }
                if fd >= 0 {
                    // The app's connection: it sends one byte to show the channel is open.
                    var b: UInt8 = 0
                    appByte = recv(fd, &b, 1, 0) == 1 ? Int(b) : -2
                    close(fd)
                }
            }
            close(conn)
        }
        listener.start()
        let r = try Built.run("mamlaunch", ["run", "Hostile", "--broker", brokerSocket, "--containers", scene.containers.path, "--"]
                                + scene.arguments(otherPID: target.processIdentifier) + ["--destructive"])
        while !listener.isFinished { usleep(1000) }
        #expect(r.status == 0, "\(r.err)")
        let results = lines(r.out)
        let byAttempt = Dictionary(results.compactMap { l in (l["attempt"] as? String).map { ($0, l) } }, uniquingKeysWith: { a, _ in a })
        #expect(Set(byAttempt.keys) == Set(Self.attempts), "\(r.out)")
        for name in Self.attempts {
            #expect(byAttempt[name]?["result"] as? String == "blocked", "\(name): \(byAttempt[name] ?? [:])")
        }
        #expect(results.contains { $0["check"] as? String == "write_own_container" && $0["result"] as? String == "ok" })
        #expect(results.contains { $0["channel"] as? String == "broker" && $0["result"] as? String == "open" })
        #expect(!FileManager.default.fileExists(atPath: scene.outside.path))

        // The supervisor names each system call or path; the app cannot keep it quiet.
        let reported = [
            "socket AF_INET denied", "socketpair AF_UNIX denied", "socket AF_UNIX denied",
            // Reads outside the grant are refused by Landlock in the kernel, without a round trip
            // to the supervisor (docs/SANDBOX.md); writes are reported with their path.
            "openat for writing \(scene.outside.path) denied",
            "execve /bin/sh denied", "execve /lib64/ld-linux-x86-64.so.2 denied", "kill pid \(target.processIdentifier) denied",
            "io_uring_setup denied", "keyctl denied", "process_vm_readv killed", "unshare killed", "ptrace killed",
            "mount killed", "bpf killed",
        ]
        for phrase in reported {
            #expect(r.err.contains("sandbox violation: com.example.hostile (pid ") && r.err.contains(phrase), "missing report: \(phrase)\n\(r.err)")
        }
        // The broker heard the same, and was handed the app with its bundle id and pid.
        let adopt = messages.first { $0["type"] as? String == "adopt" }
        #expect(adopt?["bundleId"] as? String == "com.example.hostile")
        #expect((adopt?["pid"] as? Int ?? 0) > 0)
        #expect(messages.filter { $0["type"] as? String == "violation" }.count >= reported.count)
        #expect(appByte == 0, "the app's broker connection did not arrive")
    }

    @Test func theSameAttemptsSucceedOutsideTheSandbox() throws {
        let scene = try Scene()
        defer { scene.remove() }
        let target = try sleeper()
        defer { target.terminate() }
        let publicListener = mam_listen_seqpacket(scene.publicSocket, 4)
        defer { close(publicListener) }
        let throwaway = scene.root.appendingPathComponent("throwaway")
        try FileManager.default.createDirectory(at: throwaway, withIntermediateDirectories: true)
        let r = try Built.run("Hostile", scene.arguments(otherPID: target.processIdentifier), in: throwaway)
        let byAttempt = Dictionary(lines(r.out).compactMap { l in (l["attempt"] as? String).map { ($0, l["result"] as? String ?? "") } },
                                   uniquingKeysWith: { a, _ in a })
        // The harmless attempts work on an unconfined process, so the sandboxed run can fail.
        var expected = ["tcp_socket", "udp_socket", "unix_socketpair", "connect_broker_public_socket", "connect_abstract_socket",
                        "read_other_container", "read_broker_state", "read_broker_audit", "write_outside_container",
                        "exec_shell", "exec_shell_via_loader", "signal_other_app", "keyctl"]
        if geteuid() == 0 { expected += ["process_vm_readv_parent", "unshare_user_namespace"] }
        for name in expected { #expect(byAttempt[name] == "succeeded", "\(name) did not succeed unconfined: \(r.out)") }
        #expect(FileManager.default.fileExists(atPath: scene.outside.path))
    }

    @Test func doctorReportsTheKernelsSupport() throws {
        let r = try Built.run("mamlaunch", ["doctor"])
        #expect(r.out.contains("landlock") && r.out.contains("seccomp filters") && r.out.contains("seccomp notify"))
        #expect(r.status == 0 || r.out.contains("missing"))
    }

    @Test func aLaunchThatCannotStartSaysWhy() throws {
        let r = try Built.run("mamlaunch", ["run", "Nonexistent", "--no-broker"])
        #expect(r.status != 0 && r.err.contains("unknown app \"Nonexistent\""))
        let own = try Built.run("mamlaunch", ["run", "/no/such/binary", "--manifest", CommandRunnerPaths.root + "/Apps/Notes/Info.plist", "--no-broker"])
        #expect(own.status != 0 && own.err.contains("/no/such/binary: not an executable file"), "\(own.err)")
        let badTenant = try Built.run("mamlaunch", ["run", "Hostile", "--tenant", "/no/tenant.json"])
        #expect(badTenant.status != 0 && badTenant.err.contains("/no/tenant.json: error: no such file"), "\(badTenant.err)")
    }
}

enum CommandRunnerPaths {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
}
