import Foundation
import Glibc
import MAMWire
import Testing

/// The audit header's committed length, read after every matrix cell: what the broker writes
/// reads back, and a field that is not eight bytes of right-aligned digits is no header.
@Suite struct AuditHeaderTests {
    @Test("every committed length the broker writes reads back")
    func headersReadBack() {
        for n in [AuditFile.headerSize, 65, 999, 1_000_000, AuditFile.largest] {
            #expect(AuditFile.committed(AuditFile.header(committed: n)) == n)
        }
    }

    @Test("blanks, letters, signs, digits split by a blank or a length below the header's are no length")
    func malformedFieldsAreRefused() {
        let header = AuditFile.header(committed: 12_345)
        func with(_ field: String) -> [UInt8] {
            var h = header
            h.replaceSubrange(AuditFile.committedOffset..<AuditFile.committedOffset + 8, with: Array(field.utf8))
            return h
        }
        #expect(AuditFile.committed(with("   12345")) == 12_345)
        #expect(AuditFile.committed(with("12345   ")) == 12_345)
        for bad in ["        ", "   1234x", "  -12345", "  +12345", " 12 3456", "      63", "0x000100"] {
            #expect(AuditFile.committed(with(bad)) == nil, "\(bad)")
        }
        #expect(AuditFile.committed(Array(header.prefix(40))) == nil)
    }

    @Test("the mapped header reads each length the writer stores, and maps no file that is not a log")
    func mappedHeaderFollowsTheWriter() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-audit-map-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        func file(_ name: String, _ bytes: [UInt8]) -> String {
            let path = dir + "/" + name
            FileManager.default.createFile(atPath: path, contents: Data(bytes))
            return path
        }
        let log = file("audit.jsonl", AuditFile.header(committed: 100) + [UInt8](repeating: 0, count: 4096))
        let map = try #require(AuditHeaderMap(path: log))
        #expect(map.committed == 100)
        // The broker stores into its own shared mapping; a write to the file is seen the same way.
        let fd = open(log, O_WRONLY)
        for n in [4242, 1_000_000, AuditFile.largest] {
            let h = AuditFile.header(committed: n)
            #expect(h.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) } == h.count)
            #expect(map.committed == n)
        }
        close(fd)
        #expect(AuditHeaderMap(path: file("short", Array(AuditFile.header(committed: 64).prefix(40)))) == nil)
        #expect(AuditHeaderMap(path: file("plain", Array(String(repeating: "{\"id\":1}\n", count: 20).utf8))) == nil)
        #expect(AuditHeaderMap(path: dir + "/missing") == nil)
        #expect(symlink(log, dir + "/link") == 0)
        #expect(AuditHeaderMap(path: dir + "/link") == nil, "a link in the log's place is not followed")
    }
}
