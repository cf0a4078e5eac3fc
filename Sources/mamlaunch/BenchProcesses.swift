import Foundation
import Glibc
import MAMCatalog
import MAMLauncher
import MAMWire

/// A failure of the bench itself (not of what it measures): printed as it is, without usage.
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Everything a bench starts: a scratch directory and child processes. `finish()` stops the
/// children (last started, first stopped) and removes the directory; the bench calls it on every
/// way out, and Ctrl-C, SIGTERM or SIGHUP calls it too. Each child is also started under
/// `mambenchpeer guard`, whose parent-death signal ends it should the bench be killed outright.
final class BenchProcesses: @unchecked Sendable {
    let directory: String
    private let peer: String
    private let lock = NSLock()
    private var children: [(name: String, process: Process)] = []
    private var finished = false
    private var signalSources: [DispatchSourceSignal] = []

    init(name: String) throws {
        peer = Catalog.toolDirectory + "/mambenchpeer"
        guard FileManager.default.isExecutableFile(atPath: peer) else {
            throw BenchError("mambenchpeer is not built beside mamlaunch (\(Catalog.toolDirectory)); build it with `swift build --product mambenchpeer` (add `-c release` for a release mamlaunch)")
        }
        Self.removeLeftovers(of: name)
        var template = Array((NSTemporaryDirectory() as NSString).appendingPathComponent("mamlab-\(name)-\(getpid())-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw BenchError("cannot make a scratch directory under \(NSTemporaryDirectory()): \(String(cString: strerror(errno)))")
        }
        directory = String(cString: made)
        for sig in Interruption.signals {
            signal(sig, SIG_IGN) // handled below, after the children are stopped
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { [self] in
                StandardStreams.writeError("\nmamlaunch \(name): interrupted (\(Interruption.name(sig))); stopping what it started\n")
                Interruption.note(sig)
                finish()
                Glibc.exit(128 + sig)
            }
            source.resume()
            signalSources.append(source)
        }
    }

    /// Starts `arguments` under the guard. Its standard output comes back as a pipe when asked
    /// (to read a "ready" line); its standard error goes to a log in the scratch directory, shown
    /// when it fails to start. `input` becomes its standard input (the echo's socket).
    func start(_ name: String, _ arguments: [String], input: Int32? = nil, readOutput: Bool = false) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: peer)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["MAMLAB_BENCH_PID": "\(getpid())"]) { $1 }
        if let input { process.standardInput = FileHandle(fileDescriptor: input, closeOnDealloc: false) }
        if readOutput { process.standardOutput = Pipe() }
        let log = logPath(name)
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: log)
        lock.lock()
        defer { lock.unlock() }
        guard !finished else { throw BenchError("interrupted") }
        do { try process.run() } catch { throw BenchError("cannot start \(name): \(error)") }
        children.append((name, process))
        return process
    }

    /// The first line `process` writes to its standard output, waiting at most `seconds`.
    func firstLine(of process: Process, name: String, seconds: Int = 10) throws -> String {
        guard let pipe = process.standardOutput as? Pipe else { throw BenchError("\(name): no output to read") }
        let fd = pipe.fileHandleForReading.fileDescriptor
        var line: [UInt8] = []
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds) * 1_000_000_000
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = now < deadline ? poll(&poller, 1, Int32((deadline - now) / 1_000_000)) : 0
            if ready == 0 { throw BenchError("\(name) did not start within \(seconds) s\(logTail(name))") }
            if ready < 0 { if errno == EINTR { continue }; throw BenchError("poll: \(String(cString: strerror(errno)))") }
            var byte: UInt8 = 0
            let n = read(fd, &byte, 1)
            if n <= 0 { throw BenchError("\(name) exited before it was ready\(logTail(name))") }
            if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
    }

    /// Stops every child and removes the scratch directory; safe to call more than once.
    func finish() {
        lock.lock()
        defer { lock.unlock() }
        guard !finished else { return }
        finished = true
        for (_, process) in children.reversed() where process.isRunning {
            process.terminate()
            // A child that started with SIGTERM blocked (Process passes on the signal mask of
            // whoever started the bench) would never go: it gets a few seconds, then SIGKILL.
            let deadline = Date(timeIntervalSinceNow: 3)
            while process.isRunning && Date() < deadline { usleep(10_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        children.removeAll()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A bench killed outright (SIGKILL) takes its children with it but cannot remove its
    /// directory; the next run removes those whose bench (the pid in the name) is gone.
    private static func removeLeftovers(of name: String) {
        let temporary = NSTemporaryDirectory()
        let prefix = "mamlab-\(name)-"
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? [] where entry.hasPrefix(prefix) {
            guard let pid = Int32(entry.dropFirst(prefix.count).split(separator: "-").first ?? ""),
                  kill(pid, 0) != 0 && errno == ESRCH else { continue }
            try? FileManager.default.removeItem(atPath: (temporary as NSString).appendingPathComponent(entry))
        }
    }

    private func logPath(_ name: String) -> String {
        directory + "/" + name.replacingOccurrences(of: " ", with: "-") + ".log"
    }

    /// The end of a child's error log, for a message that says why it failed.
    private func logTail(_ name: String) -> String {
        guard let text = try? String(contentsOfFile: logPath(name), encoding: .utf8) else { return "" }
        let lines = text.split(separator: "\n").suffix(5)
        return lines.isEmpty ? "" : ":\n  " + lines.joined(separator: "\n  ")
    }
}

/// The NUL-terminated text a C function wrote into `buffer`.
func text(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
