import Foundation
import Glibc
import MAMLauncher
import MAMMatrixLive
import MAMTestSupport
import Testing

/// Every command that starts processes owns them: SIGINT (Ctrl-C), SIGTERM and SIGHUP (a closed
/// terminal) mid-run stop its broker and apps, remove its folders and cgroups, and say
/// "interrupted" (issue 22: each left a broker under pid 1, /tmp/mamlab-* folders and empty cgroups).
@Suite("interrupting a command leaves nothing behind", .serialized)
struct InterruptionTests {
    static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    static var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["MAMLAB_ROOT"] = CommandRunner.root.path
        return env
    }

    @Test("mamlaunch run: its broker, its app, its device folder and cgroups go", arguments: signals)
    func run(_ sig: Int32) throws {
        let containers = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-interrupt-\(UUID().uuidString.prefix(6))").path
        defer { try? FileManager.default.removeItem(atPath: containers) }
        let child = try ChildProcess(CommandRunner.executable.path, ["run", "Mail", "--user", "adele@contoso.com", "--containers", containers, "--", "--script"],
                                     environment: Self.environment, directory: CommandRunner.root.path)
        defer { child.killTree() }
        try child.input!.fileHandleForWriting.write(contentsOf: Data("hello\n".utf8))
        let answered = try child.waitForOutput("Mail's answer to hello", timeout: 60) { String(decoding: $0, as: UTF8.self).contains("\"id\"") }
        #expect(answered, "\(child.standardError)")
        // Its broker's folder: root's, under /run/mamlab, named after the pid and a random part.
        try Self.interrupt(child, sig, folders: [], prefix: "mamlab-device-\(child.pid)-", in: "/run/mamlab/")
    }

    @Test("mamlaunch run --broker: its app, its cgroups and (--clean) its container go; the broker it did not start serves on",
          arguments: signals)
    func runWithABroker(_ sig: Int32) throws {
        let broker = try TestBroker(prefix: "mamlab-interrupt-broker")
        defer { broker.stop() }
        let child = try ChildProcess(CommandRunner.executable.path, ["run", "Mail", "--user", "adele@contoso.com", "--broker", broker.launcherSocket,
                                                                     "--containers", broker.containers, "--clean", "--", "--script"],
                                     environment: Self.environment, directory: CommandRunner.root.path)
        defer { child.killTree() }
        try child.input!.fileHandleForWriting.write(contentsOf: Data("hello\n".utf8))
        let answered = try child.waitForOutput("Mail's answer to hello", timeout: 60) { String(decoding: $0, as: UTF8.self).contains("\"id\"") }
        #expect(answered, "\(child.standardError)")
        #expect(FileManager.default.fileExists(atPath: broker.containers + "/com.contoso.mail"), "Mail's container while it runs")
        try Self.interrupt(child, sig, folders: [])
        #expect(!FileManager.default.fileExists(atPath: broker.containers + "/com.contoso.mail"), "--clean: the container goes on a signal too")
        #expect(broker.process?.isRunning == true, "a broker the run did not start is not its to stop")
        let sync = try ChildProcess.run(CommandRunner.executable.path, ["sync", "--broker", broker.launcherSocket], environment: Self.environment, timeout: 30)
        #expect(sync.out.contains("sync refused: no app with the SDK is running"), "Mail is gone from the broker: \(sync)")
    }

    @Test("mamlaunch run --no-broker: its app and cgroups go", arguments: signals)
    func runWithNoBroker(_ sig: Int32) throws {
        let containers = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-interrupt-\(UUID().uuidString.prefix(6))").path
        defer { try? FileManager.default.removeItem(atPath: containers) }
        // Any program under Notes' manifest: cat echoes what it reads, so its answer says it runs.
        let child = try ChildProcess(CommandRunner.executable.path, ["run", "--manifest", CommandRunner.root.path + "/Apps/Notes/Info.plist", "--no-broker",
                                                                     "--containers", containers, "--", "/bin/cat"],
                                     environment: Self.environment, directory: CommandRunner.root.path)
        defer { child.killTree() }
        try child.input!.fileHandleForWriting.write(contentsOf: Data("ping\n".utf8))
        let answered = try child.waitForOutput("cat's echo", timeout: 60) { String(decoding: $0, as: UTF8.self).contains("ping") }
        #expect(answered, "\(child.standardError)")
        try Self.interrupt(child, sig, folders: [])
    }

    @Test("mamlaunch matrix: the cells it has are written, and its brokers, apps, folders and cgroups go", arguments: signals)
    func matrix(_ sig: Int32) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-interrupt-\(UUID().uuidString.prefix(6))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let out = dir + "/cells.json"
        let child = try ChildProcess(CommandRunner.executable.path, ["matrix", "--format", "json", "--out", out, "--jobs", "2"],
                                     environment: Self.environment, directory: CommandRunner.root.path)
        defer { child.killTree() }
        // Progress says a cell was answered live: the brokers and apps are running.
        try child.waitForError(" cells\n", timeout: 120)
        let folders = ((try? FileManager.default.contentsOfDirectory(atPath: LiveMatrix.scratch)) ?? [])
            .filter { $0.hasPrefix("mamlab-matrix-\(child.pid)-") }
        #expect(!folders.isEmpty, "a policy's device folder while it runs")
        try Self.interrupt(child, sig, folders: folders, prefix: "mamlab-matrix-\(child.pid)-", in: LiveMatrix.scratch)
        #expect(child.standardError.contains("matrix: interrupted (\(Self.name(sig))) after "), "\(child.standardError.suffix(2000))")
        var cells = ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").split(separator: "\n")
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        // The report says first that it is partial: why, how far it got, which policies never ran.
        let partial = cells.first?["partial"] as? [String: Any]
        #expect(partial?["reason"] as? String == "interrupted (\(Self.name(sig)))", "\(cells.first ?? [:])")
        let answered = partial?["answered"] as? Int ?? -1, planned = partial?["planned"] as? Int ?? -1
        #expect(answered >= 0 && answered < planned && planned == 1107, "\(partial ?? [:])")
        #expect((partial?["notRun"] as? [String])?.isEmpty == false, "a run stopped this early has policies it never reached: \(partial ?? [:])")
        cells.removeFirst()
        #expect(cells.count == answered)
        #expect(!cells.isEmpty, "the cells answered before the signal are in the report")
        // None of them is a failure the interruption made up.
        #expect(cells.allSatisfy { $0["live"] is [String: Any] && $0["agree"] as? Bool == true }, "\(cells.prefix(3))")
    }

    @Test("mamlaunch bench-broker: its peers and scratch folder go", arguments: signals)
    func benchBroker(_ sig: Int32) throws {
        let child = try ChildProcess(CommandRunner.executable.path, ["bench-broker", "--iterations", "100000"],
                                     environment: Self.environment, directory: CommandRunner.root.path)
        defer { child.killTree() }
        // Its peers are up once it has started one.
        let deadline = Date(timeIntervalSinceNow: 60)
        while ProcessTree.descendants(of: child.pid).count < 2 && Date() < deadline && child.process.isRunning { usleep(20_000) }
        #expect(ProcessTree.descendants(of: child.pid).count >= 2, "\(child.standardError)")
        try Self.interrupt(child, sig, folders: [], prefix: "mamlab-bench-broker-\(child.pid)-")
    }

    @Test("mamlaunch bench-launch: its apps, cgroups and container folder go", arguments: signals)
    func benchLaunch(_ sig: Int32) throws {
        let child = try ChildProcess(CommandRunner.executable.path, ["bench-launch", "--iterations", "100000"],
                                     environment: Self.environment, directory: CommandRunner.root.path)
        defer { child.killTree() }
        // Its launches are short: wait until one is under way, so the signal finds it running.
        // (The sandbox's own check starts a throwaway child before the folder is made.)
        // Its container folder: the pid, then a random part no one can guess.
        let prefix = "mamlab-bench-\(child.pid)-"
        func made() -> Bool {
            ((try? FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())) ?? []).contains { $0.hasPrefix(prefix) }
        }
        let deadline = Date(timeIntervalSinceNow: 60)
        while (ProcessTree.descendants(of: child.pid).isEmpty || !made()) && Date() < deadline && child.process.isRunning { usleep(1_000) }
        #expect(child.process.isRunning && Date() < deadline, "no launch seen: \(child.standardError)")
        #expect(made(), "\(child.standardError)")
        // (A launch lasts milliseconds: the one seen may have ended by the signal.)
        try Self.interrupt(child, sig, folders: [], prefix: prefix, running: false)
    }

    /// `mamlaunch matrix | head`: output whose reader has gone. SIGPIPE ended mamlaunch at its
    /// first write with no word (status 141; a `run` mid-session, with its broker and apps still
    /// up); now the writes fail quietly and the command ends as it would have. The command is
    /// started with SIGPIPE at its default, as a shell starts it (this test process ignores it).
    @Test func aClosedOutputPipeEndsNothingEarly() throws {
        let pipe = Pipe()
        try pipe.fileHandleForReading.close()
        let child = try ChildProcess("/usr/bin/env", ["--default-signal=PIPE", CommandRunner.executable.path, "matrix", "exit-criteria"],
                                     environment: Self.environment, directory: CommandRunner.root.path,
                                     standardOutput: pipe.fileHandleForWriting)
        try pipe.fileHandleForWriting.close()
        defer { child.killTree() }
        let status = try child.waitForExit("the matrix with nobody reading its output", timeout: 120)
        #expect(child.process.terminationReason == .exit, "killed by signal \(status)")
        #expect(status == 0, "\(child.standardError.suffix(2000))")
        #expect(child.standardError.contains("19 cells"), "\(child.standardError.suffix(2000))")
        let left = ((try? FileManager.default.contentsOfDirectory(atPath: LiveMatrix.scratch)) ?? [])
            .filter { $0.hasPrefix("mamlab-matrix-\(child.pid)-") }
        #expect(left.isEmpty, "left: \(left)")
    }

    // MARK: helpers

    static func name(_ sig: Int32) -> String { [SIGINT: "SIGINT", SIGTERM: "SIGTERM", SIGHUP: "SIGHUP"][sig] ?? "\(sig)" }

    /// Sends `sig` to the command, waits for it (a deadline), then finds none of what it had started.
    static func interrupt(_ child: ChildProcess, _ sig: Int32, folders: [String], prefix: String? = nil, running: Bool = true,
                          in temporary: String = NSTemporaryDirectory()) throws {
        let pid = child.pid
        let started = ProcessTree.descendants(of: pid)
        if running { #expect(!started.isEmpty, "the command had started processes") }
        kill(pid, sig)
        let status = try child.waitForExit("exit after \(name(sig))", timeout: 60)
        #expect(status == 128 + sig, "\(child.standardError.suffix(2000))")
        #expect(child.standardError.contains("interrupted (\(name(sig)))"), "\(child.standardError.suffix(2000))")
        // Reaped by now or soon: a zombie of pid 1 is gone in a moment.
        let deadline = Date(timeIntervalSinceNow: 10)
        var alive = started.filter(ProcessTree.isAlive)
        while !alive.isEmpty && Date() < deadline {
            usleep(20_000)
            alive = alive.filter(ProcessTree.isAlive)
        }
        #expect(alive.isEmpty, "processes left running: \(alive)")
        for folder in folders { #expect(!FileManager.default.fileExists(atPath: temporary + folder), "\(folder) left") }
        if let prefix {
            let left = ((try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []).filter { $0.hasPrefix(prefix) }
            #expect(left.isEmpty, "left in \(temporary): \(left)")
        }
        let cgroups = Self.cgroups(of: pid)
        #expect(cgroups.isEmpty, "cgroups left: \(cgroups)")
    }

    /// The apps' cgroups a launcher made are named BUNDLE.PID.N (AppCgroup).
    static func cgroups(of pid: Int32) -> [String] {
        var found: [String] = []
        var next = [("/sys/fs/cgroup", 0)]
        while let (dir, depth) = next.popLast() {
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] {
                let path = dir + "/" + entry
                var st = stat()
                guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFDIR else { continue }
                if entry.contains(".\(pid).") { found.append(path) }
                if depth < 6 { next.append((path, depth + 1)) }
            }
        }
        return found
    }
}
