import CCryptoBoringSSL
import Crypto

/// AES-256-GCM over the chunks of protected data, on the BoringSSL that swift-crypto builds and
/// links in (its `CCryptoBoringSSL` module, from the version Package.resolved pins).
///
/// swift-crypto's own API costs a 4 KiB unprotect about 1.5× a bare open: its open with
/// additional data is generic over the data's type and not inlinable, a sealed box and the
/// returned `Data` each copy the bytes, and every chunk sets the key up anew. Here one context
/// (one key schedule) serves every chunk of a call, and each chunk is sealed or opened straight
/// between the caller's buffers, in the layout the format already has: ciphertext, then tag.
struct ChunkCipher: ~Copyable {
    private let context: UnsafeMutablePointer<EVP_AEAD_CTX>

    static let tagSize = 16

    /// Nil when BoringSSL refuses the key (only a key of the wrong size, which `ProtectionKey`
    /// already rules out).
    init?(key: SymmetricKey) {
        context = .allocate(capacity: 1)
        let rc = key.withUnsafeBytes { k in
            CCryptoBoringSSL_EVP_AEAD_CTX_init(context, CCryptoBoringSSL_EVP_aead_aes_256_gcm(), k.baseAddress, k.count, Self.tagSize, nil)
        }
        guard rc == 1 else {
            context.deallocate()
            return nil
        }
    }

    deinit {
        CCryptoBoringSSL_EVP_AEAD_CTX_cleanup(context)
        context.deallocate()
    }

    /// Seals `plain` into `out`, which must hold `plain.count + tagSize` bytes: ciphertext then
    /// tag. False when BoringSSL refuses (a length past its limits).
    func seal(_ plain: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer, nonce: UnsafeRawBufferPointer,
              additional: UnsafeRawBufferPointer) -> Bool {
        precondition(out.count >= plain.count + Self.tagSize)
        var written = 0
        let rc = CCryptoBoringSSL_EVP_AEAD_CTX_seal(context, out.baseAddress?.assumingMemoryBound(to: UInt8.self), &written, out.count,
                                                    nonce.baseAddress?.assumingMemoryBound(to: UInt8.self), nonce.count,
                                                    plain.baseAddress?.assumingMemoryBound(to: UInt8.self), plain.count,
                                                    additional.baseAddress?.assumingMemoryBound(to: UInt8.self), additional.count)
        return rc == 1 && written == plain.count + Self.tagSize
    }

    /// Opens `sealed` (ciphertext then tag) into `out`, which must hold `sealed.count - tagSize`
    /// bytes. False when it does not authenticate (the caller then discards `out`).
    func open(_ sealed: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer, nonce: UnsafeRawBufferPointer,
              additional: UnsafeRawBufferPointer) -> Bool {
        precondition(sealed.count >= Self.tagSize && out.count >= sealed.count - Self.tagSize)
        var written = 0
        let rc = CCryptoBoringSSL_EVP_AEAD_CTX_open(context, out.baseAddress?.assumingMemoryBound(to: UInt8.self), &written, out.count,
                                                    nonce.baseAddress?.assumingMemoryBound(to: UInt8.self), nonce.count,
                                                    sealed.baseAddress?.assumingMemoryBound(to: UInt8.self), sealed.count,
                                                    additional.baseAddress?.assumingMemoryBound(to: UInt8.self), additional.count)
        return rc == 1 && written == sealed.count - Self.tagSize
    }
}
