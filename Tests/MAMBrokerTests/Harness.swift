import Foundation
import Glibc
import MAMTestSupport
import Testing

/// A broker process on a throwaway device directory, and apps launched against it.
final class BrokerHarness: @unchecked Sendable {
    static let root = BuiltProducts.root
    static var bin: String { BuiltProducts.bin }

    let device: String
    let tenant: String
    var process: Process?
    var launcherSocket: String { device + "/launcher.sock" }
    var publicSocket: String { device + "/mambroker.sock" }
    var audit: String { device + "/audit.jsonl" }
    let log: String

    let extraArguments: [String]
    /// The installed apps' folder (default: the project's Apps).
    let apps: String

    init(tenant: String = BrokerHarness.root + "/Policies/contoso/tenant.json", device: String? = nil, extraArguments: [String] = [],
         apps: String = BrokerHarness.root + "/Apps") throws {
        self.device = device ?? "/tmp/mamlab-broker-\(UUID().uuidString.prefix(8))"
        self.tenant = tenant
        self.extraArguments = extraArguments
        self.apps = apps
        log = self.device + ".log"
        try start()
    }

    func start() throws {
        try FileManager.default.createDirectory(atPath: device, withIntermediateDirectories: true)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.bin + "/mambroker")
        p.arguments = ["--tenant", tenant, "--device", device, "--apps", apps] + extraArguments
        let out = Pipe()
        p.standardOutput = out
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        p.standardError = FileHandle(forWritingAtPath: log)
        try p.run()
        process = p
        // Ready once it says so (or gone, when it refused to start).
        let line = out.fileHandleForReading.availableData
        guard String(decoding: line, as: UTF8.self).hasPrefix("ready") else {
            p.waitUntilExit()
            throw BrokerError("mambroker did not start: \(String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: log))) ?? Data(), as: UTF8.self))")
        }
    }

    var pid: Int32 { process?.processIdentifier ?? -1 }

    /// Waits (up to ten seconds) until the broker's log says `text`.
    func waitForLog(_ text: String) {
        for _ in 0..<200 {
            if let log = try? String(contentsOfFile: log, encoding: .utf8), log.contains(text) { return }
            usleep(50_000)
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
        try? FileManager.default.removeItem(atPath: log)
    }

    var openDescriptors: Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1 }

    var auditRecords: [[String: Any]] {
        let text = (try? String(contentsOfFile: audit, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Starts `Courier` as the app of `Apps/<app>` (its bundle id), sandboxed, with these steps.
    /// `user`: the account the user signs in with (`--user`); none by default. Courier is not
    /// the app's built program: `--developer` runs it as the app, never given a key.
    func launch(_ app: String, user: String? = nil, _ steps: [String]) throws -> App {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.bin + "/mamlaunch")
        p.arguments = ["run", "--manifest", "\(Self.root)/Apps/\(app)/Info.plist", "--developer", "--broker", launcherSocket,
                       "--containers", device + "-containers"] + (user.map { ["--user", $0] } ?? []) + ["--", Self.bin + "/Courier"] + steps
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        try p.run()
        return App(process: p, out: out, err: err)
    }

    func run(_ app: String, user: String? = nil, _ steps: [String]) throws -> [[String: Any]] {
        try launch(app, user: user, steps).finish()
    }

    /// Installed apps where Mail (and its `contosomail` scheme) can never come up: its manifest
    /// names an executable nobody built, so a URL for it waits for a launch that never says hello.
    static func appsWithMailThatCannotStart() throws -> String {
        let root = "/tmp/mamlab-ghost-\(UUID().uuidString.prefix(8))"
        let fm = FileManager.default
        for app in ["Mail", "Notes", "Docs"] { try fm.createDirectory(atPath: "\(root)/Apps/\(app)", withIntermediateDirectories: true) }
        try fm.createDirectory(atPath: root + "/Policies", withIntermediateDirectories: true)
        let mail = try String(contentsOfFile: Self.root + "/Apps/Mail/Info.plist", encoding: .utf8)
            .replacingOccurrences(of: "<string>Mail</string>", with: "<string>NeverBuilt</string>")
        try mail.write(toFile: root + "/Apps/Mail/Info.plist", atomically: true, encoding: .utf8)
        for app in ["Notes", "Docs"] { try fm.copyItem(atPath: "\(Self.root)/Apps/\(app)/Info.plist", toPath: "\(root)/Apps/\(app)/Info.plist") }
        return root + "/Apps"
    }
}

struct BrokerError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

final class App: @unchecked Sendable {
    let process: Process
    let out: Pipe
    let err: Pipe
    init(process: Process, out: Pipe, err: Pipe) {
        self.process = process
        self.out = out
        self.err = err
    }

    private var early = Data()

    /// Reads the app's output until it has printed `count` lines (the steps done so far), so a
    /// test can let another app act only once this one is where it should be.
    func waitForLines(_ count: Int) {
        while early.split(separator: UInt8(ascii: "\n")).count < count {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { return }
            early.append(chunk)
        }
    }

    /// Waits for the app and returns its JSON lines.
    func finish() -> [[String: Any]] {
        let data = early + out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        // An app that said nothing: what the launcher said instead, so a failure shows why.
        return lines.isEmpty ? [["launcher": String(decoding: errors, as: UTF8.self), "status": Int(process.terminationStatus)]] : lines
    }
}

extension Array where Element == [String: Any] {
    func step(_ name: String, _ n: Int = 0) -> [String: Any] {
        filter { $0["step"] as? String == name }.dropFirst(n).first ?? [:]
    }
}

extension Dictionary where Key == String, Value == Any {
    var outcome: String? { (self["decision"] as? [String: Any])?["outcome"] as? String }
    var rule: String? { (self["decision"] as? [String: Any])?["rule"] as? String }
}
