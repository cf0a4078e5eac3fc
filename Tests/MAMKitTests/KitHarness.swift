import Foundation
import Glibc
import MAMScript
import Testing

/// A real broker on a throwaway device directory, and sample apps launched against it in their
/// sandboxes (`mamlaunch run NAME -- --script`), driven line by line through their scripted mode.
final class KitBroker: @unchecked Sendable {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    static var bin: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = (exe as NSString).deletingLastPathComponent
        for _ in 0..<4 where !FileManager.default.isExecutableFile(atPath: dir + "/mambroker") { dir = (dir as NSString).deletingLastPathComponent }
        return dir
    }

    let device: String
    var process: Process?
    var launcherSocket: String { device + "/launcher.sock" }
    var audit: String { device + "/audit.jsonl" }
    let log: String

    init(device: String? = nil) throws {
        self.device = device ?? "/tmp/mamkit-broker-\(UUID().uuidString.prefix(8))"
        log = self.device + ".log"
        try start()
    }

    func start() throws {
        try FileManager.default.createDirectory(atPath: device, withIntermediateDirectories: true)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.bin + "/mambroker")
        p.arguments = ["--tenant", Self.root + "/Policies/contoso/tenant.json", "--device", device, "--apps", Self.root + "/Apps"]
        p.environment = ProcessInfo.processInfo.environment.merging(["MAMLAB_ROOT": Self.root]) { _, b in b }
        let out = Pipe()
        p.standardOutput = out
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        p.standardError = FileHandle(forWritingAtPath: log)
        try p.run()
        process = p
        guard String(decoding: out.fileHandleForReading.availableData, as: UTF8.self).hasPrefix("ready") else {
            p.waitUntilExit()
            throw KitTestError("mambroker did not start: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        }
    }

    func kill(_ signal: Int32) {
        guard let p = process else { return }
        Glibc.kill(p.processIdentifier, signal)
        p.waitUntilExit()
        process = nil
    }

    func stop() {
        kill(SIGTERM)
        try? FileManager.default.removeItem(atPath: device)
        try? FileManager.default.removeItem(atPath: device + "-containers")
        try? FileManager.default.removeItem(atPath: log)
    }

    var auditRecords: [[String: Any]] {
        let text = (try? String(contentsOfFile: audit, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Starts a sample app (an Apps/ name) in scripted mode.
    /// `keepContainer`: the on-disk container instead of a tmpfs that goes with the app, so what
    /// the app kept there survives a kill (as an iOS app's container does).
    func launch(_ app: String, user: String? = nil, keepContainer: Bool = false) throws -> ScriptedProcess {
        var arguments = ["run", app, "--broker", launcherSocket, "--containers", device + "-containers"]
        if keepContainer { arguments += ["--limit", "disk=none"] }
        if let user { arguments += ["--user", user] }
        return try ScriptedProcess(Self.bin + "/mamlaunch", arguments + ["--", "--script"])
    }

    /// Starts Courier under another app's manifest (an app without MAMKit, e.g. Notes).
    func courier(_ app: String, _ steps: [String]) throws -> ScriptedProcess {
        try ScriptedProcess(Self.bin + "/mamlaunch", ["run", "--manifest", "\(Self.root)/Apps/\(app)/Info.plist", "--broker", launcherSocket,
                                                     "--containers", device + "-containers", "--", Self.bin + "/Courier"] + steps)
    }
}

struct KitTestError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// An app process driven through pipes: a command line in, its result line out; event lines
/// are kept as they come.
final class ScriptedProcess: @unchecked Sendable {
    let process = Process()
    let input = Pipe()
    let output = Pipe()
    let errors = Pipe()
    private var pending = Data()
    private(set) var lines: [JSONValue] = []
    private var number = 0

    init(_ executable: String, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["MAMLAB_ROOT": KitBroker.root]) { _, b in b }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
    }

    /// Sends one command and returns its result (the line with its id).
    @discardableResult
    func send(_ name: String, _ arguments: String...) throws -> JSONValue {
        number += 1
        input.fileHandleForWriting.write(Data((ScriptCommand(name, arguments).line + "\n").utf8))
        while true {
            if let found = lines.first(where: { $0["id"]?.number == Double(number) }) { return found }
            guard readLine() else {
                throw KitTestError("the app ended before answering \(name): \(String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))")
            }
        }
    }

    /// Sends one command to an instance the launcher started anew (it numbers its lines from 1
    /// again) and returns the first result of that command after what was read so far.
    func sendToRestarted(_ name: String, _ arguments: String...) throws -> JSONValue {
        number = 1
        let before = lines.count
        input.fileHandleForWriting.write(Data((ScriptCommand(name, arguments).line + "\n").utf8))
        while true {
            if let found = lines.dropFirst(before).first(where: { $0["command"]?.string == name }) { return found }
            guard readLine() else { throw KitTestError("the app ended before answering \(name)") }
        }
    }

    /// Reads one more line; false at the end of output.
    private func readLine() -> Bool {
        while true {
            if let i = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = pending[pending.startIndex..<i]
                pending = Data(pending[(i + 1)...])
                if let value = try? JSONValue.parse(Array(line)) { lines.append(value) }
                return true
            }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { return false }
            pending.append(chunk)
        }
    }

    /// Events of a kind seen so far.
    func events(_ kind: String) -> [JSONValue] { lines.filter { $0["event"]?.string == kind } }

    /// Says bye and waits for the process; returns its status.
    @discardableResult
    func finish() -> Int32 {
        if process.isRunning { _ = try? send("bye") }
        try? input.fileHandleForWriting.close()
        while readLine() {}
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// For Courier: everything it printed.
    func courierLines() -> [JSONValue] {
        try? input.fileHandleForWriting.close()
        while readLine() {}
        process.waitUntilExit()
        return lines
    }
}

extension JSONValue {
    var outcome: String? { self["decision"]?["outcome"]?.string }
    var rule: String? { self["decision"]?["rule"]?.string }
}
