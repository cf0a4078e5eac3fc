import Crypto
import MAMProtect

/// File protection as MAMProtect does it: the owner in the file's `user.mamlab.owner`
/// attribute, encrypted files in its chunked format, and the wipe's walk that removes an
/// account's files without following links (docs/PROTECTION.md). The kit's default.
struct ProtectFiles: FileProtector {
    func owner(ofFileAt path: String) throws -> FileOwner? {
        let owner = try FileOwnership.owner(ofFileAt: path)
        return owner.isNobody ? nil : FileOwner(upn: owner.upn, objectID: owner.objectID)
    }

    func setOwner(_ owner: FileOwner, ofFileAt path: String) throws {
        try FileOwnership.setOwner(try Self.dataOwner(owner), ofFileAt: path)
    }

    func isFileEncrypted(at path: String) throws -> Bool { try FileEncryption.isFileEncrypted(at: path) }

    func encryptFile(at path: String, for owner: FileOwner, key: [UInt8]) throws {
        try FileEncryption.encryptFile(at: path, for: try Self.dataOwner(owner), key: try ProtectionKey(SymmetricKey(data: key)))
    }

    func decryptFile(at path: String, key: [UInt8]) throws {
        try FileEncryption.decryptFile(at: path, key: try ProtectionKey(SymmetricKey(data: key)))
    }

    func removeFiles(ownedBy owner: FileOwner, under folder: String) throws -> [String] {
        try FileOwnership.removeFiles(ownedBy: try Self.dataOwner(owner), under: folder).removed
    }

    static func dataOwner(_ owner: FileOwner) throws -> DataOwner {
        owner == .nobody ? .nobody : try DataOwner(upn: owner.upn, objectID: owner.objectID)
    }
}
