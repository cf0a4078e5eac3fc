import Crypto
import MAMPolicy
import _CryptoExtras

/// A tenant user's credential at the emulated identity provider (`TenantUser.credential`):
/// `pbkdf2-sha256:<rounds>:<salt hex>:<derived key hex>` (MAMPolicy's `CredentialFormat`),
/// deliberately slow so that a tenant file that leaks costs a guesser that much per guess, its
/// parameters stored with it so that they can be raised without breaking the credentials
/// already written. The first format, one salted SHA-256 (`sha256:…`), is refused. Pure: the
/// salt comes in (`make`) or is read from the stored form (`matches`).
public enum Credential {
    /// OWASP's figure for PBKDF2-HMAC-SHA256 (2023).
    public static let defaultRounds = 600_000

    /// The stored form for `password` under `salt` (mamlaunch credential draws the salt).
    public static func make(password: String, salt: [UInt8], rounds: Int = defaultRounds) -> String {
        "\(CredentialFormat.scheme):\(rounds):" + hex(salt) + ":" + hex(derive(password, salt, rounds))
    }

    /// Whether `password` is the one `stored` was made from. The derived keys are compared in
    /// constant time (every byte, whatever differs first), so the time taken says nothing of
    /// how much of a guess was right. Slow by design: the broker runs it on a worker, never on
    /// its loop.
    public static func matches(_ stored: String, password: String) -> Bool {
        guard case let .success((rounds, salt, expected)) = CredentialFormat.parse(stored) else { return false }
        let got = derive(password, salt, rounds)
        guard got.count == expected.count else { return false }
        var difference: UInt8 = 0
        for i in got.indices { difference |= got[i] ^ expected[i] }
        return difference == 0
    }

    static func derive(_ password: String, _ salt: [UInt8], _ rounds: Int) -> [UInt8] {
        let key = try? KDF.Insecure.PBKDF2.deriveKey(from: Array(password.utf8), salt: salt, using: .sha256, outputByteCount: 32,
                                                     unsafeUncheckedRounds: rounds)
        return key.map { $0.withUnsafeBytes { Array($0) } } ?? []
    }

    static func hex(_ b: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(b.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
    }
}
