/// The header of an encrypted file (docs/PROTECTION.md, "Encrypted files").
///
///     offset  size  field
///     0       6     magic 89 "MAMF" 0A
///     6       1     version (1)
///     7       1     algorithm (1 = AES-256-GCM)
///     8       4     chunk size, u32 little-endian (4096)
///     12      1     object id length a (≤ 128)
///     13      2     UPN length b, u16 little-endian (≤ 256)
///     15      a     owner's object id (UTF-8)
///     15+a    b     owner's UPN (UTF-8)
///     15+a+b  16    key check (ProtectionKey)
///     31+a+b  16    file id, random per file
///     47+a+b  …     chunk records: nonce (12) ‖ ciphertext (chunk size; the last shorter) ‖ tag (16)
struct EncryptedFileHeader: Equatable {
    static let magic: [UInt8] = [0x89, 0x4d, 0x41, 0x4d, 0x46, 0x0a]
    static let version: UInt8 = 1
    static let algorithm: UInt8 = 1
    static let chunkSize = 4096
    static let fileIDSize = 16
    static let fixedSize = 15
    /// The longest header: both owner fields at their limits.
    static let maximumSize = fixedSize + DataOwner.maximumObjectIDLength + DataOwner.maximumUPNLength + ProtectionKey.checkSize + fileIDSize

    var owner: DataOwner
    var keyCheck: [UInt8]
    var fileID: [UInt8]

    func encoded() -> [UInt8] {
        let oid = Array(owner.objectID.utf8), upn = Array(owner.upn.utf8)
        let size = UInt32(Self.chunkSize)
        var out = Self.magic
        out += [Self.version, Self.algorithm,
                UInt8(size & 0xff), UInt8((size >> 8) & 0xff), UInt8((size >> 16) & 0xff), UInt8(size >> 24),
                UInt8(oid.count), UInt8(upn.count & 0xff), UInt8(upn.count >> 8)]
        out += oid
        out += upn
        out += keyCheck
        out += fileID
        return out
    }

    static func hasMagic(_ bytes: some Collection<UInt8>) -> Bool {
        bytes.count >= magic.count && zip(magic, bytes).allSatisfy { $0 == $1 }
    }

    /// Parses a header from the first bytes of a file (at most `maximumSize` of them).
    static func parse(_ b: [UInt8]) throws(DataProtectionError) -> (header: EncryptedFileHeader, length: Int) {
        guard b.count >= fixedSize else { throw .truncated("the file ends at byte \(b.count), inside its \(fixedSize)-byte fixed header") }
        guard hasMagic(b) else { throw .malformedHeader("bytes 0-5: not an encrypted MAMLab file") }
        guard b[6] == version else { throw .malformedHeader("byte 6: version \(b[6]); this side reads \(version)") }
        guard b[7] == algorithm else { throw .malformedHeader("byte 7: algorithm \(b[7]); this side reads 1 (AES-256-GCM)") }
        let size = Int(b[8]) | Int(b[9]) << 8 | Int(b[10]) << 16 | Int(b[11]) << 24
        guard size == chunkSize else { throw .malformedHeader("bytes 8-11: chunk size \(size); this side reads \(chunkSize)") }
        let a = Int(b[12]), n = Int(b[13]) | Int(b[14]) << 8
        guard a <= DataOwner.maximumObjectIDLength else {
            throw .malformedHeader("byte 12: object id length \(a); at most \(DataOwner.maximumObjectIDLength)")
        }
        guard n <= DataOwner.maximumUPNLength else {
            throw .malformedHeader("bytes 13-14: UPN length \(n); at most \(DataOwner.maximumUPNLength)")
        }
        let owned = fixedSize + a + n
        let length = owned + ProtectionKey.checkSize + fileIDSize
        guard b.count >= length else { throw .truncated("the file ends at byte \(b.count), inside its \(length)-byte header") }
        let objectID = try DataOwner.field(b[fixedSize..<fixedSize + a], named: "object id", limit: DataOwner.maximumObjectIDLength)
        let upn = try DataOwner.field(b[fixedSize + a..<owned], named: "UPN", limit: DataOwner.maximumUPNLength)
        let header = EncryptedFileHeader(
            owner: DataOwner(uncheckedUPN: upn, objectID: objectID),
            keyCheck: Array(b[owned..<owned + ProtectionKey.checkSize]),
            fileID: Array(b[owned + ProtectionKey.checkSize..<length]))
        return (header, length)
    }
}
