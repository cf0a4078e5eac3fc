/// The SDK's file-protection status codes (IntuneMAMFileProtectionStatusCode).
public enum FileProtectionStatusCode: Int, Sendable {
    case applicationNotManaged = 100
    case invalidArguments = 101
    case failedToEncryptFile = 102
    case failedToDecryptFile = 103
    case fileNotFound = 104
    case operationOnDirectory = 105
    case unmanagedIdentity = 106
    case internalError = 107
}

/// Why a file operation failed; each case names the path and maps to the SDK's status code.
public enum FileProtectionError: Error, Sendable, Equatable, CustomStringConvertible {
    case fileNotFound(path: String)
    case operationOnDirectory(path: String)
    /// The path's last component is a symbolic link, which file protection never follows.
    case symbolicLink(path: String)
    /// Not a regular file (a device, FIFO or socket).
    case notRegularFile(path: String)
    /// The owner attribute holds something this side did not write.
    case invalidOwnerAttribute(path: String, detail: String)
    /// Encrypting needs a managed owner; `nobody` has no key.
    case unmanagedIdentity(path: String)
    /// The encrypted file's header or a chunk failed (wrong key, changed, cut short).
    case undecryptable(path: String, reason: DataProtectionError)
    /// A document in the broker's Open-in format failed to open.
    case undecryptableDocument(path: String, detail: String)
    /// An argument out of range (an offset, a size, a read-only handle written to).
    case invalidArgument(String)
    /// A system call failed.
    case system(call: String, path: String, errno: Int32)

    public var code: FileProtectionStatusCode {
        switch self {
        case .fileNotFound: .fileNotFound
        case .operationOnDirectory: .operationOnDirectory
        case .symbolicLink, .notRegularFile, .invalidArgument: .invalidArguments
        case .unmanagedIdentity: .unmanagedIdentity
        case .undecryptable, .undecryptableDocument: .failedToDecryptFile
        case .invalidOwnerAttribute, .system: .internalError
        }
    }

    public var description: String {
        let text: String
        switch self {
        case .fileNotFound(let p): text = "\(p): no such file"
        case .operationOnDirectory(let p): text = "\(p): is a directory"
        case .symbolicLink(let p): text = "\(p): is a symbolic link; file protection does not follow links"
        case .notRegularFile(let p): text = "\(p): not a regular file"
        case .invalidOwnerAttribute(let p, let d): text = "\(p): attribute \(FileOwnership.attributeName): \(d)"
        case .unmanagedIdentity(let p): text = "\(p): a file with no managed owner is not encrypted"
        case .undecryptable(let p, let r): text = "\(p): \(r.detail)"
        case .undecryptableDocument(let p, let d): text = "\(p): \(d)"
        case .invalidArgument(let d): text = d
        case .system(let call, let p, let e): text = "\(p): \(call): \(SystemCall.message(e))"
        }
        return "\(text) (file protection status \(code.rawValue))"
    }
}
