/// The header of protected data (docs/PROTECTION.md, "Protected data"): who owns the bytes that
/// follow and, when they are encrypted, what opens them.
///
///     offset  size  field
///     0       6     magic 89 "MAMD" 0A
///     6       1     version (1)
///     7       1     mode: 0 = tagged (plaintext follows), 1 = AES-256-GCM
///     8       1     object id length a (≤ 128)
///     9       2     UPN length b, u16 little-endian (≤ 256)
///     11      a     owner's object id (UTF-8)
///     11+a    b     owner's UPN (UTF-8)
///     mode 1 only:
///     11+a+b  16    key check (ProtectionKey)
///     27+a+b  12    nonce base, random per protect
struct ProtectedDataHeader: Equatable {
    enum Mode: UInt8 { case tagged = 0, encrypted = 1 }

    static let magic: [UInt8] = [0x89, 0x4d, 0x41, 0x4d, 0x44, 0x0a]
    static let version: UInt8 = 1
    static let nonceSize = 12

    var mode: Mode
    var owner: DataOwner
    var keyCheck: [UInt8] = []
    var nonceBase: [UInt8] = []

    /// The header's bytes, exactly as they are bound into every chunk's additional data,
    /// followed by `spare` zero bytes.
    func encoded(spare: Int = 0) -> [UInt8] {
        let oid = owner.objectID.utf8, upn = owner.upn.utf8
        var out = Self.magic
        out.reserveCapacity(11 + oid.count + upn.count + 28 + spare)
        out += [Self.version, mode.rawValue, UInt8(oid.count), UInt8(upn.count & 0xff), UInt8(upn.count >> 8)]
        out += oid
        out += upn
        if mode == .encrypted { out += keyCheck; out += nonceBase }
        out += repeatElement(0, count: spare)
        return out
    }

    /// Where the fields of the header at the start of `b` lie, checking only the fixed part and
    /// the lengths (`parse` also decodes the owner).
    static func layout(_ b: UnsafeRawBufferPointer) throws(DataProtectionError) -> (mode: Mode, length: Int, keyCheck: Int) {
        guard b.count >= 11 else { throw .truncated("the data ends at byte \(b.count), inside its 11-byte fixed header") }
        guard b[6] == version else { throw .malformedHeader("byte 6: version \(b[6]); this side reads \(version)") }
        guard let mode = Mode(rawValue: b[7]) else { throw .malformedHeader("byte 7: mode \(b[7]); this side reads 0 (tagged) or 1 (AES-256-GCM)") }
        let a = Int(b[8]), n = Int(b[9]) | Int(b[10]) << 8
        guard a <= DataOwner.maximumObjectIDLength else {
            throw .malformedHeader("byte 8: object id length \(a); at most \(DataOwner.maximumObjectIDLength)")
        }
        guard n <= DataOwner.maximumUPNLength else {
            throw .malformedHeader("bytes 9-10: UPN length \(n); at most \(DataOwner.maximumUPNLength)")
        }
        let fixed = 11 + a + n
        let length = fixed + (mode == .encrypted ? ProtectionKey.checkSize + nonceSize : 0)
        guard b.count >= length else { throw .truncated("the data ends at byte \(b.count), inside its \(length)-byte header") }
        return (mode, length, fixed)
    }

    static func hasMagic(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= magic.count && zip(magic, bytes).allSatisfy { $0 == $1 }
    }

    /// Parses the header at the start of `bytes` (which begin with the magic) and returns it with
    /// its length. Every field is checked before it is used.
    static func parse(_ b: UnsafeRawBufferPointer) throws(DataProtectionError) -> (header: ProtectedDataHeader, length: Int) {
        let (mode, length, fixed) = try layout(b)
        let a = Int(b[8])
        let objectID = try DataOwner.field(b[11..<11 + a], named: "object id", limit: DataOwner.maximumObjectIDLength)
        let upn = try DataOwner.field(b[11 + a..<fixed], named: "UPN", limit: DataOwner.maximumUPNLength)
        var header = ProtectedDataHeader(mode: mode, owner: DataOwner(uncheckedUPN: upn, objectID: objectID))
        if mode == .encrypted {
            header.keyCheck = Array(b[fixed..<fixed + ProtectionKey.checkSize])
            header.nonceBase = Array(b[fixed + ProtectionKey.checkSize..<length])
        }
        return (header, length)
    }
}
