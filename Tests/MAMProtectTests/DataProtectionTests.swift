import Crypto
import Foundation
import MAMProtect
import Testing

@Suite("Protected data: protect, tag, unprotect, protectionInfo")
struct DataProtectionTests {
    let alice = Fixture.alice, key = Fixture.aliceKey

    static let sizes = [0, 1, 4096, 65_535, 65_536, 65_537, 131_071, 131_072, 131_073, 16 << 20]

    @Test("a managed owner's bytes round-trip at every chunk boundary", arguments: sizes)
    func roundTrip(size: Int) throws {
        let plain = Fixture.bytes(size, seed: UInt64(size))
        let sealed = try DataProtection.protect(plain, for: alice, key: key)
        #expect(sealed.count > plain.count)
        if size >= 32 { #expect(sealed.suffix(size).elementsEqual(plain) == false, "the plaintext is encrypted, not copied") }
        #expect(try DataProtection.unprotect(sealed, key: key) == plain)
        #expect(try DataProtection.unprotect(Data(sealed), key: key) == plain)
    }

    @Test func anAccountsProtectionIsTheSameFormat() throws {
        let account = try AccountProtection(owner: alice, key: key)
        for size in [0, 1, 65_536, 65_537] {
            let plain = Fixture.bytes(size)
            let sealed = try account.protect(plain)
            #expect(try DataProtection.unprotect(sealed, key: key) == plain)
            #expect(try account.unprotect(sealed) == plain)
            #expect(try DataProtection.protectionInfo(of: sealed) == DataProtectionInfo(owner: alice, isEncrypted: true))
            #expect(try account.unprotect(DataProtection.protect(plain, for: alice, key: key)) == plain)
        }
        #expect(throws: DataProtectionError.self) { try AccountProtection(owner: .nobody, key: key) }
    }

    @Test func theOwnerIsReadWithoutTheKey() throws {
        let sealed = try DataProtection.protect(Array("quarterly numbers".utf8), for: alice, key: key)
        #expect(try DataProtection.protectionInfo(of: sealed) == DataProtectionInfo(owner: alice, isEncrypted: true))
    }

    @Test func twoProtectsOfTheSameBytesDiffer() throws {
        let plain = Fixture.bytes(100)
        #expect(try DataProtection.protect(plain, for: alice, key: key) != DataProtection.protect(plain, for: alice, key: key))
    }

    @Test func stringsRoundTripAsUTF8InTheSameFormat() throws {
        let text = "Grüße, 数据 🔐"
        let sealed = try DataProtection.protect(text, for: alice, key: key)
        #expect(try DataProtection.unprotectText(sealed, key: key) == text)
        #expect(try DataProtection.unprotect(sealed, key: key) == Array(text.utf8))
        let base64 = try DataProtection.protectString(text, for: alice, key: key)
        #expect(try DataProtection.unprotectString(base64, key: key) == text)
        #expect(try DataProtection.protectionInfo(ofString: base64)?.owner == alice)
        #expect(try DataProtection.unprotectString("", key: key) == "")
    }

    @Test func stringsThatWereNeverProtectedComeBackUnchanged() throws {
        for text in ["plain text", "", "aGVsbG8=", "not base64 at all!"] {
            #expect(try DataProtection.unprotectString(text, key: nil) == text)
            #expect(try DataProtection.protectionInfo(ofString: text) == nil)
        }
    }

    @Test("data that was never protected comes back unchanged", arguments: [
        [], [0x89], Array("MAMD".utf8), [0x89, 0x4d, 0x41, 0x4d, 0x44], Array("hello".utf8), Fixture.bytes(70_000),
    ] as [[UInt8]])
    func neverProtectedPassesThrough(plain: [UInt8]) throws {
        #expect(try DataProtection.unprotect(plain, key: key) == plain)
        #expect(try DataProtection.unprotect(plain, key: nil) == plain)
        #expect(try DataProtection.protectionInfo(of: plain) == nil)
    }

    @Test func anUnmanagedOwnersDataIsTaggedNotEncrypted() throws {
        // Seed 000 and 002 (multi-identity, "protect"): for an unmanaged user the SDK adds a
        // header encoding the identity and leaves the data unencrypted.
        let plain = Array("personal shopping list".utf8)
        let tagged = DataProtection.tag(plain, for: Fixture.personal)
        #expect(tagged.suffix(plain.count).elementsEqual(plain))
        #expect(try DataProtection.protectionInfo(of: tagged) == DataProtectionInfo(owner: Fixture.personal, isEncrypted: false))
        #expect(try DataProtection.unprotect(tagged, key: nil) == plain)
        #expect(try DataProtection.unprotect(tagged, key: Fixture.bobKey) == plain)
        let nobody = DataProtection.tag("", for: .nobody)
        #expect(try DataProtection.protectionInfo(of: nobody)?.owner == .nobody)
        #expect(try DataProtection.unprotectText(nobody, key: nil) == "")
    }

    @Test func encryptingForNobodyIsRefused() {
        #expect(throws: DataProtectionError.self) { try DataProtection.protect([1, 2, 3], for: .nobody, key: key) }
    }

    @Test func theWrongAccountsKeyIsNamedAsSuch() throws {
        let sealed = try DataProtection.protect(Fixture.bytes(1000), for: alice, key: key)
        let error = #expect(throws: DataProtectionError.self) { try DataProtection.unprotect(sealed, key: Fixture.bobKey) }
        #expect(error == .wrongKey(owner: alice))
        #expect(error?.code == .failedToDecryptData)
        #expect(throws: DataProtectionError.keyRequired(owner: alice)) { try DataProtection.unprotect(sealed, key: nil) }
    }

    @Test func aKeyOfTheWrongSizeIsRefused() {
        #expect(throws: DataProtectionError.self) { try ProtectionKey(SymmetricKey(size: .bits128)) }
        #expect(throws: DataProtectionError.self) { try DataProtection.unprotect([0x89], key: SymmetricKey(size: .bits192)) }
    }

    @Test func everyHeaderByteAndACiphertextByteAreProtected() throws {
        let plain = Fixture.bytes(70_000)
        let sealed = try DataProtection.protect(plain, for: alice, key: key)
        let headerLength = 11 + alice.objectID.utf8.count + alice.upn.utf8.count + 16 + 12
        var positions = Array(0..<headerLength)
        positions += [headerLength, headerLength + 1000, headerLength + 65_536 + 16 + 5, sealed.count - 1]
        for i in positions {
            var changed = sealed
            changed[i] ^= 0x01
            do {
                let out = try DataProtection.unprotect(changed) { $0.isSameAccount(as: alice) ? key : nil }
                // Only a changed magic can pass: the bytes are then not protected data at all,
                // and come back as they are, still ciphertext.
                #expect(i < 6 && out == changed, "byte \(i) changed and unprotect returned \(out.count) bytes")
            } catch {
                #expect(error.code == .failedToDecryptData, "byte \(i): \(error)")
            }
        }
    }

    @Test func withASingleKeyTheModeByteIsTheOneUnauthenticatedField() throws {
        // Tagged data carries no key, so nothing authenticates it: turning "encrypted" into
        // "tagged" yields the ciphertext as if it were a personal buffer. The owner-aware
        // variant refuses that (alice has a key); the single-key one cannot know.
        var changed = try DataProtection.protect(Fixture.bytes(100), for: alice, key: key)
        changed[7] = 0
        #expect(try DataProtection.protectionInfo(of: changed) == DataProtectionInfo(owner: alice, isEncrypted: false))
        let error = #expect(throws: DataProtectionError.self) { try DataProtection.unprotect(changed) { _ in key } }
        #expect(error?.code == .failedToDecryptData)
        #expect(try DataProtection.unprotect(changed, key: key).count == 16 + 12 + 100 + 16, "key check, nonce base, ciphertext and tag")
    }

    @Test func theOwnerAwareVariantTakesTheOwnersKey() throws {
        let forAlice = try DataProtection.protect(Fixture.bytes(10), for: alice, key: key)
        let forBob = try DataProtection.protect(Fixture.bytes(20), for: Fixture.bob, key: Fixture.bobKey)
        let keys = { (owner: DataOwner) in owner.isSameAccount(as: alice) ? key : owner.isSameAccount(as: Fixture.bob) ? Fixture.bobKey : nil }
        #expect(try DataProtection.unprotect(forAlice, keyFor: keys) == Fixture.bytes(10))
        #expect(try DataProtection.unprotect(forBob, keyFor: keys) == Fixture.bytes(20))
        #expect(try DataProtection.unprotect(DataProtection.tag([7], for: Fixture.personal), keyFor: keys) == [7])
        #expect(throws: DataProtectionError.keyRequired(owner: alice)) { try DataProtection.unprotect(forAlice) { _ in nil } }
    }

    @Test func changingTheOwnerIsDetected() throws {
        let sealed = try DataProtection.protect(Fixture.bytes(500), for: alice, key: key)
        // Rewrite "alice" to "alica": the same lengths, so only authentication can catch it.
        var changed = sealed
        let at = 11 + alice.objectID.utf8.count + 4
        changed[at] = UInt8(ascii: "a")
        #expect(try DataProtection.protectionInfo(of: changed)?.owner.upn == "alica@contoso.com")
        #expect(throws: DataProtectionError.self) { try DataProtection.unprotect(changed, key: key) }
    }

    @Test func cuttingAtAnyLengthIsDetected() throws {
        let sealed = try DataProtection.protect(Fixture.bytes(2 * 65_536 + 10), for: alice, key: key)
        let chunkEnds = [sealed.count - 10 - 16, sealed.count - 10 - 16 - 65_552]
        for length in Array(6..<120) + [sealed.count - 1, sealed.count - 16, sealed.count - 17] + chunkEnds {
            let error = #expect(throws: DataProtectionError.self, "cut to \(length) bytes") {
                try DataProtection.unprotect(Array(sealed.prefix(length)), key: key)
            }
            #expect(error?.code == .failedToDecryptData)
        }
        // Dropping the whole last chunk leaves a valid-looking run of full chunks; the new last
        // one was sealed as "not last".
        #expect(throws: DataProtectionError.self) { try DataProtection.unprotect(Array(sealed.prefix(sealed.count - 26)), key: key) }
    }

