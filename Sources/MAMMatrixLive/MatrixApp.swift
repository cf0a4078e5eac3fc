import CMAMSandbox
import Foundation
import Glibc
import MAMCatalog
import MAMLauncher
import MAMPolicy
import MAMSandbox
import MAMScript
import MAMWire
import SystemPackage

/// One sample app running in its sandbox in scripted mode (docs/SCRIPTING.md), connected to a
/// broker through the launcher hand-off, driven through pipes: command lines in, JSON lines out.
///
/// The thread waiting for something from the app reads its output itself and sorts the lines
/// into results (by command number) and events: `call` writes a line and reads until its result
/// is there. (A reader thread per app cost every answer a second wake-up and thread switch in
/// the launcher, a tenth of its work in a matrix.) While no one waits, what the app writes
/// stays in the socket until the next look.
final class ScriptedApp: @unchecked Sendable {
    let bundleID: String
    let app: SandboxedApp
    private let input: Int32
    private let output: Int32
    /// Its own connection to the broker's launcher socket (sign-ins, violation reports).
    private let link: BrokerLink
    private var control: Int32 { link.socket.rawValue }
    private let state = NSCondition()
    private var results: [Int: JSONValue] = [:]
    private var events: [JSONValue] = []
    /// Each unclaimed event's line length, and their sum (bounded: `unclaimedEventBytes`).
    private var eventBytes: [Int] = []
    private var unclaimedBytes = 0
    private var sent = 0
    private var ended = false
    /// A thread is reading the output (the others wait for the lines it sorts).
    private var reading = false
    /// The output's bytes not yet a whole line, and the reader's chunk (the reading thread's only).
    private var pending: [UInt8] = []
    private var chunk = [UInt8](repeating: 0, count: 65_536)
    /// The identity the runner last set (nil: the app's own launch identity).
    var identity: String?
    /// Its stopper for an interruption, released before it is reaped.
    private var owned: Int?

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The sandbox refused or could not exec the app: trying again will not help.
    struct StartFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// Launches `executable --script` for `manifest` against the broker at `launcherSocket`.
    /// `account` is the account the launcher tells the broker the app starts under.
    static func launch(manifest: AppManifest, executable: String, launcherSocket: String, containers: String,
                       account: String?, personal: Bool = false, hidden: [String], log: String, allowWeaker: Bool = false) throws -> ScriptedApp {
        let link: BrokerLink
        do { link = try BrokerLink(path: launcherSocket) } catch { throw Failure(description: error.description) }
        var stdin: [Int32] = [-1, -1]
        var stdout: [Int32] = [-1, -1]
        // Stream socket pairs stand in for pipes: made close-on-exec in one call, so an app
        // launched at the same time from another thread never inherits this one's ends.
        let stream = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, stream, 0, &stdin) == 0 else {
            throw Failure(description: "cannot make the app's channels: \(String(cString: strerror(errno)))")
        }
        let appInput = Descriptor(adopting: stdin[0]), input = Descriptor(adopting: stdin[1])
        guard socketpair(AF_UNIX, stream, 0, &stdout) == 0 else {
            throw Failure(description: "cannot make the app's channels: \(String(cString: strerror(errno)))")
        }
        let appOutput = Descriptor(adopting: stdout[1]), output = Descriptor(adopting: stdout[0])
        // The kit's log, copied in batches (a line or two per cell would otherwise wake the
        // launcher's copier for each); read only when the run is kept (MAMLAB_MATRIX_KEEP).
        let errFD = (try? RotatingLog.pipe(into: log, coalesce: 0.05))?.release() ?? -1
        // Closed on every way out: the app has its copy once launched.
        defer { if errFD >= 0 { close(errFD) } }
        var config = LaunchConfiguration(bundleID: manifest.bundleID, executable: executable, arguments: ["--script"],
                                         environment: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]
                                             .merging(account.map { ["MAMLAB_ACCOUNT": $0] } ?? [:]) { a, _ in a },
                                         containersRoot: containers, brokerDescriptor: nil, hidden: hidden)
        config.allowWeaker = allowWeaker
        // The program hashed is the program run (Handoff.digest).
        let program = OpenProgram(executable)
        if let program, program.isNative { config.executableDescriptor = FileDescriptor(rawValue: program.descriptor.rawValue) }
        config.standardInput = FileDescriptor(rawValue: appInput.rawValue)
        config.standardOutput = FileDescriptor(rawValue: appOutput.rawValue)
        config.standardError = errFD >= 0 ? FileDescriptor(rawValue: errFD) : nil
        let bundle = manifest.bundleID
        let app: SandboxedApp
        do {
            app = try link.launch(config, adoption: { app in
                Adoption(bundleID: bundle, pid: app.pid, account: account, manifestDigest: nil,
                         executableDigest: Handoff.digest(of: program, ran: config), developer: false, personal: personal)
            }, sandbox: { launching in
                do {
                    return try LaunchThreads.shared.run {
                        try Sandbox.launch(launching) { v in
                            Violations.shared.record(v)
                            link.report(v)
                        }
                    }
                } catch { throw StartFailure(description: "\(bundle): \(error)") }
            })
        } catch let error as StartFailure {
            throw error
        } catch {
            throw Failure(description: "\(error)")
        }
        // The app has its ends; the launcher keeps its own.
        appInput.close()
        appOutput.close()
        let scripted = ScriptedApp(bundleID: bundle, app: app, input: input.release(), output: output.release(), link: link)
        // An interruption kills the app; `stop` then reaps it, which removes its cgroups.
        scripted.owned = Interruption.own { app.terminate(SIGKILL) }
        return scripted
    }

    private init(bundleID: String, app: SandboxedApp, input: Int32, output: Int32, link: BrokerLink) {
        self.bundleID = bundleID
        self.app = app
        self.input = input
        self.output = output
        self.link = link
    }

    /// The user signs `account` in to this app (the launcher's `signIn`, as a user adds an
    /// account), waiting up to `timeout` seconds for the broker to say it is done: only then may
    /// the app enroll it.
    func signIn(_ account: String, timeout: Double = 10) throws {
        // A socket of its own on the runner's connection (closed at the end of the sign-in).
        let socket: WireSocket
        do {
            socket = try WireSocket(duplicating: FileDescriptor(rawValue: control))
            try LauncherMessage.signIn(pid: app.pid, account: account, secret: nil).send(on: socket)
        } catch {
            throw Failure(description: "\(bundleID): the sign-in of \(account) could not be sent: \(error.detail)")
        }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            var p = pollfd(fd: control, events: Int16(POLLIN), revents: 0)
            let left = Int32(max(0, deadline.timeIntervalSinceNow * 1000))
            guard left > 0, poll(&p, 1, left) > 0, let raw = socket.receiveRaw() else {
                throw Failure(description: "\(bundleID): the broker did not answer the sign-in of \(account) within \(Int(timeout)) s")
            }
            // (A restart request may come first on this connection: not for this runner.)
            guard case let .controlReply(ok, detail)? = try? LauncherMessage.decode(raw.bytes) else { continue }
            if !ok { throw Failure(description: "\(bundleID): sign-in of \(account) refused: \(detail)") }
            return
        }
    }

    /// Sends one command and waits for its result (an object with `error` when it failed).
    func call(_ command: ScriptCommand, timeout: Double = 10) throws -> JSONValue {
        state.lock()
        sent += 1
        let id = sent
        state.unlock()
        var bytes = Array((command.line + "\n").utf8)
        let sending = Date(timeIntervalSinceNow: timeout)
        while !bytes.isEmpty {
            // send, not write: an app that is gone is an error to report, not a SIGPIPE that kills the run.
            let n = bytes.withUnsafeBytes { send(input, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                // Its input is full: an app that does not read its commands is waited for until
                // the call's deadline, not for ever (it can answer them unread, in advance).
                var p = pollfd(fd: input, events: Int16(POLLOUT), revents: 0)
                let left = Int32(max(0, sending.timeIntervalSinceNow * 1000))
                guard left > 0 else { throw Failure(description: "\(bundleID) did not read its commands within \(Int(timeout)) s") }
                _ = poll(&p, 1, left)
                continue
            }
            guard n > 0 else {
                let why = String(cString: strerror(errno))
                throw Failure(description: "\(bundleID) stopped reading commands (\(why))\(endOfApp())")
            }
            bytes.removeFirst(n)
        }
        state.lock()
        defer { state.unlock() }
        if !read(until: { $0.results[id] != nil }, deadline: Date(timeIntervalSinceNow: timeout)), !ended {
            throw Failure(description: "\(bundleID) did not answer \(command.name) within \(Int(timeout)) s")
        }
        guard let r = results.removeValue(forKey: id) else { throw Failure(description: "\(bundleID) exited before answering \(command.name)\(endOfApp())") }
        return r
    }

    /// How the app ended, for a cell it could not answer (looked at without reaping it; its
    /// output may close a moment before it is gone, so waits up to a second).
    private func endOfApp() -> String {
        var info = siginfo_t()
        for _ in 0..<100 {
            info = siginfo_t()
            if waitid(P_PID, id_t(app.pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0, info._sifields._sigchld.si_pid == app.pid {
                let status = info._sifields._sigchld.si_status
                switch info.si_code {
                case 1: return " (exit status \(status))"  // CLD_EXITED
                default: return " (killed by signal \(status))"
                }
            }
            usleep(10_000)
        }
        return " (its output closed; it is still running)"
    }

    /// The first unclaimed event of `kind`, waiting up to `timeout` seconds (0: only what is there).
    func event(_ kind: String, timeout: Double) -> JSONValue? {
        state.lock()
        defer { state.unlock() }
        let found = { (app: ScriptedApp) in app.events.contains { $0["event"]?.string == kind } }
        _ = read(until: found, deadline: timeout > 0 ? Date(timeIntervalSinceNow: timeout) : nil)
        guard let i = events.firstIndex(where: { $0["event"]?.string == kind }) else { return nil }
        unclaimedBytes -= eventBytes.remove(at: i)
        return events.remove(at: i)
    }

    /// Forgets events nobody claimed (what arrived after its cell was judged): the ones the app
    /// has written by now.
    func drainEvents() -> [JSONValue] {
        state.lock()
        defer { state.unlock() }
        _ = read(until: { _ in false }, deadline: nil)
        let e = events
        events.removeAll()
        eventBytes.removeAll()
        unclaimedBytes = 0
        return e
    }

    /// Reads and sorts the app's lines until `done` holds, the output ends, or `deadline` passes
    /// (nil: only what the app has written by now). Called, and returns, with `state` locked;
    /// while another thread reads, waits for its lines instead. Whether `done` holds.
    private func read(until done: (ScriptedApp) -> Bool, deadline: Date?) -> Bool {
        while !done(self) {
            if ended { return false }
            if reading {
                guard let deadline, state.wait(until: deadline) else { return done(self) }
                continue
            }
            reading = true
            state.unlock()
            var p = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            let wait = deadline.map { Int32(clamping: max(0, Int($0.timeIntervalSinceNow * 1000))) } ?? 0
            let ready = poll(&p, 1, wait)
            var failure = ready < 0 ? errno : 0
            var n = 0
            if ready > 0 {
                n = chunk.withUnsafeMutableBytes { Glibc.read(output, $0.baseAddress, $0.count) }
                if n < 0 { failure = errno }
            }
            state.lock()
            reading = false
            defer { state.broadcast() }
            if failure == EINTR { continue }
            // The end of the output, or a socket that cannot be read any more.
            if failure != 0 || ready > 0 && n == 0 {
                ended = true
                continue
            }
            guard ready > 0 else {
                // Nothing more now: past the deadline, or only a look.
                if deadline.map({ $0.timeIntervalSinceNow > 0 }) ?? false { continue }
                return done(self)
            }
            pending.append(contentsOf: chunk[0..<n])
            var start = 0
            while let nl = pending[start...].firstIndex(of: 0x0A) {
                if let value = try? JSONValue.parse(pending[start..<nl]) { deliver(value, bytes: nl - start) }
                start = nl + 1
            }
            pending.removeSubrange(0..<start)
            // A line longer than the scripted mode allows is not a line: drop it.
            if pending.count > 4 << 20 { pending.removeAll() }
        }
        return true
    }

    /// Answers no call has taken (a call that gave up leaves its own).
    var untakenAnswers: Int {
        state.lock()
        defer { state.unlock() }
        return results.count
    }

    /// The most events kept unclaimed, and their most bytes: far more than the cells in flight
    /// leave between drains.
    static let unclaimedEvents = 4096
    static let unclaimedEventBytes = 64 << 20
    /// `unclaimedEventBytes`, or less (a test's).
    var eventByteLimit = ScriptedApp.unclaimedEventBytes

    /// Files a line of `bytes` bytes (with `state` locked).
    private func deliver(_ value: JSONValue, bytes: Int) {
        if value["event"] != nil {
            // Bounded: an app that floods events nobody claims cannot fill the runner's memory
            // (past the bound its newest go).
            if events.count < Self.unclaimedEvents && unclaimedBytes + bytes <= eventByteLimit {
                events.append(value)
                eventBytes.append(bytes)
                unclaimedBytes += bytes
            }
        } else if let id = value["id"]?.number, id >= 1, id <= Double(sent) {
            // Only a command sent has an answer: answers to ids to come would pile up unasked.
            results[Int(id)] = value
        }
    }

    /// Asks the app to end (`bye`), then makes sure it has.
    func stop() {
        askToEnd()
        waitForEnd()
    }

    /// Says `bye` and stops writing: the app ends at `bye`, or at the end of its input if it
    /// never reads that far. Not waited for here, so that a run can end all its apps at once.
    func askToEnd() {
        state.lock()
        sent += 1
        state.unlock()
        let bye = Array("bye\n".utf8)
        // send, not write: an app that is gone is no SIGPIPE for the run. Short: one try, and
        // none if its input is full (an app that does not read it ends at its kill).
        _ = bye.withUnsafeBytes { send(input, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        close(input)
    }

    /// Waits (up to `timeout` seconds, then kills it) for the app asked to end, and reaps it.
    func waitForEnd(timeout: Double = 3) {
        state.lock()
        let deadline = Date(timeIntervalSinceNow: timeout)
        _ = read(until: { $0.ended }, deadline: deadline)
        state.unlock()
        // Its output closed is not its end: an app can close it and run on, ignoring `bye`.
        if !app.hasExited(by: deadline) { app.terminate(SIGKILL) }
        app.waitUntilExited()
        owned.map(Interruption.release)
        _ = app.wait()
        close(output)
    }
}

/// Sandbox violations of the apps a matrix ran: every one goes to its broker (and its audit);
/// the run prints each kind once at the end with how often it happened, not one line per launch.
package final class Violations: @unchecked Sendable {
    package static let shared = Violations()
    private let lock = NSLock()
    private var counts: [String: Int] = [:]
    private var order: [String] = []

    func record(_ v: Violation) {
        let key = "\(LogText.escaped(v.bundleID)) \(v.syscall)\(v.detail.map { " " + LogText.escaped($0) } ?? "") \(v.action == .killed ? "killed" : "denied")"
        lock.lock()
        if counts[key] == nil { order.append(key) }
        counts[key, default: 0] += 1
        lock.unlock()
    }

    /// One line per kind of violation, or nothing.
    package var summary: [String] {
        lock.lock()
        defer { lock.unlock() }
        return order.map { "sandbox violation: \($0) (\(counts[$0]!)×)" }
    }
}

/// Threads that never end, to start apps from. An app dies with the *thread* that cloned it (its
/// parent-death signal, which the sandbox sets so that no app outlives its launcher), and
/// libdispatch retires idle worker threads: apps the matrix had started from `concurrentPerform`
/// were killed minutes later, silently, and their cells failed with "stopped reading commands".
final class LaunchThreads: @unchecked Sendable {
    static let shared = LaunchThreads(count: 4)

    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []

    init(count: Int) {
        for i in 0..<count {
            let t = Thread { [self] in serve() }
            t.name = "matrix-launch-\(i)"
            t.start()
        }
    }

    private func serve() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
        }
    }

    /// Runs `body` on one of the threads and waits for it.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
        let outcome = LaunchOutcome<T>()
        let done = DispatchSemaphore(value: 0)
        condition.lock()
        jobs.append {
            outcome.value = Result { try body() }
            done.signal()
        }
        condition.signal()
        condition.unlock()
        done.wait()
        return try outcome.value!.get()
    }
}

/// What a job on a launch thread ended with, handed back to the caller that waits for it.
private final class LaunchOutcome<T>: @unchecked Sendable {
    var value: Result<T, any Error>?
}
