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
    var broker: BrokerProcess?
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
        broker = try BrokerProcess(["--tenant", Self.root + "/Policies/contoso/tenant.json", "--device", device, "--apps", Self.root + "/Apps"],
                                   environment: ProcessInfo.processInfo.environment.merging(["MAMLAB_ROOT": Self.root]) { _, b in b }, log: log)
    }

    var process: Process? { broker?.process }

    /// Sends `signal` and waits for the broker's end (bounded: a broker that does not end is
    /// killed and the test fails).
    func kill(_ signal: Int32) {
        guard let broker else { return }
        do { try broker.stop(signal) } catch { Issue.record("\(error)") }
        self.broker = nil
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
