import Foundation

/// Strings are protected as their UTF-8 bytes, in the same format. The SDK's string variants
/// hand out base64 text, so a protected string can live where only text fits; those are
/// `protectString` and `unprotectString`.
extension DataProtection {
    public static func protect(_ text: String, for owner: DataOwner, key: ProtectionKey) throws(DataProtectionError) -> [UInt8] {
        try protect(Array(text.utf8), for: owner, key: key)
    }

    public static func tag(_ text: String, for owner: DataOwner) -> [UInt8] {
        tag(Array(text.utf8), for: owner)
    }

    /// The text that `protect(_: String, …)` or `tag(_: String, …)` was given; bytes that were
    /// never protected are read as UTF-8 as they are.
    public static func unprotectText(_ data: some ContiguousBytes, key: ProtectionKey?) throws(DataProtectionError) -> String {
        let plain = try unprotect(data, key: key)
        guard let text = String(validating: plain, as: UTF8.self) else {
            throw .notText("the unprotected data (\(plain.count) bytes) is not UTF-8 text")
        }
        return text
    }

    /// `protect` as base64 text, like the SDK's `protectString`.
    public static func protectString(_ text: String, for owner: DataOwner, key: ProtectionKey) throws(DataProtectionError) -> String {
        Data(try protect(text, for: owner, key: key)).base64EncodedString()
    }

    /// The text inside what `protectString` made. A string that is not base64 of protected data
    /// comes back unchanged, as the SDK's `unprotectString` does.
    public static func unprotectString(_ text: String, key: ProtectionKey?) throws(DataProtectionError) -> String {
        guard let bytes = Data(base64Encoded: text), try protectionInfo(of: bytes) != nil else { return text }
        return try unprotectText(bytes, key: key)
    }

    /// The owner of what `protectString` made; nil for any other string.
    public static func protectionInfo(ofString text: String) throws(DataProtectionError) -> DataProtectionInfo? {
        guard let bytes = Data(base64Encoded: text) else { return nil }
        return try protectionInfo(of: bytes)
    }
}
