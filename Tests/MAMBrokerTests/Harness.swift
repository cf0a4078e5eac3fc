import Foundation
import Glibc
import MAMTestSupport
import MAMWire
import Testing

/// A broker process on a throwaway device directory (MAMTestSupport's TestBroker), and Courier
/// launched against it as the installed apps.
final class BrokerHarness: TestBroker, @unchecked Sendable {
    init(tenant: String = BrokerHarness.root + "/Policies/contoso/tenant.json", device: String? = nil, extraArguments: [String] = [],
         apps: String = BrokerHarness.root + "/Apps") throws {
        try super.init(device: device, prefix: "mamlab-broker", tenant: tenant, apps: apps, extraArguments: extraArguments)
    }

    var audit: String { auditPath }

    var openDescriptors: Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1 }

    /// The broker's open descriptors once the count holds still (the same in five samples 20 ms
    /// apart, bounded at five seconds): a baseline taken when the broker is idle, not after a
    /// guessed sleep.
    func settledDescriptors() -> Int {
        let deadline = Date(timeIntervalSinceNow: 5)
        var last = openDescriptors, same = 0
        while same < 5 && Date() < deadline {
            usleep(20_000)
            let now = openDescriptors
            same = now == last ? same + 1 : 0
            last = now
        }
        return last
    }

    /// Waits (up to `timeout` seconds) until the broker holds at most `bound` descriptors; the
    /// count then, so the test's expectation says how many it still held.
    func descriptors(atMost bound: Int, timeout: Double = 5) -> Int {
        let deadline = Date(timeIntervalSinceNow: timeout)
        var now = openDescriptors
        while now > bound && Date() < deadline {
            usleep(20_000)
            now = openDescriptors
        }
        return now
    }

    /// Starts `Courier` as the app of `Apps/<app>` (its bundle id), sandboxed, with these steps.
    /// `user`: the account the user signs in with (`--user`); none by default. Courier is not
    /// the app's built program: `--developer` runs it as the app, never given a key.
    func launch(_ app: String, user: String? = nil, _ steps: [String]) throws -> App {
        App(try ChildProcess(Self.bin + "/mamlaunch", ["run", "--manifest", "\(Self.root)/Apps/\(app)/Info.plist", "--developer", "--broker", launcherSocket,
                                                       "--containers", containers] + (user.map { ["--user", $0] } ?? [])
                                                       + ["--", Self.bin + "/Courier"] + steps, input: false))
    }

    func run(_ app: String, user: String? = nil, _ steps: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> [[String: Any]] {
        try launch(app, user: user, steps).finish(sourceLocation: sourceLocation)
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

/// Courier under the launcher: its steps as arguments, a JSON line per step. Every wait is
/// bounded (`deadline`, seconds); past it the app is killed and the test fails with its output.
final class App: @unchecked Sendable {
    let child: ChildProcess
    var process: Process { child.process }
    var deadline: Double = 60
    init(_ child: ChildProcess) { self.child = child }

    /// What the launcher and the app said on standard error so far.
    var standardError: String { child.standardError }

    /// Waits until the app has printed `count` lines (the steps done so far), so a test can let
    /// another app act only once this one is where it should be. The test fails when the app
    /// ends or the deadline passes first.
    func waitForLines(_ count: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            let reached = try child.waitForOutput("\(count) lines", timeout: deadline) { $0.split(separator: UInt8(ascii: "\n")).count >= count }
            if !reached { Issue.record("the app ended before printing \(count) lines: \(child.standardError)", sourceLocation: sourceLocation) }
        } catch {
            Issue.record("\(error)", sourceLocation: sourceLocation)
        }
    }

    /// Waits for the app and returns its JSON lines. An app that does not end within the
    /// deadline is killed and the test fails with its output (the lines so far are returned).
    func finish(sourceLocation: SourceLocation = #_sourceLocation) -> [[String: Any]] {
        do { try child.waitForExit("its end", timeout: deadline) } catch { Issue.record("\(error)", sourceLocation: sourceLocation) }
        let lines = String(decoding: child.standardOutput, as: UTF8.self).split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        // An app that said nothing: what the launcher said instead, so a failure shows why.
        return lines.isEmpty ? [["launcher": child.standardError, "status": Int(process.terminationStatus)]] : lines
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
    var ruleName: String? { (self["decision"] as? [String: Any])?["ruleName"] as? String }
    var decidedAt: String? { (self["decision"] as? [String: Any])?["decidedAt"] as? String }
}

extension WireSocket {
    /// Receives one frame, waiting at most `seconds`; nil at the end of stream. A broker that
    /// says nothing in time fails the test (a bare `receive()` would wait forever).
    func receive(within seconds: Double, sourceLocation: SourceLocation = #_sourceLocation) -> Received? {
        var pfd = pollfd(fd: descriptor.rawValue, events: Int16(POLLIN), revents: 0)
        let ready = poll(&pfd, 1, Int32(seconds * 1000))
        guard ready > 0 else {
            Issue.record("no frame within \(seconds) s", sourceLocation: sourceLocation)
            return nil
        }
        return receive()
    }
}
