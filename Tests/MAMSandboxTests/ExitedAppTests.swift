import Foundation
import MAMSandbox
import MAMTestSupport
import Testing

/// The launcher acts on its app's pid after the app may have ended (a restart request from the
/// broker kills it): until the launcher has stopped acting on it, the pid must stay the app's.
@Suite("Sandbox: an exited app's pid", .serialized, .hangGuard)
struct ExitedAppTests {
    @Test func anExitedAppKeepsItsPidUntilItIsReaped() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-exited-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let config = LaunchConfiguration(bundleID: "com.example.exits", executable: "/bin/true", containersRoot: root, allowWeaker: true)
        let app = try Sandbox.launch(config) { _ in }
        app.waitUntilExited()
        // Ended, not reaped: the pid names the app's zombie, and a kill reaches nothing else.
        #expect(kill(app.pid, 0) == 0, "the pid was released before the launcher reaped it")
        #expect(app.wait() == 0)
        #expect(kill(app.pid, 0) == -1 && errno == ESRCH)
    }

    /// The parent-death signal follows the thread that cloned the app: an app launched from a
    /// thread that then ended (a Dispatch worker retiring, as under the matrix) was killed with
    /// SIGKILL at once. It must live on until the launcher ends it.
    @Test func anAppOutlivesTheThreadThatLaunchedIt() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-outlives-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let config = LaunchConfiguration(bundleID: "com.example.outlives", executable: "/bin/sleep", arguments: ["60"],
                                         containersRoot: root, allowWeaker: true)
        final class Box: @unchecked Sendable { var result: Result<SandboxedApp, Error>? }
        let box = Box()
        let launched = DispatchSemaphore(value: 0)
        let thread = Thread {
            box.result = Result { try Sandbox.launch(config) { _ in } }
            launched.signal()
        }
        thread.start()
        try #require(launched.wait(timeout: .now() + 30) == .success, "the launch did not return within 30 s")
        let app = try #require(try box.result?.get())
        let deadline = Date(timeIntervalSinceNow: 10)
        while !thread.isFinished && Date() < deadline { usleep(1000) }
        #expect(thread.isFinished)
        // Watched for a second after the thread ended: the signal, had it been bound to that
        // thread, arrives within milliseconds.
        var ended = false
        for _ in 0..<100 where !ended {
            var info = siginfo_t()
            ended = waitid(P_PID, id_t(app.pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info._sifields._sigchld.si_pid == app.pid
            if !ended { usleep(10_000) }
        }
        #expect(!ended, "the app was killed when the thread that launched it ended")
        kill(app.pid, SIGKILL)
        _ = app.wait()
    }
}
