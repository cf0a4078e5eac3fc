import Foundation
import Glibc
import MAMSandbox
import MAMWire
import SystemPackage
import Testing

/// An app started again the moment the last one was reaped, as the launcher restarts an app at
/// the broker's request (issue 20: about one restart in a hundred failed with `exec: EPERM`).
/// The last app's supervisor may still be busy with its last violation when the next app starts:
/// it must never answer the next app's calls (its listener's number was the next app's
/// listener's, and its one exec was spent).
@Suite("Sandbox: an app started again at once", .serialized, .timeLimit(.minutes(2)))
struct RestartLoopTests {
    @Test func eachLaunchIsAnsweredByItsOwnSupervisor() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-restarts-\(UUID().uuidString.prefix(8))").path
        let outcome = RestartOutcome()
        // The loop runs on a thread of its own: a launch whose exec nobody answers blocks in
        // Sandbox.launch (the old supervisor's way to fail), and the test must still end.
        let done = DispatchSemaphore(value: 0)
        Thread {
            Self.restartLoop(root: root, outcome: outcome)
            done.signal()
        }.start()
        guard done.wait(timeout: .now() + 100) == .success else {
            Issue.record("launch \(outcome.launches + 1) did not start within the deadline: its exec was never answered (\(outcome.problems))")
            return
        }
        try? FileManager.default.removeItem(atPath: root)
        #expect(outcome.problems.isEmpty, "\(outcome.problems)")
        #expect(outcome.launches >= 30, "only \(outcome.launches) launches within the deadline")
    }

    static func restartLoop(root: String, outcome: RestartOutcome) {
        let deadline = Date(timeIntervalSinceNow: 60)
        let quiet = open("/dev/null", O_WRONLY | O_CLOEXEC)
        defer { close(quiet) }
        for i in 0..<120 where Date() < deadline {
            let seen = ViolationLog()
            // One write outside the container (refused, reported), then the end. The report is
            // slow on purpose: the supervisor is still in it when the launcher starts the next app.
            var config = LaunchConfiguration(bundleID: "com.example.restarts", executable: "/bin/sh",
                                             arguments: ["-c", "true > /mamlab-refused-\(i); exit 3"], environment: ["PATH": "/usr/bin:/bin"],
                                             containersRoot: root, allowWeaker: true)
            config.standardError = FileDescriptor(rawValue: quiet)
            let app: SandboxedApp
            do {
                app = try Sandbox.launch(config) { v in
                    seen.append(v)
                    usleep(3_000)
                }
            } catch {
                outcome.problem("launch \(i + 1) failed: \(error)")
                return
            }
            let status = app.wait()
            if status != 3 { outcome.problem("launch \(i + 1): exit \(status)") }
            for v in seen.all where v.pid != app.pid {
                outcome.problem("launch \(i + 1) (pid \(app.pid)) was reported another app's violation: \(v)")
            }
            outcome.launched()
        }
    }
}

final class RestartOutcome: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    private var found: [String] = []
    func launched() { lock.lock(); count += 1; lock.unlock() }
    func problem(_ text: String) { lock.lock(); found.append(text); lock.unlock() }
    var launches: Int { lock.lock(); defer { lock.unlock() }; return count }
    var problems: [String] { lock.lock(); defer { lock.unlock() }; return found }
}

final class ViolationLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Violation] = []
    func append(_ v: Violation) { lock.lock(); items.append(v); lock.unlock() }
    var all: [Violation] { lock.lock(); defer { lock.unlock() }; return items }
}
