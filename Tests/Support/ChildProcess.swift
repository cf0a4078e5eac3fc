import Foundation
import Glibc

/// A child process the tests drive, with a deadline on every wait. Its standard output and
/// standard error are drained at once by two reader threads (a child that fills one pipe while
/// the test reads the other would otherwise deadlock), so a wait is a condition wait that can
/// time out, never a blocking read: swift-testing's `.timeLimit` cannot interrupt a read.
///
/// On a time-out the child and everything it started are killed (`killTree`) and the error
/// carries what the child printed, so the failure says where it stuck.
public final class ChildProcess: @unchecked Sendable {
    public let process = Process()
    /// The child's standard input (nil when it was given none).
    public let input: Pipe?
    private let state = NSCondition()
    private var out = Data()
    private var err = Data()
    private var outOpen = true
    private var errOpen = true
    /// A name for messages (the executable's).
    public let name: String

    /// A wait that passed its deadline; the child has been killed by the time it is thrown.
    public struct TimedOut: Error, CustomStringConvertible {
        public var waitingFor: String
        public var seconds: Double
        public var output: String
        public var errors: String
        public var description: String {
            "\(waitingFor): no answer within \(seconds) s; the child was killed. Its output:\n\(output.suffix(4000))\nIts errors:\n\(errors.suffix(4000))"
        }
    }

    /// A write to a child that has exited (its stdin pipe) fails with EPIPE instead of killing
    /// the whole test process with SIGPIPE: under load a child may end before a test's last
    /// command reaches it, and the run died with signal 13, leaving its brokers behind.
    static let brokenPipesAreErrors: Void = { signal(SIGPIPE, SIG_IGN) }()

    /// Starts `executable`. `stderrTo`: a file that takes standard error instead of the drained
    /// pipe (a broker's log, read by its tests as a file).
    /// `standardInput`: a descriptor the child reads instead of a pipe the test writes (then
    /// `input` is nil). `standardOutput`: where its output goes instead of the drained pipe (a
    /// terminal the test reads itself).
    public init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil,
                input: Bool = true, standardInput: FileHandle? = nil, standardOutput: FileHandle? = nil, stderrTo file: String? = nil) throws {
        _ = Self.brokenPipesAreErrors
        name = (executable as NSString).lastPathComponent
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        self.input = input && standardInput == nil ? Pipe() : nil
        process.standardInput = self.input ?? standardInput ?? FileHandle.nullDevice
        let outPipe = standardOutput == nil ? Pipe() : nil
        process.standardOutput = outPipe ?? standardOutput
        if outPipe == nil { outOpen = false }
        var errPipe: Pipe?
        if let file {
            _ = FileManager.default.createFile(atPath: file, contents: nil)
            process.standardError = FileHandle(forWritingAtPath: file)
            errOpen = false
        } else {
            errPipe = Pipe()
            process.standardError = errPipe
        }
        try process.run()
        // The parent's copies of the write ends must go, or the readers never see the end.
        try? outPipe?.fileHandleForWriting.close()
        try? errPipe?.fileHandleForWriting.close()
        if let outPipe { startReader(outPipe.fileHandleForReading, append: { $0.out.append($1) }, ended: { $0.outOpen = false }) }
        if let errPipe { startReader(errPipe.fileHandleForReading, append: { $0.err.append($1) }, ended: { $0.errOpen = false }) }
    }

    private func startReader(_ handle: FileHandle, append: @escaping @Sendable (ChildProcess, Data) -> Void,
                             ended: @escaping @Sendable (ChildProcess) -> Void) {
        let fd = handle.fileDescriptor
        let thread = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                let failure = n < 0 ? errno : 0
                if failure == EINTR { continue }
                state.lock()
                if n > 0 { append(self, Data(buffer[0..<n])) } else {
                    // A read that failed (a descriptor closed under the reader, EBADF) ends the
                    // stream too, but says so: what the child wrote after it would be missing
                    // from the failure's words without a trace.
                    if failure != 0 { append(self, Data("\n[ChildProcess: reading \(name)'s output failed: \(String(cString: strerror(failure)))]\n".utf8)) }
                    ended(self)
                }
                state.broadcast()
                state.unlock()
                if n <= 0 { break }
            }
            // Closed at once, not when the driver goes: a test process holding hundreds of
            // descriptors makes an in-process sandbox launch fail (its RLIMIT_NOFILE is 256).
            try? handle.close()
        }
        thread.name = "child-reader"
        thread.start()
    }

    /// What the child printed on standard output so far.
    public var standardOutput: Data { state.withLock { out } }
    /// What the child printed on standard error so far.
    public var standardError: String { state.withLock { String(decoding: err, as: UTF8.self) } }
    public var pid: Int32 { process.processIdentifier }

    /// Waits until `satisfied` holds over the output so far, or the output has ended (then false).
    /// Past `timeout` seconds: kills the child and throws `TimedOut`.
    public func waitForOutput(_ what: @autoclosure () -> String, timeout: Double, until satisfied: (Data) -> Bool) throws -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        state.lock()
        while true {
            if satisfied(out) { state.unlock(); return true }
            // Standard output ended; standard error is not waited for, a grandchild may still hold it.
            if !outOpen { state.unlock(); return false }
            if !state.wait(until: deadline) { break }
        }
        state.unlock()
        throw timedOut(what(), timeout)
    }

    /// Waits until standard error says `text`. Past `timeout` seconds, or when it ends without
    /// saying it: kills the child and throws `TimedOut`.
    public func waitForError(_ text: String, timeout: Double) throws {
        let deadline = Date(timeIntervalSinceNow: timeout)
        let wanted = Data(text.utf8)
        state.lock()
        while err.range(of: wanted) == nil {
            if !errOpen || !state.wait(until: deadline) {
                state.unlock()
                throw timedOut("\"\(text)\" on its standard error", timeout)
            }
        }
        state.unlock()
    }

    /// Waits for the child's exit and both streams' end; its status. Past `timeout`: kills the
    /// child and throws `TimedOut`.
    @discardableResult
    public func waitForExit(_ what: @autoclosure () -> String = "exit", timeout: Double) throws -> Int32 {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while process.isRunning {
            if Date() >= deadline { throw timedOut(what(), timeout) }
            usleep(5_000)
        }
        state.lock()
        while outOpen || errOpen {
            if !state.wait(until: deadline) { state.unlock(); throw timedOut(what() + " (its output did not end)", timeout) }
        }
        state.unlock()
        return process.terminationStatus
    }

    private func timedOut(_ what: String, _ seconds: Double) -> TimedOut {
        killTree()
        // What it printed up to its end (the kill closes the pipes); briefly, the error is the point.
        let deadline = Date(timeIntervalSinceNow: 2)
        state.lock()
        while (outOpen || errOpen) && state.wait(until: deadline) {}
        let result = TimedOut(waitingFor: "\(name): \(what)", seconds: seconds, output: String(decoding: out, as: UTF8.self),
                              errors: String(decoding: err, as: UTF8.self))
        state.unlock()
        return result
    }

    /// Kills the child and every process below it. Sandboxed apps run in their own sessions, pid
    /// namespaces and as other users, so a process group would miss them; they are still
    /// descendants, found through /proc. Each is stopped before it is killed, so none forks or
    /// leaves an orphan between the walk and the kill.
    public func killTree() {
        guard process.processIdentifier > 0 else { return }
        ProcessTree.kill(process.processIdentifier)
        if process.isRunning { process.waitUntilExit() }
    }
}

