import Foundation
import MAMTestSupport
import Testing

/// Closing the terminal under a command ends it as Ctrl-C does: what it started (brokers, apps,
/// their folders and cgroups) is stopped and removed. The terminal is a real pseudo-terminal,
/// the command's controlling one, whose other side is closed while the command runs: the kernel
/// hangs it up (SIGHUP), and every later write to it fails (EIO), which once ended the command
/// at its first write, before it stopped anything, leaving a broker, its folder and its cgroups.
@Suite("Closing the terminal under matrix and run leaves nothing", .serialized)
struct TerminalHangupTests {
    /// Runs `arguments` on a new pseudo-terminal (python3's pty: the child is a session leader
    /// with it as controlling terminal), reads until `marker` appears, closes the terminal, and
    /// waits for the command to end. Returns its pid, its exit status and what it said.
    /// Runs `arguments` on a new pseudo-terminal (python3's pty: the child is a session leader
    /// with it as controlling terminal), types `input`, waits until a process names `running`
    /// (with `{pid}` the command's pid) and the terminal has shown `marker`, closes the terminal,
    /// and waits for the command to end. Returns its pid, its exit status and what it showed.
    static func closeTerminal(_ arguments: [String], typing input: String = "", running: String, marker: String) async throws -> (pid: Int32, status: Int32, said: String) {
        let code = #"""
            import json, os, pty, select, sys, time
            running, marker, typed = sys.argv[1], sys.argv[2].encode(), sys.argv[3].encode()
            pid, fd = pty.fork()
            if pid == 0:
                os.execv(sys.argv[4], sys.argv[4:])
            def started():
                wanted = running.replace("{pid}", str(pid)).encode()
                for entry in os.listdir("/proc"):
                    try:
                        if entry.isdigit() and wanted in open(f"/proc/{entry}/cmdline", "rb").read():
                            return True
                    except OSError:
                        pass
                return False
            if typed:
                os.write(fd, typed)
            seen = b""
            deadline = time.time() + 90
            while not (marker in seen and started()) and time.time() < deadline:
                if select.select([fd], [], [], 0.2)[0]:
                    try:
                        chunk = os.read(fd, 4096)
                    except OSError:
                        break
                    if not chunk:
                        break
                    seen += chunk
            ready = marker in seen and started()
            os.close(fd)  # the terminal goes away
            status = None
            deadline = time.time() + 60
            while time.time() < deadline:
                done, raw = os.waitpid(pid, os.WNOHANG)
                if done:
                    status = os.waitstatus_to_exitcode(raw)
                    break
                time.sleep(0.05)
            if status is None:
                os.kill(pid, 15)
                os.waitpid(pid, 0)
            print(json.dumps({"pid": pid, "status": status, "said": seen.decode(errors="replace")[-3000:], "ready": ready}))
            """#
        // Off the shared pool: the harness waits up to minutes for the command.
        let r = try await ChildProcess.runOffPool("/usr/bin/python3", ["-c", code, running, marker, input] + arguments,
                                     environment: ProcessInfo.processInfo.environment.merging(["MAMLAB_ROOT": CommandRunner.root.path]) { _, b in b },
                                     timeout: 180)
        guard r.status == 0, let o = try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any] else {
            throw HangupError("the pty harness failed: \(r.out) \(r.err)")
        }
        #expect(o["ready"] as? Bool == true, "the command never got to \(running) and \(marker): \(o["said"] ?? "")")
        let status = (o["status"] as? Int).map(Int32.init) ?? -1
        return (Int32(o["pid"] as? Int ?? -1), status, o["said"] as? String ?? "")
    }

    /// Whatever the command with `pid` left: folders named after it, processes that name them,
    /// cgroups named after it.
    static func leftBehind(_ pid: Int32) -> [String] {
        var left: [String] = []
        let fm = FileManager.default
        let prefixes = ["mamlab-matrix-\(pid)-", "mamlab-device-\(pid)-"]
        for dir in ["/dev/shm", NSTemporaryDirectory(), "/tmp", "/run/mamlab"] {
            for name in (try? fm.contentsOfDirectory(atPath: dir)) ?? [] where prefixes.contains(where: name.hasPrefix) {
                left.append("folder \(dir)/\(name)")
            }
        }
        for entry in (try? fm.contentsOfDirectory(atPath: "/proc")) ?? [] where Int32(entry) != nil {
            guard let raw = fm.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
            let cmdline = String(decoding: raw.map { $0 == 0 ? 32 : $0 }, as: UTF8.self)
            if prefixes.contains(where: cmdline.contains) { left.append("process \(entry): \(cmdline)") }
        }
        if let walker = fm.enumerator(atPath: "/sys/fs/cgroup") {
            for case let path as String in walker where (path as NSString).lastPathComponent.contains(".\(pid).") {
                left.append("cgroup /sys/fs/cgroup/\(path)")
                walker.skipDescendants()
            }
        }
        return left
    }

    /// Waits (up to a deadline) for what a command left to be gone: its stoppers may still be
    /// reaping when it exits.
    static func nothingLeft(_ pid: Int32) -> [String] {
        let deadline = Date(timeIntervalSinceNow: 10)
        var left = leftBehind(pid)
        while !left.isEmpty && Date() < deadline {
            usleep(200_000)
            left = leftBehind(pid)
        }
        return left
    }

    @Test("matrix: the terminal closed during a live run")
    func matrix() async throws {
        // Closed once a broker runs and cells are being answered. The exit-criteria experiment:
        // the default one's set-up, under a loaded suite, kept both cores for minutes.
        let out = NSTemporaryDirectory() + "mamlab-hangup-\(UUID().uuidString.prefix(8)).json"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let run = try await Self.closeTerminal([CommandRunner.executable.path, "matrix", "exit-criteria", "--jobs", "1", "--cells-in-flight", "1",
                                                "--format", "json", "--out", out],
                                               running: "mamlab-matrix-{pid}-", marker: "cells")
        #expect(run.status == 128 + SIGHUP, "status \(run.status): \(run.said.suffix(800))")
        #expect(Self.nothingLeft(run.pid).isEmpty, "\(Self.leftBehind(run.pid))")
        // The report of the cells answered is written, and says on its first line that it is partial.
        let report = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        let first = report.split(separator: "\n").first.map(String.init) ?? ""
        #expect(first.hasPrefix("{\"partial\"") && first.contains("SIGHUP"), "\(report.prefix(600))")
    }

    @Test("run: the terminal closed under an app the user is typing to")
    func run() async throws {
        // Closed once Notes has answered (its broker, the run's own, is running).
        let run = try await Self.closeTerminal([CommandRunner.executable.path, "run", "Notes"], typing: "hello\n", running: "mamlab-device-{pid}-",
                                         marker: "\"command\":\"hello\"")
        #expect(run.status == 128 + SIGHUP, "status \(run.status): \(run.said.suffix(800))")
        #expect(Self.nothingLeft(run.pid).isEmpty, "\(Self.leftBehind(run.pid))")
    }

    /// A broker run in a terminal ends with it: the hangup's SIGHUP is not taken for a reload,
    /// which would leave it serving with no terminal. (`kill -HUP` still reloads: RobustnessTests.)
    @Test("mambroker: the terminal it runs in closed")
    func broker() async throws {
        let device = NSTemporaryDirectory() + "mamlab-hangup-broker-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: device) }
        let mambroker = CommandRunner.executable.deletingLastPathComponent().appendingPathComponent("mambroker").path
        let run = try await Self.closeTerminal([mambroker, "--tenant", CommandRunner.root.path + "/Policies/contoso/tenant.json", "--device", device],
                                         running: device, marker: "ready ")
        #expect(run.status == 0, "status \(run.status): \(run.said.suffix(800))")
        #expect(!FileManager.default.fileExists(atPath: device + "/launcher.sock"), "its sockets go with it")
    }
}

struct HangupError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}
