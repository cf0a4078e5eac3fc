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
}
