import Foundation
import Glibc
import MAMTestSupport
import Testing

/// mamlaunch hands the app's connection to the broker (`adopt`); when the broker does not take
/// it, the app must not run on a connection nobody serves (issue 20: the send was `try?`).
@Suite("The launcher's hand-off", .hangGuard)
struct HandoffTests {
    /// A launcher socket whose broker hangs up on every launcher at once.
    static func brokerThatHangsUp(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in for (i, c) in path.utf8.enumerated() { raw[i] = c } }
        let bound = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        try #require(fd >= 0 && bound == 0 && listen(fd, 8) == 0, "the fake broker's socket: \(String(cString: strerror(errno)))")
        Thread {
            while true {
                let conn = accept(fd, nil, nil)
                if conn < 0 { return }
                close(conn)
            }
        }.start()
        return fd
    }

    @Test func anAppTheBrokerDidNotAdoptIsStoppedAndTheLaunchFailsSayingSo() throws {
        let dir = "/tmp/mamlab-handoff-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let listener = try Self.brokerThatHangsUp(dir + "/launcher.sock")
        defer { shutdown(listener, Int32(SHUT_RDWR)); close(listener) }
        // Courier waits for a URL that can never come: only the launcher's refusal ends it.
        let r = try ChildProcess.run(BrokerHarness.bin + "/mamlaunch", ["run", "--manifest", "\(BrokerHarness.root)/Apps/Notes/Info.plist",
                                                                      "--broker", dir + "/launcher.sock", "--containers", dir + "/containers",
                                                                      "--", BrokerHarness.bin + "/Courier", "hello", "wait-url"], timeout: 30)
        #expect(r.status != 0)
        #expect(r.err.contains("the broker did not take its connection"), "\(r.err)")
    }
}
