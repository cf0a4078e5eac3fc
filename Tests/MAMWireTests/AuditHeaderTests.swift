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
}