    @Test func chunksCannotBeSwapped() throws {
        let sealed = try DataProtection.protect(Fixture.bytes(3 * 65_536), for: alice, key: key)
        let start = sealed.count - 3 * 65_552, record = 65_552
        var swapped = Array(sealed[0..<start])
        swapped += sealed[start + record..<start + 2 * record]
        swapped += sealed[start..<start + record]
        swapped += sealed[(start + 2 * record)...]
        #expect(throws: DataProtectionError.self) { try DataProtection.unprotect(swapped, key: key) }
    }

    @Test func hostileHeadersAreRefusedNotTrusted() throws {
        let magic: [UInt8] = [0x89, 0x4d, 0x41, 0x4d, 0x44, 0x0a]
        let cases: [[UInt8]] = [
            magic + [2, 0, 0, 0, 0],                                   // unknown version
            magic + [1, 7, 0, 0, 0],                                   // unknown mode
            magic + [1, 0, 200, 0, 0] + Array(repeating: 0x41, count: 200),  // object id too long
            magic + [1, 0, 0, 0xff, 0xff],                             // UPN length 65535
            magic + [1, 0, 0, 2, 0, 0xc3, 0x28],                       // UPN not UTF-8
            magic + [1, 0, 0, 3, 0, 0x61, 0, 0x62],                    // NUL in the UPN
            magic + [1, 0, 2, 0, 0, 0x0a, 0x0d],                       // control characters
            magic + [1, 1, 0, 1, 0, 0x61] + Array(repeating: 0, count: 20),  // encrypted, header cut
        ]
        for bytes in cases {
            #expect(throws: DataProtectionError.self, "\(bytes.prefix(16))") { try DataProtection.unprotect(bytes, key: key) }
            #expect(throws: DataProtectionError.self) { try DataProtection.protectionInfo(of: bytes) }
        }
    }

