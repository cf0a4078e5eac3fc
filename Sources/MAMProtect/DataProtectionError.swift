/// The SDK's data-protection status codes (IntuneMAMDataProtectionStatusCode), so the kit can
/// report the number an app written for the real SDK expects.
public enum DataProtectionStatusCode: Int, Sendable {
    case applicationNotManaged = 100
    case invalidArguments = 101
    case failedToEncryptData = 102
    case failedToDecryptData = 103
    case dataNotProtected = 104
    case emptyData = 105
}

/// Why protecting or unprotecting failed. Each case maps to the SDK's status code; the cases
/// under `failedToDecryptData` say which attack or accident was detected.
public enum DataProtectionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The owner handed to `protect` is too long or holds a control character.
    case invalidOwner(String)
    /// The key is not 256 bits.
    case invalidKey(String)
    /// Sealing failed inside AES-GCM (should not happen with a valid key).
    case encryptionFailed(String)
    /// The header is not one this side writes: wrong version or mode, a field out of bounds.
    case malformedHeader(String)
    /// The data ends before its header or its last chunk does, or a chunk is missing.
    case truncated(String)
    /// The key given is not the one the data was sealed under (the header's key check differs).
    case wrongKey(owner: DataOwner)
    /// The key is right but a chunk does not authenticate: the header or the ciphertext changed.
    case tampered(String)
    /// The data is encrypted and no key was given for its owner.
    case keyRequired(owner: DataOwner)
    /// The data unprotected fine but is not the UTF-8 text a string variant promises.
    case notText(String)

    public var code: DataProtectionStatusCode {
        switch self {
        case .invalidOwner, .invalidKey: .invalidArguments
        case .encryptionFailed: .failedToEncryptData
        case .malformedHeader, .truncated, .wrongKey, .tampered, .keyRequired, .notText: .failedToDecryptData
        }
    }

    /// The detail alone, without the code.
    public var detail: String {
        switch self {
        case .invalidOwner(let d), .invalidKey(let d), .encryptionFailed(let d),
             .malformedHeader(let d), .truncated(let d), .tampered(let d), .notText(let d): d
        case .wrongKey(let owner): "the key given is not the one the data of \(owner) was sealed under"
        case .keyRequired(let owner): "the data is encrypted for \(owner) and no key was given"
        }
    }

    public var description: String { "\(detail) (data protection status \(code.rawValue))" }
}
