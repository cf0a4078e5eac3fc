/// The written form of a tenant user's credential (`TenantUser.credential`), checked without
/// cryptography so that the tenant loader stays pure; MAMCatalog's `Credential` makes and
/// verifies it: `pbkdf2-sha256:<rounds>:<salt hex>:<derived key hex>`, PBKDF2 with
/// HMAC-SHA-256, its parameters stored with the key.
public enum CredentialFormat {
    public static let scheme = "pbkdf2-sha256"
    /// Fewer rounds is a fast hash again; more keeps a sign-in's worker for minutes.
    public static let rounds = 100_000...10_000_000

    /// The parts of a well-formed credential, or why it is not one.
    public static func parse(_ stored: String) -> Result<(rounds: Int, salt: [UInt8], key: [UInt8]), Problem> {
        let parts = stored.split(separator: ":", omittingEmptySubsequences: false)
        if parts.first?.lowercased() == "sha256" {
            return .failure(Problem("\"sha256:…\" is the old credential format (one salted SHA-256, too fast to resist guessing); "
                                    + "make a new one with mamlaunch credential"))
        }
        guard parts.count == 4, parts[0] == scheme else {
            return .failure(Problem("a credential is \"\(scheme):<rounds>:<salt hex>:<64 hex digits>\" (mamlaunch credential makes one)"))
        }
        guard let n = Int(parts[1]), rounds.contains(n) else {
            return .failure(Problem("the rounds (\(parts[1])) must be a number from \(rounds.lowerBound) to \(rounds.upperBound)"))
        }
        guard let salt = bytes(parts[2]), salt.count >= 16 else { return .failure(Problem("the salt must be at least 16 bytes, in hex digits")) }
        guard let key = bytes(parts[3]), key.count == 32 else { return .failure(Problem("the derived key must be 64 hex digits")) }
        return .success((n, salt, key))
    }

    public struct Problem: Error, Sendable, Equatable {
        public var message: String
        init(_ m: String) { message = m }
    }

    static func bytes(_ text: Substring) -> [UInt8]? {
        guard !text.isEmpty, text.count % 2 == 0 else { return nil }
        // Hex digits only: `UInt8(_:radix:)` also takes a sign, and would read "+f" as 15.
        guard text.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || (($0 | 0x20) >= 0x61 && ($0 | 0x20) <= 0x66) }) else { return nil }
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
