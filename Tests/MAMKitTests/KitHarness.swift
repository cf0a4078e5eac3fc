import Foundation
import Glibc
import MAMScript
import MAMTestSupport
import Testing

/// A real broker on a throwaway device directory, and sample apps launched against it in their
/// sandboxes (`mamlaunch run NAME -- --script`), driven line by line through their scripted mode.
final class KitBroker: @unchecked Sendable {
    static let root = BuiltProducts.root
    static var bin: String { BuiltProducts.bin }

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
    /// `user`: the account the user signs in with (`--user`); none by default. Courier is not
    /// the program built for the app: it runs as the app only with `--developer` (no key ever),
    /// as an unknown app without it (`developer: false`).
    func courier(_ app: String, user: String? = nil, developer: Bool = true, _ steps: [String]) throws -> ScriptedProcess {
        try ScriptedProcess(Self.bin + "/mamlaunch", ["run", "--manifest", "\(Self.root)/Apps/\(app)/Info.plist", "--broker", launcherSocket,
                                                     "--containers", device + "-containers"] + (developer ? ["--developer"] : [])
                                                     + (user.map { ["--user", $0] } ?? [])
                                                     + ["--", Self.bin + "/Courier"] + steps)
    }

    /// `mamlaunch wipe --user ACCOUNT`: the admin's selective wipe, for every app.
    func wipe(_ account: String) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.bin + "/mamlaunch")
        p.arguments = ["wipe", "--user", account, "--broker", launcherSocket]
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw KitTestError("mamlaunch wipe --user \(account) exited \(p.terminationStatus)") }
    }
}

struct KitTestError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// The shared line-driven app process (MAMTestSupport), under this test target's name for it.
typealias ScriptedProcess = MAMTestSupport.ScriptedProcess

extension ScriptedProcess {
    /// A process under the project's root (apps started by name find their manifests there).
    convenience init(_ executable: String, _ arguments: [String]) throws {
        try self.init(executable, arguments, environment: ProcessInfo.processInfo.environment.merging(["MAMLAB_ROOT": KitBroker.root]) { _, b in b })
    }

    /// For Courier: everything it printed.
    func courierLines() -> [JSONValue] { allLines() }
}

extension JSONValue {
    var outcome: String? { self["decision"]?["outcome"]?.string }
    var rule: String? { self["decision"]?["rule"]?.string }
}