    @Test func ownersAreBounded() {
        #expect(throws: DataProtectionError.self) { try DataOwner(upn: String(repeating: "a", count: 257), objectID: "x") }
        #expect(throws: DataProtectionError.self) { try DataOwner(upn: "a@b", objectID: String(repeating: "0", count: 129)) }
        #expect(throws: DataProtectionError.self) { try DataOwner(upn: "a\u{0}@b", objectID: "") }
        #expect(throws: DataProtectionError.self) { try DataOwner(upn: "a@b\n", objectID: "") }
        #expect(throws: Never.self) { try DataOwner(upn: String(repeating: "a", count: 256), objectID: String(repeating: "0", count: 128)) }
    }

    @Test func accountsCompareByObjectIDThenUPNIgnoringCase() throws {
        let upper = try DataOwner(upn: "ALICE@CONTOSO.COM", objectID: alice.objectID.uppercased())
        #expect(upper.isSameAccount(as: alice))
        #expect(try DataOwner(upn: "alice@contoso.com", objectID: "").isSameAccount(as: alice))
        #expect(try !DataOwner(upn: "alice@contoso.com", objectID: "other").isSameAccount(as: alice))
        #expect(!alice.isSameAccount(as: Fixture.bob))
        #expect(!DataOwner.nobody.isSameAccount(as: .nobody))
    }
}