extension ChildProcess {
    /// Runs a program to its end with `input` on its standard input (written from its own thread,
    /// so a child that answers before it has read everything cannot stall the test): its status,
    /// output and errors. Past `timeout` seconds it is killed and this throws `TimedOut`.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil,
                           input: String? = nil, standardInput: FileHandle? = nil, timeout: Double = 60) throws -> (status: Int32, out: String, err: String) {
        let child = try ChildProcess(executable, arguments, environment: environment, directory: directory, input: input != nil,
                                     standardInput: standardInput)
        if let input, let pipe = child.input {
            let writer = Thread {
                try? pipe.fileHandleForWriting.write(contentsOf: Data(input.utf8))
                try? pipe.fileHandleForWriting.close()
            }
            writer.start()
        }
        let status = try child.waitForExit(timeout: timeout)
        return (status, String(decoding: child.standardOutput, as: UTF8.self), child.standardError)
    }

    /// `run`, waited for on a thread of its own: a test that waits seconds for a process does
    /// not hold one of the few threads every async test shares (on 2 cores, two such waits
    /// stalled the others past their time limits).
    public static func runOffPool(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                                  directory: String? = nil, timeout: Double = 60) async throws -> (status: Int32, out: String, err: String) {
        try await withCheckedThrowingContinuation { continuation in
            let t = Thread {
                continuation.resume(with: Result { try run(executable, arguments, environment: environment, directory: directory, timeout: timeout) })
            }
            t.name = "test-child"
            t.start()
        }
    }
}

/// Processes below a pid, read from /proc.
public enum ProcessTree {
    /// Every process below `root` (not `root` itself).
    public static func descendants(of root: Int32) -> [Int32] {
        var children: [Int32: [Int32]] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            // "pid (comm) state ppid ...": the name can hold spaces and parentheses, so parse after the last ')'.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, let ppid = Int32(fields[1]) { children[ppid, default: []].append(pid) }
        }
        var result: [Int32] = []
        var next = children[root] ?? []
        while let pid = next.popLast() {
            result.append(pid)
            next += children[pid] ?? []
        }
        return result
    }

    /// Stops `root` and its descendants, then kills them; again until none is left.
    public static func kill(_ root: Int32) {
        for _ in 0..<5 {
            let all = [root] + descendants(of: root)
            let alive = all.filter(isAlive)
            if alive.isEmpty { return }
            for pid in alive { Glibc.kill(pid, SIGSTOP) }
            for pid in alive { Glibc.kill(pid, SIGKILL) }
            usleep(20_000)
        }
    }

    /// Whether `pid` runs (a zombie, dead and not yet reaped, does not).
    public static func isAlive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(after: close)...].split(separator: " ").first != "Z"
    }
}
