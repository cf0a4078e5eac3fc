import Crypto
import Foundation
import MAMProtect
import Testing

/// Protect and unprotect seal and open the chunks on BoringSSL directly (ChunkCipher), both
/// rewritten at once: a mistake made the same way on both sides (a nonce, the additional data)
/// would still round-trip while changing the format. These tests read and write the format
/// with swift-crypto's AES.GCM alone, as docs/PROTECTION.md lays it out, so data protected
/// before the rewrite opens after it and the other way round.
@Suite("Protected data: the format, read and written with a bare AES-GCM")
struct ProtectedFormatTests {
    let alice = Fixture.alice, key = Fixture.aliceKey

    static let sizes = [0, 1, 4096, 65_536, 65_537, 131_073]

    /// Header length for alice: 11 fixed bytes, the object id, the UPN, the key check, the nonce base.
    var headerLength: Int { 11 + alice.objectID.utf8.count + alice.upn.utf8.count + 16 + 12 }

    static func chunkNonce(_ base: ArraySlice<UInt8>, _ i: Int) throws -> AES.GCM.Nonce {
        var n = Array(base)
        for k in 0..<4 { n[8 + k] ^= UInt8(truncatingIfNeeded: i >> (8 * (3 - k))) }
        return try AES.GCM.Nonce(data: n)
    }

    static func additional(_ header: ArraySlice<UInt8>, _ i: Int, last: Bool) -> [UInt8] {
        Array(header) + [UInt8(truncatingIfNeeded: i >> 24), UInt8(truncatingIfNeeded: i >> 16),
                         UInt8(truncatingIfNeeded: i >> 8), UInt8(truncatingIfNeeded: i), last ? 1 : 0]
    }

    @Test("what protect writes opens chunk by chunk with AES.GCM.open", arguments: sizes)
    func protectWritesTheFormat(size: Int) throws {
        let plain = Fixture.bytes(size, seed: 7)
        let sealed = try DataProtection.protect(plain, for: alice, key: key)
        let header = sealed[0..<headerLength]
        let base = header.suffix(12)
        let body = Array(sealed[headerLength...])
        let chunks = max(1, (plain.count + 65_535) / 65_536)
        #expect(body.count == plain.count + 16 * chunks)
        var opened: [UInt8] = []
        for i in 0..<chunks {
            let start = i * 65_552, end = min(body.count, start + 65_552)
            let box = try AES.GCM.SealedBox(nonce: Self.chunkNonce(base, i), ciphertext: body[start..<end - 16], tag: body[end - 16..<end])
            opened += try AES.GCM.open(box, using: key.key, authenticating: Self.additional(header, i, last: i == chunks - 1))
        }
        #expect(opened == plain)
    }

    @Test("what AES.GCM.seal writes in the format, unprotect opens", arguments: sizes)
    func unprotectReadsTheFormat(size: Int) throws {
        let plain = Fixture.bytes(size, seed: 11)
        // The header of another protect of alice's, with a nonce base of our own.
        var header = Array(try DataProtection.protect([1], for: alice, key: key)[0..<headerLength])
        let base = (0..<12).map { UInt8($0 * 17 + 3) }
        header.replaceSubrange(headerLength - 12..<headerLength, with: base)
        let chunks = max(1, (plain.count + 65_535) / 65_536)
        var data = header
        for i in 0..<chunks {
            let piece = plain[min(plain.count, i * 65_536)..<min(plain.count, (i + 1) * 65_536)]
            let box = try AES.GCM.seal(piece, using: key.key, nonce: Self.chunkNonce(base[...], i),
                                       authenticating: Self.additional(header[...], i, last: i == chunks - 1))
            data += box.ciphertext
            data += box.tag
        }
        #expect(try DataProtection.unprotect(data, key: key) == plain)
        // The same bytes with the last-chunk flag bound as "not last" do not open.
        var wrong = header
        let box = try AES.GCM.seal(plain.prefix(65_536), using: key.key, nonce: Self.chunkNonce(base[...], 0),
                                   authenticating: Self.additional(header[...], 0, last: false))
        wrong += box.ciphertext
        wrong += box.tag
        #expect(throws: DataProtectionError.self) { try DataProtection.unprotect(wrong, key: key) }
    }
}
