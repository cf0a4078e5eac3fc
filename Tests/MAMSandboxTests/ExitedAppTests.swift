import Foundation
import MAMSandbox
import Testing

/// The launcher acts on its app's pid after the app may have ended (a restart request from the
/// broker kills it): until the launcher has stopped acting on it, the pid must stay the app's.
@Suite("Sandbox: an exited app's pid", .serialized, .timeLimit(.minutes(1)))
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

    /// The matrix starts apps from dispatch workers, which libdispatch retires when idle: the
    /// app's parent-death signal follows the thread that cloned it, and killed running apps on
    /// the kernel lab's slow guest. Launched from a thread that then ends, the app runs on.
    @Test func anAppOutlivesTheThreadThatLaunchedIt() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-thread-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        var config = LaunchConfiguration(bundleID: "com.example.outlives", executable: "/bin/sleep", containersRoot: root, allowWeaker: true)
        config.arguments = ["2"]
        final class Launch: @unchecked Sendable {
            let config: LaunchConfiguration
            var app: Result<SandboxedApp, Error>?
            init(_ config: LaunchConfiguration) { self.config = config }
        }
        let launch = Launch(config)
        var thread = pthread_t()
        let made = pthread_create(&thread, nil, { raw in
            let launch = Unmanaged<Launch>.fromOpaque(raw!).takeUnretainedValue()
            launch.app = Result { try Sandbox.launch(launch.config) { _ in } }
            return nil
        }, Unmanaged.passUnretained(launch).toOpaque())
        #expect(made == 0)
        // Joined: the launching thread has ended (its exit is what sent the signal).
        pthread_join(thread, nil)
        let app = try #require(try launch.app?.get())
        #expect(app.wait() == 0, "the app was killed when the thread that launched it ended")
    }
}
