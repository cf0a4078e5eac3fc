import Foundation
import Glibc
import Testing

/// The broker's state database holds every managed account's key and the pasteboard's managed
/// text: no other user of the machine may read it, and no app whose grants happen to cover a
/// device folder (another broker's, say) may either.
@Suite("Broker: its state is its own", .serialized)
struct StateFileTests {
    func mode(_ path: String) -> mode_t? {
        var st = stat()
        return stat(path, &st) == 0 ? st.st_mode & 0o777 : nil
    }

    @Test func theStateDatabaseAndItsLogAreReadableByTheBrokerAlone() throws {
        let device = "/tmp/mamlab-broker-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: device, withIntermediateDirectories: true)
        // A state file an earlier version left readable to everyone is tightened, not trusted.
        _ = FileManager.default.createFile(atPath: device + "/state.sqlite", contents: nil, attributes: [.posixPermissions: 0o644])
        let b = try BrokerHarness(device: device)
        defer { b.stop() }
        // Something written through the log: a copy puts managed text on the pasteboard.
        _ = try b.run("Mail", ["hello", "copy", "quarterly numbers"])
        let files = try FileManager.default.contentsOfDirectory(atPath: device).filter { $0.hasPrefix("state.sqlite") }
        #expect(files.contains("state.sqlite") && files.contains("state.sqlite-wal"), "\(files)")
        for name in files {
            let m = mode(device + "/" + name)
            #expect(m.map { $0 & 0o077 == 0 } == true, "\(name) has mode \(String(m ?? 0, radix: 8))")
        }
    }
}
