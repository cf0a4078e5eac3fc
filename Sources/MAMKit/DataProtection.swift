import Crypto
import Foundation
import MAMPolicy
import MAMProtect
import MAMWire

/// `IntuneMAMDataProtectionManager`: protect and unprotect buffers and strings for an account.
/// Only the managed account the app is enrolled with has a key (the broker hands it out for
/// that account only); data for any other account is returned as it is, as the SDK does for an
/// account no policy manages.
public struct DataProtection: Sendable {
    let kit: Kit

    /// The SDK's status codes (`IntuneMAMDataProtectionStatusCode`).
    public enum Status: Int, Sendable {
        case applicationNotManaged = 100, invalidArguments, failedToEncryptData, failedToDecryptData, dataNotProtected, emptyData
    }

    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public var status: Status
        public var detail: String
        public var description: String { "\(status) (\(status.rawValue)): \(detail)" }
    }

    /// `protect(_:accountId:)`: sealed under the account's key when the account is managed
    /// here; for any other account only tagged with its identity (a header, then the bytes as
    /// they are), as the SDK does for an account no policy manages (docs/PROTECTION.md).
    public func protect(_ data: [UInt8], for account: String) async throws -> [UInt8] {
        guard !data.isEmpty else { throw Failure(status: .emptyData, detail: "nothing to protect") }
        let identity = kit.resolve(account)
        guard case let .account(acct) = identity else { return data }
        let owner: DataOwner
        do { owner = try Kit.owner(acct) } catch { throw Failure(status: .invalidArguments, detail: "\(error)") }
        guard kit.policy(for: identity).isManaged else { return MAMProtect.DataProtection.tag(data, for: owner) }
        let key = try await kit.protectionKey(for: acct)
        do {
            return try MAMProtect.DataProtection.protect(data, for: owner, key: key)
        } catch {
            throw Failure(status: Status(rawValue: error.code.rawValue) ?? .failedToEncryptData, detail: "\(error)")
        }
    }

    /// `protectString`: base64 text.
    public func protectString(_ text: String, for account: String) async throws -> String {
        Data(try await protect(Array(text.utf8), for: account)).base64EncodedString()
    }

    /// `unprotect(_:)`: the plaintext. Data that was never protected comes back unchanged;
    /// tagged data loses its header; sealed data opens only under the key of the account this
    /// app is managed under, and tampering or another account's data is an error.
    public func unprotect(_ data: [UInt8]) async throws -> [UInt8] {
        let info: DataProtectionInfo?
        do { info = try MAMProtect.DataProtection.protectionInfo(of: data) } catch {
            throw Failure(status: .failedToDecryptData, detail: "\(error)")
        }
        guard let info else { return data }
        var key: ProtectionKey?
        let enrolled = kit.managedAccount
        if let enrolled, let mine = try? Kit.owner(enrolled), mine.isSameAccount(as: info.owner) {
            key = try await kit.protectionKey(for: enrolled)
        } else if info.isEncrypted {
            throw Failure(status: .applicationNotManaged, detail: "the data belongs to \(info.owner), an account this app is not managed under")
        }
        do {
            // keyFor: tagged data naming an account that has a key is refused (a flipped mode byte).
            return try MAMProtect.DataProtection.unprotect(data, keyFor: { owner in
                key.flatMap { _ in info.owner.isSameAccount(as: owner) ? key : nil }
            })
        } catch {
            throw Failure(status: Status(rawValue: error.code.rawValue) ?? .failedToDecryptData, detail: "\(error)")
        }
    }

    /// `unprotectString`.
    public func unprotectString(_ text: String) async throws -> String {
        guard let data = Data(base64Encoded: text) else { return text }
        return String(decoding: try await unprotect(Array(data)), as: UTF8.self)
    }

    /// `protectionInfo(_:)`: who owns the data and whether it is sealed (managed owner) or only
    /// tagged (unmanaged owner); nil for data that was never protected.
    public func protectionInfo(of data: [UInt8]) -> (owner: String, isEncrypted: Bool)? {
        guard let info = try? MAMProtect.DataProtection.protectionInfo(of: data) else { return nil }
        return (info.owner.upn.isEmpty ? info.owner.objectID : info.owner.upn, info.isEncrypted)
    }

    /// The owner of protected or tagged data (its UPN); nil for data that was never protected.
    public func owner(of data: [UInt8]) -> String? {
        guard let info = try? MAMProtect.DataProtection.protectionInfo(of: data) else { return nil }
        return info.owner.upn.isEmpty ? info.owner.objectID : info.owner.upn
    }
}

extension Kit {
    /// The key id of an account, as the broker names keys: its object id, else its name, lower-cased.
    static func keyID(_ account: Account) -> String {
        if let oid = account.oid, !oid.isEmpty { return oid.lowercased() }
        return account.name.lowercased()
    }

    /// The enrolled account a key id names, if the app is managed under it.
    func account(forKeyID keyID: String) -> Account? {
        managedAccount.flatMap { Self.keyID($0) == keyID.lowercased() ? $0 : nil }
    }

    /// The owner MAMProtect writes into a header for an account.
    static func owner(_ account: Account) throws -> DataOwner {
        try DataOwner(upn: account.upn ?? account.name, objectID: account.oid ?? "")
    }

    /// The managed account this app is enrolled with and managed under, if any.
    var managedAccount: Account? {
        guard let s = snapshot, let e = s.enrolled, s.policy != nil else { return nil }
        return e
    }

    func protectionKey(for account: Account) async throws -> ProtectionKey {
        let bytes = try await key(for: account)
        do { return try ProtectionKey(SymmetricKey(data: bytes)) } catch {
            throw DataProtection.Failure(status: .invalidArguments, detail: "\(error)")
        }
    }

    /// The account's key: from the kit's cache, else from the broker (`keyRequest`).
    func key(for account: Account) async throws -> [UInt8] {
        let id = Self.keyID(account)
        if let k = state.current.keys[id] { return k }
        let replies: [Incoming]
        do {
            replies = try await connection.request(.keyRequest(account: account.upn ?? account.name))
        } catch let e as MAMKitError {
            throw DataProtection.Failure(status: .applicationNotManaged, detail: e.detail)
        }
        guard case let .accountKey(_, key)? = replies.first?.frame.message, key.count == Wire.keySize else {
            throw MAMKitError(.unexpectedReply, "keyRequest")
        }
        state.withLock { $0.keys[id] = key }
        return key
    }

    /// Opens a document the broker encrypted (`DocumentCipher`), when this app is managed under
    /// the account whose key id it names.
    func openCiphertext(_ bytes: [UInt8]) async -> [UInt8]? {
        guard bytes.starts(with: DocumentCipher.magic), let keyID = try? DocumentCipher.keyID(of: bytes),
              let owner = account(forKeyID: keyID), let key = try? await key(for: owner) else { return nil }
        return try? DocumentCipher.open(bytes, key: key)
    }
}
