import MAMPolicy
import MAMWire

/// `IntuneMAMDataProtectionManager` (MAMProtect does the cryptography; the kit picks the
/// account and fetches its key from the broker).
public struct DataProtection: Sendable {
    let kit: Kit
}

extension Kit {
    /// Opens a document the broker encrypted, when the kit holds the key it names.
    func openCiphertext(_ bytes: [UInt8]) async -> [UInt8]? { nil }
}
