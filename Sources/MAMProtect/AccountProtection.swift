import Crypto
import Foundation

/// One account's data protection: its owner and key, with the header every protect writes
/// (all but the random nonce base) encoded once. The kit keeps one per managed account;
/// `DataProtection.protect(_:for:key:)` makes one for each call.
public struct AccountProtection: Sendable {
    public let owner: DataOwner
    public let key: ProtectionKey
    /// Magic to key check: the header without its nonce base.
    let headerPrefix: [UInt8]

    public init(owner: DataOwner, key: ProtectionKey) throws(DataProtectionError) {
        guard !owner.isNobody else { throw .invalidOwner("data with no owner is tagged, not encrypted: there is no account key for it") }
        self.owner = owner
        self.key = key
        let placeholder = [UInt8](repeating: 0, count: ProtectedDataHeader.nonceSize)
        headerPrefix = ProtectedDataHeader(mode: .encrypted, owner: owner, keyCheck: key.check, nonceBase: placeholder).encoded().dropLast(ProtectedDataHeader.nonceSize)
    }

    /// Encrypts `data` for this account (docs/PROTECTION.md, "Protected data").
    public func protect(_ data: some ContiguousBytes) throws(DataProtectionError) -> [UInt8] {
        // One random 96-bit base per protect, drawn the way AES.GCM draws its own nonces; it
        // is chunk 0's nonce as it is.
        let first = AES.GCM.Nonce()
        let prefix = headerPrefix
        // The header and five spare bytes: chunk i's additional data once they are set.
        let additional = [UInt8](unsafeUninitializedCapacity: prefix.count + ProtectedDataHeader.nonceSize + 5) { buffer, count in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            prefix.withUnsafeBytes { raw.copyMemory(from: $0) }
            first.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: raw[prefix.count...]).copyMemory(from: $0) }
            UnsafeMutableRawBufferPointer(rebasing: raw[(raw.count - 5)...]).initializeMemory(as: UInt8.self, repeating: 0)
            count = raw.count
        }
        let key = key.key
        return try data.withUnsafeBytes { plain in DataProtection.seal(plain, additional: additional, first: first, key: key) }.get()
    }

    /// The plaintext of data protected for this account, tagged data, or data never protected.
    public func unprotect(_ data: some ContiguousBytes) throws(DataProtectionError) -> [UInt8] {
        try DataProtection.unprotect(data, key: key)
    }
}
