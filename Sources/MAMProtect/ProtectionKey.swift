import Crypto

/// An account's 256-bit key, ready to protect with: the key and its key check, a 16-byte value
/// derived from the key (HMAC-SHA-256 of a fixed label, truncated) that every encrypted header
/// carries. The check lets `unprotect` tell "the wrong account's key" apart from "the data was
/// changed", and commits the ciphertext to one key (AES-GCM alone does not: a crafted ciphertext
/// can open under two keys). Make one per account and keep it; building one costs an HMAC.
// SymmetricKey is not marked Sendable, but it is immutable once made; reading it from several
// threads is safe.
public struct ProtectionKey: @unchecked Sendable {
    public let key: SymmetricKey
    let check: [UInt8]

    static let checkLabel = Array("MAMLab protection key check v1".utf8)
    static let checkSize = 16

    public init(_ key: SymmetricKey) throws(DataProtectionError) {
        guard key.bitCount == 256 else { throw .invalidKey("an account key is 256 bits, not \(key.bitCount)") }
        self.key = key
        self.check = Array(HMAC<SHA256>.authenticationCode(for: Self.checkLabel, using: key).prefix(Self.checkSize))
    }

    /// Whether `bytes` is this key's check; constant time, as the check is a MAC.
    func matches(_ bytes: some Collection<UInt8>) -> Bool {
        guard bytes.count == check.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(check, bytes) { difference |= a ^ b }
        return difference == 0
    }
}
