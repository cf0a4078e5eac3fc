import Foundation
import MAMSandbox
import MAMTestSupport
import Testing

/// An app's limit on open descriptors (256) binds the app, not the launcher: a launcher holding
/// more than that (the matrix with many apps, a test process) still starts its apps. The limit
/// used to be set before the sandbox's own set-up opened its descriptors, which then failed
/// with EMFILE ("landlock ruleset").
@Suite("Sandbox: a launcher with many descriptors open", .serialized, .hangGuard)
struct DescriptorLimitTests {
    @Test func anAppStartsFromALauncherHoldingMoreDescriptorsThanTheAppMayOpen() throws {
        let held = (0..<300).map { _ in open("/dev/null", O_RDONLY | O_CLOEXEC) }
        defer { held.filter { $0 >= 0 }.forEach { close($0) } }
        #expect(held.allSatisfy { $0 >= 0 })
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-fds-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let config = LaunchConfiguration(bundleID: "com.example.fds", executable: "/bin/true", containersRoot: root, allowWeaker: true)
        let app = try Sandbox.launch(config) { _ in }
        #expect(app.wait() == 0)
    }
}
