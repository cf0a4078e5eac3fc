import Foundation
import Glibc
import MAMWire
import Testing

/// Issue 21: the log of an app the broker starts grew without bound (11.8 MiB/s under a URL
/// flood) and was 0644 in a 0755 folder, so every local user read the URLs apps were sent.
@Suite("The logs the broker keeps for apps", .serialized, .timeLimit(.minutes(3)))
struct AppLogTests {
    @Test func aURLFloodKeepsAnAppsLogBoundedAndRootsAlone() throws {
        let limit = 8192
        let b = try BrokerHarness(extraArguments: ["--app-log-max-bytes", String(limit)])
        defer { b.stop() }
        let launcher = try WireSocket.connect(b.launcherSocket)
        defer { launcher.close() }
        let notes = try FloodTests.adopt(launcher, "com.example.notes", account: nil)
        defer { notes.close() }
        // Each URL starts Courier through the launcher; it takes the URL, logs it and ends.
        let log = b.device + "/logs/com.example.courier.log"
        let padding = String(repeating: "a", count: 1000)
        let deadline = Date(timeIntervalSinceNow: 100)
        var sent = 0
        while access(log + ".1", F_OK) != 0 && Date() < deadline {
            sent += 1
            try notes.send(Frame(id: UInt32(10 + sent), .openURL(url: "courier://flood/\(sent)?\(padding)")))
            _ = notes.receive(within: 20)
        }
        #expect(access(log + ".1", F_OK) == 0, "the log was not rotated after \(sent) URLs: \(Self.size(log)) bytes")
        #expect(access(log + ".2", F_OK) != 0, "one older log is kept, not more")
        // Bounded: the limit and at most one write beyond it, in each of the two files.
        for path in [log, log + ".1"] {
            #expect(Self.size(path) <= 3 * limit, "\(path): \(Self.size(path)) bytes")
            #expect(Self.mode(path) == 0o600, "\(path): mode \(String(Self.mode(path), radix: 8))")
        }
        #expect(Self.mode(b.device + "/logs") == 0o700, "the logs folder: mode \(String(Self.mode(b.device + "/logs"), radix: 8))")
        #expect(((try? String(contentsOfFile: log + ".1", encoding: .utf8)) ?? "").contains("courier://flood/"), "what the app said is kept")
    }

    static func size(_ path: String) -> Int {
        var st = stat()
        return stat(path, &st) == 0 ? Int(st.st_size) : -1
    }

    static func mode(_ path: String) -> mode_t {
        var st = stat()
        return stat(path, &st) == 0 ? st.st_mode & 0o777 : 0
    }
}
