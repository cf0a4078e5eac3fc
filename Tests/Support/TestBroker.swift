import Foundation
import Glibc
import MAMWire
import Testing

/// A real broker (`mambroker`) on a throwaway device directory: the one harness the process
/// tests share. Each test target adds how it starts its apps against it (Courier with steps,
/// a sample app in scripted mode, a person at a terminal). Its start waits for `ready` and its
/// stop for the broker's end, both bounded (BrokerProcess).
open class TestBroker: @unchecked Sendable {
    public static var root: String { BuiltProducts.root }
    public static var bin: String { BuiltProducts.bin }
    /// The tests' environment, with the project's root for the tools that find apps by name.
    public static var environment: [String: String] { ProcessInfo.processInfo.environment.merging(["MAMLAB_ROOT": root]) { _, b in b } }

    public let device: String
    /// The broker's standard error.
    public let log: String
    public let arguments: [String]
    public var broker: BrokerProcess?
    public var process: Process? { broker?.process }
    public var pid: Int32 { broker?.pid ?? -1 }
    public var launcherSocket: String { device + "/launcher.sock" }
    public var publicSocket: String { device + "/mambroker.sock" }
    /// The audit folder, and its log of ordinary decisions (security events are in security.jsonl).
    public var auditFolder: String { device + "/audit" }
    public var auditPath: String { auditFolder + "/" + AuditFile.decisions }
    /// Where apps launched against this broker keep their containers.
    public var containers: String { device + "-containers" }

    /// Starts a broker for `tenant` and the installed apps in `apps` on `device` (a new folder
    /// under /tmp when nil).
    public init(device: String? = nil, prefix: String = "mamlab-broker", tenant: String = TestBroker.root + "/Policies/contoso/tenant.json",
                apps: String = TestBroker.root + "/Apps", extraArguments: [String] = []) throws {
        self.device = device ?? "/tmp/\(prefix)-\(UUID().uuidString.prefix(8))"
        log = self.device + ".log"
        arguments = ["--tenant", tenant, "--device", self.device, "--apps", apps] + extraArguments
        do { try start() } catch {
            // No harness to stop: what the refused start made goes here (its error carries the log).
            for path in [self.device, containers, log] { try? FileManager.default.removeItem(atPath: path) }
            throw error
        }
    }

    /// Starts the broker (again, after `kill`, on the same device).
    public func start() throws {
        try FileManager.default.createDirectory(atPath: device, withIntermediateDirectories: true)
        broker = try BrokerProcess(arguments, environment: Self.environment, log: log)
    }

    /// Sends `signal` and waits for the broker's end (bounded: a broker that does not end is
    /// killed and the test fails).
    public func kill(_ signal: Int32, sourceLocation: SourceLocation = #_sourceLocation) {
        guard let broker else { return }
        do { try broker.stop(signal) } catch { Issue.record("\(error)", sourceLocation: sourceLocation) }
        self.broker = nil
    }

    /// Ends the broker and removes what it and its apps left.
    public func stop(sourceLocation: SourceLocation = #_sourceLocation) {
        kill(SIGTERM, sourceLocation: sourceLocation)
        for path in [device, containers, log] { try? FileManager.default.removeItem(atPath: path) }
    }

    /// The audit's records so far, both logs and their rotated files, in decision order.
    public var auditRecords: [[String: Any]] {
        AuditFile.allRecords(inFolder: auditFolder).compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Waits (up to `timeout` seconds) until the broker's log says `text`; the test fails when it
    /// never does.
    public func waitForLog(_ text: String, timeout: Double = 10, sourceLocation: SourceLocation = #_sourceLocation) {
        let deadline = Date(timeIntervalSinceNow: timeout)
        repeat {
            if let said = try? String(contentsOfFile: log, encoding: .utf8), said.contains(text) { return }
            usleep(20_000)
        } while Date() < deadline
        Issue.record("the broker's log did not say \"\(text)\" within \(timeout) s:\n\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")",
                     sourceLocation: sourceLocation)
    }
}
