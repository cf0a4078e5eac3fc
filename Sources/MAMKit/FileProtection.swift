import Foundation
import MAMProtect
import MAMPolicy

/// What the kit needs from a file-protection implementation (MAMProtect's file owners and
/// encrypted files). The kit picks the owner and fetches the key; a protector touches files.
/// `FileOwner` is the owner as written on a file: UPN and object id, both empty for personal.
public protocol FileProtector: Sendable {
    func owner(ofFileAt path: String) throws -> FileOwner?
    func setOwner(_ owner: FileOwner, ofFileAt path: String) throws
    func isFileEncrypted(at path: String) throws -> Bool
    func encryptFile(at path: String, for owner: FileOwner, key: [UInt8]) throws
    func decryptFile(at path: String, key: [UInt8]) throws
    /// Removes every file under `folder` that `owner` owns (a selective wipe); returns their paths.
    func removeFiles(ownedBy owner: FileOwner, under folder: String) throws -> [String]
}

public struct FileOwner: Sendable, Hashable {
    public var upn: String
    public var objectID: String
    public init(upn: String, objectID: String) {
        self.upn = upn
        self.objectID = objectID
    }
    public static let nobody = FileOwner(upn: "", objectID: "")
}

/// `IntuneMAMFileProtectionManager` and `IntuneMAMFile`'s class methods: file owners, and
/// encryption where the owner's policy asks for it (`isFileEncryptionRequired`).
public struct FileProtection: Sendable {
    let kit: Kit

    /// The SDK's status codes (`IntuneMAMFileProtectionStatusCode`).
    public enum Status: Int, Sendable {
        case applicationNotManaged = 100, invalidArguments, failedToEncryptFile, failedToDecryptFile, fileNotFound
        case operationOnDirectory, unmanagedIdentity, internalError
    }

    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var status: Status
        public var detail: String
        public var description: String { "\(status) (\(status.rawValue)): \(detail)" }
    }

    /// `protect(_:accountId:)`: sets the file's owner and, when the owner is managed here and
    /// its policy requires file encryption, encrypts it under the owner's key.
    public func protect(_ path: String, for account: String?) async throws {
        try check(path)
        let identity = account.map { kit.resolve($0) } ?? .personal
        let owner = Self.owner(identity)
        do {
            try kit.fileProtector.setOwner(owner, ofFileAt: path)
            guard case let .account(acct) = identity, kit.policy(for: identity).isFileEncryptionRequired,
                  try !kit.fileProtector.isFileEncrypted(at: path) else { return }
            try kit.fileProtector.encryptFile(at: path, for: owner, key: try await kit.key(for: acct))
        } catch let e as Failure { throw e } catch let e as DataProtection.Failure {
            throw Failure(status: .applicationNotManaged, detail: e.detail)
        } catch {
            throw Failure(status: .failedToEncryptFile, detail: "\(error)")
        }
    }

    /// Creates (or truncates) a file and writes `contents`, as an app does with the SDK in it:
    /// the file belongs to the identity in effect for file work on the calling task, the scoped
    /// ("thread") identity, else the process identity, never the UI identity (seed 002 §File
    /// owner; seed 000 §Multi-identity: an owner is set when a file is created or opened for
    /// truncation). Nothing set at all is personal. The owner's policy then decides encryption,
    /// and a selective wipe of that account removes the file.
    public func createFile(_ path: String, contents: [UInt8]) async throws {
        let identity = kit.effectiveIdentity(forUIWork: false) ?? .personal
        guard FileManager.default.createFile(atPath: path, contents: Data(contents), attributes: [.posixPermissions: 0o600]) else {
            throw Failure(status: .internalError, detail: "\(path) could not be written")
        }
        try await protect(path, for: Kit.wire(identity))
    }

    /// `verifyAndProtect`: only when the owner differs.
    public func verifyAndProtect(_ path: String, for account: String?) async throws {
        let current = try? kit.fileProtector.owner(ofFileAt: path)
        let wanted = Self.owner(account.map { kit.resolve($0) } ?? .personal)
        if current == wanted { return }
        try await protect(path, for: account)
    }

    /// `protectionInfo(_:)`: the file's owner; nil when it has none (or is personal).
    public func owner(of path: String) throws -> String? {
        try check(path)
        guard let owner = try kit.fileProtector.owner(ofFileAt: path), owner != .nobody else { return nil }
        return owner.upn.isEmpty ? owner.objectID : owner.upn
    }

    public func isFileEncrypted(_ path: String) throws -> Bool { try kit.fileProtector.isFileEncrypted(at: path) }

    /// `decryptFile`: with the key of the managed account that owns it.
    public func decryptFile(_ path: String) async throws {
        guard let name = try owner(of: path), case let .account(acct) = kit.resolve(name), kit.policy(for: .account(acct)).isManaged else {
            throw Failure(status: .unmanagedIdentity, detail: "the file's owner is not managed in this app")
        }
        do { try kit.fileProtector.decryptFile(at: path, key: try await kit.key(for: acct)) } catch {
            throw Failure(status: .failedToDecryptFile, detail: "\(error)")
        }
    }

    /// The SDK's `IntuneMAMFile` for a managed account: a file read and written as plaintext at
    /// any offset over its encrypted form (AES-256-GCM chunks, docs/PROTECTION.md), under the
    /// account's key. Created empty and owned by the account when absent, opened otherwise; for
    /// an account not managed here there is no key, and the answer is `unmanagedIdentity`.
    public func encryptedFile(_ path: String, for account: String) async throws -> EncryptedFile {
        let identity = kit.resolve(account)
        guard case let .account(acct) = identity, kit.policy(for: identity).isManaged else {
            throw Failure(status: .unmanagedIdentity, detail: "\(account) is not managed in this app: its files are not encrypted")
        }
        let key = try await kit.protectionKey(for: acct)
        do {
            if FileManager.default.fileExists(atPath: path) { return try EncryptedFile.open(at: path, key: key) }
            return try EncryptedFile.create(at: path, for: try Kit.owner(acct), key: key)
        } catch {
            throw Failure(status: .failedToDecryptFile, detail: "\(error)")
        }
    }

    func check(_ path: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw Failure(status: .fileNotFound, detail: "\(path) does not exist")
        }
        if isDirectory.boolValue { throw Failure(status: .operationOnDirectory, detail: "\(path) is a directory") }
    }

    static func owner(_ identity: Identity) -> FileOwner {
        guard case let .account(a) = identity else { return .nobody }
        return FileOwner(upn: a.upn ?? "", objectID: a.oid ?? "")
    }
}
