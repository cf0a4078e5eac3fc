import Crypto

/// A tenant user's credential at the emulated identity provider (`TenantUser.credential`):
/// `sha256:<salt hex>:<digest hex>`, the digest being SHA-256(salt ‖ password). Pure: the salt
/// comes in (`make`) or is read from the stored form (`matches`).
public enum Credential {
    /// The stored form for `password` under `salt` (mamlaunch credential draws the salt).
    public static func make(password: String, salt: [UInt8]) -> String {
        "sha256:" + hex(salt) + ":" + hex(digest(salt, password))
    }

    /// Whether `password` is the one `stored` was made from. The digests are compared in
    /// constant time (every byte, whatever differs first), so the time taken says nothing of
    /// how much of a guess was right.
    public static func matches(_ stored: String, password: String) -> Bool {
        let parts = stored.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "sha256", let salt = bytes(parts[1]), let expected = bytes(parts[2]), expected.count == 32 else {
            return false
        }
        let got = digest(salt, password)
        var difference: UInt8 = 0
        for i in 0..<32 { difference |= got[i] ^ expected[i] }
        return difference == 0
    }

    static func digest(_ salt: [UInt8], _ password: String) -> [UInt8] {
        var h = SHA256()
        h.update(data: salt)
        h.update(data: Array(password.utf8))
        return Array(h.finalize())
    }

    static func hex(_ b: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(b.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
    }

    static func bytes(_ text: Substring) -> [UInt8]? {
        guard text.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        var i = text.startIndex
        while i < text.endIndex {
            let j = text.index(i, offsetBy: 2)
            guard let b = UInt8(text[i..<j], radix: 16) else { return nil }
            out.append(b)
            i = j
        }
        return out
    }
}
