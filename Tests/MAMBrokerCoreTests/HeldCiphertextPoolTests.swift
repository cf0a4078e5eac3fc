import CMAMWire
import Glibc
@testable import MAMBroker
import Testing

/// The device-wide pool of ciphertexts the broker holds for receivers: a few apps at their own
/// limit must not keep every other app from an encrypted share.
@Suite("Broker shell: the held-ciphertext pool is shared fairly")
struct HeldCiphertextPoolTests {
    /// A ciphertext as the broker makes it (a memfd), kept for `app`; returns the receiver's open.
    static func hold(_ pool: HeldCiphertexts, for app: String) throws -> Int32 {
        let fd = mam_memfd_sealable("ciphertext")
        try #require(fd >= 0)
        #expect(write(fd, "x", 1) == 1)
        let sent = pool.keep(fd, for: app)
        close(fd)
        return sent
    }

    @Test func appsAtTheirLimitDoNotFillThePoolForEveryone() throws {
        let pool = HeldCiphertexts(byteLimit: 1 << 20, countLimit: 4, totalLimit: 8)
        var receiverOpens: [Int32] = []
        defer { receiverOpens.forEach { close($0) } }
        // Two hoarders, each at its own limit, hold the whole pool and keep it.
        for hoarder in ["com.example.hoard1", "com.example.hoard2"] {
            for _ in 0..<4 {
                #expect(pool.refusal(for: hoarder, adding: 1) == nil)
                receiverOpens.append(try Self.hold(pool, for: hoarder))
            }
        }
        #expect(pool.refusal(for: "com.example.hoard1", adding: 1) != nil, "a hoarder at its limit got more")
        // An app holding nothing still gets its encrypted share.
        let quiet = "com.contoso.docs"
        #expect(pool.refusal(for: quiet, adding: 1) == nil, "the pool was full for an app that holds nothing")
        receiverOpens.append(try Self.hold(pool, for: quiet))
        #expect(pool.refusal(for: quiet, adding: 1) == nil)
        receiverOpens.append(try Self.hold(pool, for: quiet))
        // Up to its equal share (8 / 3 = 2), then the full pool refuses it too.
        let refusal = pool.refusal(for: quiet, adding: 1)
        #expect(refusal?.contains("its share is 2") == true, "\(refusal ?? "no refusal")")
        // What the hoarders let go of no longer counts.
        receiverOpens.prefix(4).forEach { close($0) }
        receiverOpens.removeFirst(4)
        #expect(pool.refusal(for: quiet, adding: 1) == nil)
    }
}
