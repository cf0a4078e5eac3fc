/// The account that owns protected data or a file: its UPN and its Entra object id.
///
/// An owner is written into every protected buffer's header and every file's owner attribute,
/// where anyone may have changed it, so both fields are bounded and checked on the way in and on
/// the way out: UTF-8, no control characters, at most `maximumUPNLength` and
/// `maximumObjectIDLength` bytes. The empty owner (`""`, `""`) is "no user": personal data.
public struct DataOwner: Sendable, Hashable, CustomStringConvertible {
    public var upn: String
    public var objectID: String

    public static let maximumUPNLength = 256
    public static let maximumObjectIDLength = 128

    /// No user: data of a personal or unknown account.
    public static let nobody = DataOwner(uncheckedUPN: "", objectID: "")

    /// An owner from a UPN and an object id, either of which may be empty but not both unless
    /// this is `nobody`. Throws when a field is too long or holds a control character.
    public init(upn: String, objectID: String) throws(DataProtectionError) {
        try Self.check(upn, field: "UPN", limit: Self.maximumUPNLength)
        try Self.check(objectID, field: "object id", limit: Self.maximumObjectIDLength)
        self.upn = upn
        self.objectID = objectID
    }

    init(uncheckedUPN upn: String, objectID: String) {
        self.upn = upn
        self.objectID = objectID
    }

    /// True for `nobody`.
    public var isNobody: Bool { upn.isEmpty && objectID.isEmpty }

    /// Whether `other` names the same account: identities compare by object id when both know
    /// it, otherwise by UPN, case-insensitively either way. `nobody` is no account's owner.
    public func isSameAccount(as other: DataOwner) -> Bool {
        if isNobody || other.isNobody { return false }
        if !objectID.isEmpty && !other.objectID.isEmpty {
            return objectID.lowercased() == other.objectID.lowercased()
        }
        return !upn.isEmpty && upn.lowercased() == other.upn.lowercased()
    }

    public var description: String {
        isNobody ? "no user" : "\(upn.isEmpty ? "?" : upn) (\(objectID.isEmpty ? "no object id" : objectID))"
    }

    static func check(_ value: String, field: String, limit: Int) throws(DataProtectionError) {
        let count = value.utf8.count
        guard count <= limit else {
            throw .invalidOwner("the owner's \(field) is \(count) bytes; at most \(limit)")
        }
        if let bad = value.unicodeScalars.first(where: { $0.value < 0x20 || $0.value == 0x7f || (0x80..<0xa0).contains($0.value) }) {
            throw .invalidOwner("the owner's \(field) holds the control character U+\(String(bad.value, radix: 16, uppercase: true))")
        }
    }

    /// Decodes one field read from outside: bounded, UTF-8, no control characters.
    static func field(_ bytes: some Collection<UInt8>, named field: String, limit: Int) throws(DataProtectionError) -> String {
        guard bytes.count <= limit else {
            throw .malformedHeader("the owner's \(field) is \(bytes.count) bytes; at most \(limit)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .malformedHeader("the owner's \(field) is not UTF-8")
        }
        do { try check(text, field: field, limit: limit) } catch { throw .malformedHeader(error.detail) }
        return text
    }
}
