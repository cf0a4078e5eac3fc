#if canImport(Glibc)
import Crypto
import Glibc
import SystemPackage

/// Which encrypted format a file is in.
public enum FileEncryptionFormat: Sendable, Equatable {
    /// An encrypted file (`EncryptedFile`), owner in its header.
    case encryptedFile(owner: DataOwner)
    /// A document from an `encrypted` Open-in (`DocumentCipher`), sealed for an account's object id.
    case openInDocument(keyID: String)
}

/// Encrypting and decrypting whole files in place, as the SDK's file-protection manager does
/// (docs/PROTECTION.md, "Encrypted files"). Each replaces the file atomically: the new bytes go
/// to a temporary file beside it, which is flushed and renamed over it.
public enum FileEncryption {
    /// The format of the file at `path`, or nil when it is not encrypted. Reads only the header.
    public static func encryptionFormat(ofFileAt path: String) throws(FileProtectionError) -> FileEncryptionFormat? {
        let fd = try SystemCall.open(path, O_RDONLY)
        defer { close(fd) }
        _ = try SystemCall.requireRegular(fd, path)
        let first = try SystemCall.read(fd, count: EncryptedFileHeader.maximumSize, at: 0, path)
        if EncryptedFileHeader.hasMagic(first) {
            do throws(DataProtectionError) {
                return .encryptedFile(owner: try EncryptedFileHeader.parse(first).header.owner)
            } catch {
                throw .undecryptable(path: path, reason: error)
            }
        }
        if first.starts(with: DocumentCipher.magic) {
            do { return .openInDocument(keyID: try DocumentCipher.keyID(of: FileDescriptor(rawValue: fd))) } catch {
                throw .undecryptableDocument(path: path, detail: "\(error)")
            }
        }
        return nil
    }

    public static func isFileEncrypted(at path: String) throws(FileProtectionError) -> Bool {
        try encryptionFormat(ofFileAt: path) != nil
    }

    /// Encrypts the plain file at `path` for `owner` under the account's key and sets its owner
    /// attribute. A file already encrypted under this key is left as it is; one encrypted under
    /// another key fails.
    public static func encryptFile(at path: String, for owner: DataOwner, key: ProtectionKey) throws(FileProtectionError) {
        guard !owner.isNobody else { throw .unmanagedIdentity(path: path) }
        let source = try SystemCall.open(path, O_RDONLY)
        defer { close(source) }
        let st = try SystemCall.requireRegular(source, path)
        let first = try SystemCall.read(source, count: EncryptedFileHeader.maximumSize, at: 0, path)
        if EncryptedFileHeader.hasMagic(first) {
            let file = try EncryptedFile.open(at: path, key: key, writable: false)
            file.close()
            return
        }
        let total = Int(st.st_size)
        let replacement = try ReplacementFile(replacing: path, permissions: st.st_mode & 0o7777)
        do throws(FileProtectionError) {
            try FileOwnership.setOwner(owner, of: replacement.fd, path: path)
            let file = try EncryptedFile.create(adopting: dup(replacement.fd), path: path, for: owner, key: key)
            let c = EncryptedFile.chunkSize
            var offset = 0
            while offset < total {
                let piece = try SystemCall.read(source, count: min(c, total - offset), at: offset, path)
                guard piece.count == min(c, total - offset) else { throw .invalidArgument("\(path): changed size while being encrypted") }
                try file.append(piece, total: total)
                offset += piece.count
            }
            guard try SystemCall.read(source, count: 1, at: total, path).isEmpty else {
                throw .invalidArgument("\(path): grew while being encrypted")
            }
            file.close()
            try replacement.commit()
        } catch {
            replacement.abandon()
            throw error
        }
    }

    /// Decrypts the file at `path` in place, or into a new file at `destination`: an encrypted
    /// file under its owner's key, or a document from an `encrypted` Open-in under the key of the
    /// account it names. The owner attribute stays with the plaintext (a decrypted file is still
    /// the account's, and a wipe still removes it); an Open-in document gets its key id as owner
    /// only if it had none. A plain file is left as it is, and no copy is made.
    public static func decryptFile(at path: String, key: ProtectionKey, to destination: String? = nil) throws(FileProtectionError) {
        guard let format = try encryptionFormat(ofFileAt: path) else { return }
        let source = try SystemCall.open(path, O_RDONLY)
        defer { close(source) }
        let st = try SystemCall.requireRegular(source, path)
        let target = destination ?? path
        let replacement = try ReplacementFile(replacing: target, permissions: st.st_mode & 0o7777)
        do throws(FileProtectionError) {
            var owner = (try? FileOwnership.owner(of: source, path: path)) ?? .nobody
            switch format {
            case .encryptedFile:
                let file = try EncryptedFile.open(adopting: dup(source), path: path, key: key, writable: false)
                defer { file.close() }
                var offset = 0
                while offset < file.size {
                    let piece = try file.read(at: offset, count: EncryptedFile.chunkSize)
                    try SystemCall.write(replacement.fd, piece, at: offset, target)
                    offset += piece.count
                }
            case .openInDocument(let keyID):
                do { try DocumentCipher.open(input: FileDescriptor(rawValue: source), into: FileDescriptor(rawValue: replacement.fd), key: key.key) } catch {
                    throw .undecryptableDocument(path: path, detail: "\(error)")
                }
                if owner.isNobody { owner = DataOwner(uncheckedUPN: "", objectID: keyID) }
            }
            try FileOwnership.setOwner(owner, of: replacement.fd, path: target)
            try replacement.commit()
        } catch {
            replacement.abandon()
            throw error
        }
    }
}

extension EncryptedFile {
    /// Appends a chunk while encrypting a file of `total` bytes: sealed once, already knowing
    /// whether it is the last, unlike `write` which would re-seal the previous last chunk.
    func append(_ piece: [UInt8], total: Int) throws(FileProtectionError) {
        let k = size / Self.chunkSize
        guard size % Self.chunkSize == 0, piece.count <= Self.chunkSize else {
            throw .invalidArgument("\(path): append at \(size), not a chunk boundary")
        }
        try seal(k, piece, last: k == Self.lastIndex(total))
        size += piece.count
    }
}
#endif
