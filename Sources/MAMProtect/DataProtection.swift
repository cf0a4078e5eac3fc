import Crypto
import Foundation

/// Protect and unprotect buffers and strings for an owner, as the SDK's data-protection manager
/// does (docs/PROTECTION.md, "Protected data").
///
/// A managed owner's data is encrypted under the account's key: a header naming the owner, then
/// AES-256-GCM in 64 KiB chunks, each bound to the whole header, its index and whether it is the
/// last, so changing the owner, a byte, the order or the length is detected. An unmanaged
/// owner's data is only tagged: the same header naming the owner, then the plaintext, as the
/// real SDK does (it adds an identity header and does not encrypt). Which one applies is the
/// caller's policy decision: `protect` encrypts, `tag` does not.
public enum DataProtection {
    /// Plaintext bytes per chunk.
    public static let chunkSize = 65_536
    static let tagSize = 16

    /// Encrypts `data` for `owner` under the account's key.
    public static func protect(_ data: some ContiguousBytes, for owner: DataOwner, key: ProtectionKey) throws(DataProtectionError) -> [UInt8] {
        try AccountProtection(owner: owner, key: key).protect(data)
    }

    /// Seals `plain` chunk by chunk after the header (`additional` less its five spare bytes),
    /// each chunk's ciphertext and tag written straight into the output, one key schedule for all.
    static func seal(_ plain: UnsafeRawBufferPointer, additional: [UInt8], first: AES.GCM.Nonce, key: SymmetricKey) -> Result<[UInt8], DataProtectionError> {
        let headerLength = additional.count - 5
        let chunks = max(1, (plain.count + chunkSize - 1) / chunkSize)
        guard let cipher = ChunkCipher(key: key) else { return .failure(.encryptionFailed("the key was refused")) }
        var additional = additional
        let base = Array(additional[headerLength - ProtectedDataHeader.nonceSize..<headerLength])
        var nonce = base
        var failed: Int?
        let out = [UInt8](unsafeUninitializedCapacity: headerLength + plain.count + chunks * tagSize) { buffer, count in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            additional.withUnsafeBytes { raw.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<headerLength])) }
            var at = headerLength
            for i in 0..<chunks {
                let start = i * chunkSize
                let piece = UnsafeRawBufferPointer(rebasing: plain[start..<min(plain.count, start + chunkSize)])
                additional.withUnsafeMutableBytes { setChunk(i, last: i == chunks - 1, in: $0) }
                setNonce(base, i, in: &nonce)
                let sealed = UnsafeMutableRawBufferPointer(rebasing: raw[at..<at + piece.count + tagSize])
                let ok = nonce.withUnsafeBytes { n in additional.withUnsafeBytes { cipher.seal(piece, into: sealed, nonce: n, additional: $0) } }
                guard ok else {
                    failed = i
                    count = 0
                    return
                }
                at += piece.count + tagSize
            }
            count = at
        }
        if let failed { return .failure(.encryptionFailed("chunk \(failed) could not be sealed")) }
        return .success(out)
    }

    /// Encrypts `data` for `owner` under `key` (a 256-bit account key).
    public static func protect(_ data: some ContiguousBytes, for owner: DataOwner, key: SymmetricKey) throws(DataProtectionError) -> [UInt8] {
        try protect(data, for: owner, key: ProtectionKey(key))
    }

    /// Tags `data` as `owner`'s without encrypting it: what protect does for an unmanaged owner.
    public static func tag(_ data: some ContiguousBytes, for owner: DataOwner) -> [UInt8] {
        var out = ProtectedDataHeader(mode: .tagged, owner: owner).encoded()
        data.withUnsafeBytes { out.append(contentsOf: $0) }
        return out
    }

    /// The owner of protected data and whether it is encrypted, read from the header without
    /// decrypting; nil for data that `protect` and `tag` did not make.
    public static func protectionInfo(of data: some ContiguousBytes) throws(DataProtectionError) -> DataProtectionInfo? {
        try data.withUnsafeBytes { raw in
            Result { () throws(DataProtectionError) -> DataProtectionInfo? in
                guard ProtectedDataHeader.hasMagic(raw) else { return nil }
                let header = try ProtectedDataHeader.parse(raw).header
                return DataProtectionInfo(owner: header.owner, isEncrypted: header.mode == .encrypted)
            }
        }.get()
    }

    /// The plaintext of protected or tagged data. Data that `protect` and `tag` did not make comes
    /// back unchanged. Encrypted data needs its owner's key (see `protectionInfo(of:)`); a nil key
    /// is enough for tagged and never-protected data.
    public static func unprotect(_ data: some ContiguousBytes, key: ProtectionKey?) throws(DataProtectionError) -> [UInt8] {
        // Not a generic closure with a typed throw: its metadata is built at run time on every
        // call, which costs more than the rest of a 4 KiB unprotect.
        try data.withUnsafeBytes { raw in unprotect(raw, key: key) }.get()
    }

    static func unprotect(_ raw: UnsafeRawBufferPointer, key: ProtectionKey?) -> Result<[UInt8], DataProtectionError> {
        do throws(DataProtectionError) { return .success(try plaintext(of: raw, key: key)) } catch { return .failure(error) }
    }

    static func plaintext(of raw: UnsafeRawBufferPointer, key: ProtectionKey?) throws(DataProtectionError) -> [UInt8] {
        guard ProtectedDataHeader.hasMagic(raw) else { return Array(raw) }
        // The owner is decoded only when it is needed (tagged data, errors): an encrypted
        // header that authenticates is byte for byte what protect wrote.
        let layout = try ProtectedDataHeader.layout(raw)
        let body = UnsafeRawBufferPointer(rebasing: raw[layout.length...])
        guard layout.mode == .encrypted else {
            _ = try ProtectedDataHeader.parse(raw)
            return Array(body)
        }
        let check = UnsafeRawBufferPointer(rebasing: raw[layout.keyCheck..<layout.keyCheck + ProtectionKey.checkSize])
        guard let key else { throw .keyRequired(owner: try ProtectedDataHeader.parse(raw).header.owner) }
        guard key.matches(check) else { throw .wrongKey(owner: try ProtectedDataHeader.parse(raw).header.owner) }
        return try open(body, header: UnsafeRawBufferPointer(rebasing: raw[0..<layout.length]), key: key.key)
    }

    /// The plaintext of protected or tagged data, with the key of the owner it names: `keyFor`
    /// answers the key of a managed account and nil for an unmanaged one. This is the variant
    /// the kit uses, and the stricter one: tagged data that names an account with a key is
    /// refused, because the SDK encrypts a managed account's data; tagged bytes naming one were
    /// forged or had their mode byte changed from encrypted to tagged.
    public static func unprotect(_ data: some ContiguousBytes, keyFor: (DataOwner) -> ProtectionKey?) throws(DataProtectionError) -> [UInt8] {
        let info = try protectionInfo(of: data)
        guard let info else { return try unprotect(data, key: nil) }
        let key = keyFor(info.owner)
        if !info.isEncrypted && key != nil {
            throw .tampered("the data is tagged, not encrypted, yet names \(info.owner), an account with a key: forged, or its mode byte was changed")
        }
        return try unprotect(data, key: key)
    }

    /// `unprotect` with a 256-bit account key.
    public static func unprotect(_ data: some ContiguousBytes, key: SymmetricKey) throws(DataProtectionError) -> [UInt8] {
        try unprotect(data, key: ProtectionKey(key))
    }

    /// Opens the chunks of `body` under `key` straight into the plaintext's buffer; `header`
    /// ends with the nonce base. The additional data and the nonce live on the stack: an
    /// unprotect allocates its plaintext and nothing else.
    static func open(_ body: UnsafeRawBufferPointer, header: UnsafeRawBufferPointer, key: SymmetricKey) throws(DataProtectionError) -> [UInt8] {
        let record = chunkSize + tagSize
        let chunks = max(1, (body.count + record - 1) / record)
        let lastLength = body.count - (chunks - 1) * record
        guard lastLength >= tagSize else {
            throw .truncated("the last chunk (\(chunks - 1)) is \(lastLength) bytes, shorter than its \(tagSize)-byte tag")
        }
        guard let cipher = ChunkCipher(key: key) else { throw .invalidKey("the key was refused") }
        let nonceSize = ProtectedDataHeader.nonceSize
        let base = UnsafeRawBufferPointer(rebasing: header[(header.count - nonceSize)...])
        var failed: Int?
        let out = withUnsafeTemporaryAllocation(byteCount: header.count + 5 + nonceSize, alignment: 8) { scratch in
            let additional = UnsafeMutableRawBufferPointer(rebasing: scratch[0..<header.count + 5])
            additional.copyMemory(from: header)
            let nonce = UnsafeMutableRawBufferPointer(rebasing: scratch[(header.count + 5)...])
            return [UInt8](unsafeUninitializedCapacity: body.count - chunks * tagSize) { buffer, count in
                let raw = UnsafeMutableRawBufferPointer(buffer)
                var at = 0
                for i in 0..<chunks {
                    let sealed = UnsafeRawBufferPointer(rebasing: body[i * record..<min(body.count, (i + 1) * record)])
                    setChunk(i, last: i == chunks - 1, in: additional)
                    nonce.copyMemory(from: base)
                    xorIndex(i, into: nonce)
                    let plain = UnsafeMutableRawBufferPointer(rebasing: raw[at..<at + sealed.count - tagSize])
                    guard cipher.open(sealed, into: plain, nonce: UnsafeRawBufferPointer(nonce), additional: UnsafeRawBufferPointer(additional)) else {
                        failed = i
                        count = 0
                        return
                    }
                    at += plain.count
                }
                count = at
            }
        }
        if let failed {
            // The key check already matched, so the key is right: the bytes changed, or
            // chunks were dropped (the new last one was sealed as not last).
            throw .tampered("chunk \(failed) of \(chunks) does not authenticate: the data was changed or cut short")
        }
        return out
    }

    /// Chunk i's nonce: the random base with i (u32 big-endian) XORed into its last four bytes,
    /// so no two chunks of one protect share a nonce and protects share one only if their random
    /// bases collide (docs/PROTECTION.md, "Nonces").
    static func setNonce(_ base: [UInt8], _ i: Int, in nonce: inout [UInt8]) {
        nonce.withUnsafeMutableBytes { n in
            base.withUnsafeBytes { n.copyMemory(from: $0) }
            xorIndex(i, into: n)
        }
    }

    static func xorIndex(_ i: Int, into nonce: UnsafeMutableRawBufferPointer) {
        nonce[8] ^= UInt8(truncatingIfNeeded: i >> 24)
        nonce[9] ^= UInt8(truncatingIfNeeded: i >> 16)
        nonce[10] ^= UInt8(truncatingIfNeeded: i >> 8)
        nonce[11] ^= UInt8(truncatingIfNeeded: i)
    }

    /// Chunk i's additional data is the header followed by i (u32 big-endian) and 1 for the last
    /// chunk, 0 for the others; `additional` holds the header and five spare bytes.
    static func setChunk(_ i: Int, last: Bool, in additional: UnsafeMutableRawBufferPointer) {
        let n = additional.count
        additional[n - 5] = UInt8(truncatingIfNeeded: i >> 24)
        additional[n - 4] = UInt8(truncatingIfNeeded: i >> 16)
        additional[n - 3] = UInt8(truncatingIfNeeded: i >> 8)
        additional[n - 2] = UInt8(truncatingIfNeeded: i)
        additional[n - 1] = last ? 1 : 0
    }
}

/// Who owns protected data, and whether it is encrypted or only tagged.
public struct DataProtectionInfo: Sendable, Equatable {
    public var owner: DataOwner
    public var isEncrypted: Bool

    public init(owner: DataOwner, isEncrypted: Bool) {
        self.owner = owner
        self.isEncrypted = isEncrypted
    }
}
