import Crypto
import Foundation
import Glibc
import MAMProtect
import MAMTestSupport
import SystemPackage
import Testing

@Suite("Encrypted files: random access, tampering, in-place encryption")
struct EncryptedFileTests {
    let scratch = ScratchFolder()
    let key = Fixture.aliceKey
    static let headerLength = 15 + Fixture.alice.objectID.utf8.count + Fixture.alice.upn.utf8.count + 16 + 16
    static let record = 4096 + 28

    @Test("bytes written at chunk boundaries read back", arguments: [0, 1, 4095, 4096, 4097, 8191, 8192, 8193, 1 << 20])
    func roundTrip(size: Int) throws {
        let path = scratch.file("f")
        let plain = Fixture.bytes(size, seed: UInt64(size) + 7)
        let file = try EncryptedFile.create(at: path, for: Fixture.alice, key: key)
        try file.write(plain, at: 0)
        file.close()
        let again = try EncryptedFile.open(at: path, key: key, writable: false)
        #expect(again.size == size)
        #expect(again.owner == Fixture.alice)
        #expect(try again.read(at: 0, count: size + 10) == plain)
        let ondisk = scratch.read("f")
        #expect(!ondisk.isEmpty && ondisk.count >= Self.headerLength + 28)
        if size >= 64 { #expect(!ondisk.suffix(size).elementsEqual(plain.suffix(size))) }
        #expect(try FileOwnership.owner(ofFileAt: path) == Fixture.alice)
        #expect(try FileEncryption.encryptionFormat(ofFileAt: path) == .encryptedFile(owner: Fixture.alice))
    }

    /// A seeded property test: random writes, truncations and reads at random offsets, each
    /// checked against a plain array, with the file closed and reopened now and then.
    @Test("random writes and truncations match an in-memory model", arguments: [1, 2, 3, 4] as [UInt64])
    func randomAccessMatchesModel(seed: UInt64) throws {
        var g = SplitMix64(state: seed)
        let path = scratch.file("model-\(seed)")
        var file = try EncryptedFile.create(at: path, for: Fixture.alice, key: key)
        var model: [UInt8] = []
        for step in 0..<300 {
            let near = [0, 4096, 8192, 3 * 4096, model.count].randomElement(using: &g)! + Int.random(in: -3...3, using: &g)
            let offset = max(0, Bool.random(using: &g) ? near : Int.random(in: 0...(model.count + 5000), using: &g))
            switch Int.random(in: 0..<10, using: &g) {
            case 0..<6:
                let count = [0, 1, 7, 4095, 4096, 4097, 9000].randomElement(using: &g)!
                let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &g) }
                try file.write(bytes, at: offset)
                // Like pwrite, writing nothing past the end does not grow the file.
                if offset > model.count && count > 0 { model += [UInt8](repeating: 0, count: offset - model.count) }
                for (i, b) in bytes.enumerated() { if offset + i < model.count { model[offset + i] = b } else { model.append(b) } }
            case 6:
                let size = Int.random(in: 0...(model.count + 6000), using: &g)
                try file.truncate(to: size)
                if size < model.count { model.removeLast(model.count - size) } else { model += [UInt8](repeating: 0, count: size - model.count) }
            case 7:
                file.close()
                file = try EncryptedFile.open(at: path, key: key)
            default:
                let count = Int.random(in: 0...10_000, using: &g)
                let expected = offset < model.count ? Array(model[offset..<min(model.count, offset + count)]) : []
                let got = try file.read(at: offset, count: count)
                if got != expected {
                    let at = (0..<min(got.count, expected.count)).first { got[$0] != expected[$0] } ?? min(got.count, expected.count)
                    Issue.record("seed \(seed) step \(step): read \(count) at \(offset): \(got.count) bytes, \(expected.count) expected, first difference at \(at)")
                    return
                }
            }
            guard file.size == model.count else { Issue.record("seed \(seed) step \(step): size \(file.size), model \(model.count)"); return }
        }
        file.close()
        let last = try EncryptedFile.open(at: path, key: key, writable: false)
        #expect(try last.read(at: 0, count: model.count) == model)
    }

    @Test func sequentialReadsAndWritesFollowThePosition() throws {
        let file = try EncryptedFile.create(at: scratch.file("seq"), for: Fixture.alice, key: key)
        try file.write(Array("hello, ".utf8))
        try file.write(Array("world".utf8))
        file.position = 0
        #expect(try file.read(count: 5) == Array("hello".utf8))
        #expect(try file.read(count: 100) == Array(", world".utf8))
        #expect(try file.read(count: 100) == [])
    }

    @Test func aWriteReSealsOnlyTheChunksItTouches() throws {
        let path = scratch.file("touch")
        let file = try EncryptedFile.create(at: path, for: Fixture.alice, key: key)
        try file.write(Fixture.bytes(10 * 4096), at: 0)
        let before = scratch.read("touch")
        try file.write([1, 2, 3], at: 4 * 4096 + 100)
        let after = scratch.read("touch")
        #expect(before.count == after.count)
        for k in 0..<10 {
            let range = Self.headerLength + k * Self.record..<Self.headerLength + (k + 1) * Self.record
            #expect((before[range] == after[range]) == (k != 4), "chunk \(k)")
        }
        // Re-sealing draws a new nonce even when the plaintext is the same.
        try file.write([1, 2, 3], at: 4 * 4096 + 100)
        let nonceAt = Self.headerLength + 4 * Self.record
        #expect(scratch.read("touch")[nonceAt..<nonceAt + 12] != after[nonceAt..<nonceAt + 12])
    }

    func sealedFile(_ name: String, size: Int) throws -> (path: String, bytes: [UInt8]) {
        let path = scratch.file(name)
        let file = try EncryptedFile.create(at: path, for: Fixture.alice, key: key)
        try file.write(Fixture.bytes(size), at: 0)
        file.close()
        return (path, scratch.read(name))
    }

    /// Opens the file and reads all of it, so any failure surfaces.
    func readAll(_ path: String) throws -> [UInt8] {
        let file = try EncryptedFile.open(at: path, key: key, writable: false)
        return try file.read(at: 0, count: file.size)
    }

    @Test func everyHeaderByteAndCiphertextBytesAreProtected() throws {
        let (path, bytes) = try sealedFile("tamper", size: 3 * 4096 + 10)
        let positions = Array(0..<Self.headerLength) + [Self.headerLength, Self.headerLength + 12, Self.headerLength + Self.record + 500, bytes.count - 1]
        for i in positions {
            var changed = bytes
            changed[i] ^= 0x01
            _ = scratch.write("tamper", changed)
            let error = #expect(throws: FileProtectionError.self, "byte \(i)") { try readAll(path) }
            #expect(error?.code == .failedToDecryptFile, "byte \(i): \(String(describing: error))")
        }
    }

    @Test func cuttingOrExtendingTheFileIsDetected() throws {
        let (path, bytes) = try sealedFile("cut", size: 3 * 4096 + 10)
        let lengths = [0, 5, Self.headerLength - 1, Self.headerLength, Self.headerLength + 27,
                       Self.headerLength + Self.record, Self.headerLength + 2 * Self.record, Self.headerLength + 3 * Self.record,
                       bytes.count - 1, bytes.count - 10]
        for length in lengths {
            _ = scratch.write("cut", Array(bytes.prefix(length)))
            #expect(throws: FileProtectionError.self, "cut to \(length)") { try readAll(path) }
        }
        _ = scratch.write("cut", bytes + [0])
        #expect(throws: FileProtectionError.self) { try readAll(path) }
        _ = scratch.write("cut", bytes + Array(bytes.suffix(28 + 10)))
        #expect(throws: FileProtectionError.self) { try readAll(path) }
    }

    @Test func chunksCannotBeSwappedOrMovedBetweenFiles() throws {
        let (path, bytes) = try sealedFile("swap", size: 3 * 4096)
        let h = Self.headerLength, r = Self.record
        var swapped = Array(bytes[0..<h])
        swapped += bytes[h + r..<h + 2 * r]
        swapped += bytes[h..<h + r]
        swapped += bytes[(h + 2 * r)...]
        _ = scratch.write("swap", swapped)
        #expect(throws: FileProtectionError.self) { try readAll(path) }
        // The same plaintext, owner and key in another file: its chunk does not fit here (the
        // file id differs).
        let (_, other) = try sealedFile("other", size: 3 * 4096)
        var moved = bytes
        moved.replaceSubrange(h..<h + r, with: other[h..<h + r])
        _ = scratch.write("swap", moved)
        #expect(throws: FileProtectionError.self) { try readAll(path) }
    }

    @Test func theWrongKeyIsNamedBeforeAnyRead() throws {
        let (path, _) = try sealedFile("key", size: 100)
        let error = #expect(throws: FileProtectionError.self) { try EncryptedFile.open(at: path, key: Fixture.bobKey) }
        #expect(error == .undecryptable(path: path, reason: .wrongKey(owner: Fixture.alice)))
    }

    @Test func aReadOnlyHandleRefusesWrites() throws {
        let (path, _) = try sealedFile("ro", size: 100)
        let file = try EncryptedFile.open(at: path, key: key, writable: false)
        #expect(throws: FileProtectionError.self) { try file.write([1], at: 0) }
        #expect(throws: FileProtectionError.self) { try file.truncate(to: 0) }
    }

    @Test func encryptingAndDecryptingInPlaceKeepsTheBytesAndTheOwner() throws {
        for size in [0, 1, 4096, 4097, 1 << 20] {
            let plain = Fixture.bytes(size, seed: 99)
            let path = scratch.write("doc", plain)
            #expect(chmod(path, 0o640) == 0)
            #expect(try !FileEncryption.isFileEncrypted(at: path))
            try FileEncryption.encryptFile(at: path, for: Fixture.alice, key: key)
            #expect(try FileEncryption.isFileEncrypted(at: path))
            #expect(try FileOwnership.owner(ofFileAt: path) == Fixture.alice)
            #expect(try readAll(path) == plain)
            try FileEncryption.encryptFile(at: path, for: Fixture.alice, key: key)  // already encrypted: unchanged
            #expect(throws: FileProtectionError.self) { try FileEncryption.encryptFile(at: path, for: Fixture.alice, key: Fixture.bobKey) }
            #expect(throws: FileProtectionError.self) { try FileEncryption.decryptFile(at: path, key: Fixture.bobKey) }
            try FileEncryption.decryptFile(at: path, key: key)
            #expect(scratch.read("doc") == plain, "size \(size)")
            #expect(try FileOwnership.owner(ofFileAt: path) == Fixture.alice)
            var st = stat()
            stat(path, &st)
            #expect(st.st_mode & 0o777 == 0o640)
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.hasSuffix(".mamlab-tmp") }
        #expect(leftovers.isEmpty)
    }

    @Test func decryptingToACopyLeavesTheEncryptedFile() throws {
        let plain = Fixture.bytes(5000)
        let path = scratch.write("orig", plain)
        try FileEncryption.encryptFile(at: path, for: Fixture.alice, key: key)
        try FileEncryption.decryptFile(at: path, key: key, to: scratch.file("copy"))
        #expect(scratch.read("copy") == plain)
        #expect(try FileEncryption.isFileEncrypted(at: path))
        // A plain file is left as it is.
        let plainPath = scratch.write("plain", plain)
        try FileEncryption.decryptFile(at: plainPath, key: key)
        #expect(scratch.read("plain") == plain)
    }

    @Test func encryptingForNobodyIsAnUnmanagedIdentity() throws {
        let path = scratch.write("p", [1])
        let error = #expect(throws: FileProtectionError.self) { try FileEncryption.encryptFile(at: path, for: .nobody, key: key) }
        #expect(error?.code == .unmanagedIdentity)
    }

    @Test func aSymbolicLinkIsNeitherEncryptedNorOpened() throws {
        let target = scratch.write("t", [1, 2, 3])
        let link = scratch.file("l")
        #expect(symlink(target, link) == 0)
        #expect(throws: FileProtectionError.symbolicLink(path: link)) { try FileEncryption.encryptFile(at: link, for: Fixture.alice, key: key) }
        #expect(throws: FileProtectionError.symbolicLink(path: link)) { try EncryptedFile.create(at: link, for: Fixture.alice, key: key) }
        #expect(throws: FileProtectionError.symbolicLink(path: link)) { try EncryptedFile.open(at: link, key: key) }
        #expect(scratch.read("t") == [1, 2, 3])
    }

    @Test func anOpenInDocumentOpensWithTheAccountsKeyOnly() throws {
        let plain = Fixture.bytes(3 * 65_536 + 5)
        let sealed = try plain.withUnsafeBytes {
            try DocumentCipher.seal($0, key: key.key.withUnsafeBytes { Array($0) }, keyID: Fixture.alice.objectID)
        }
        let path = scratch.write("received.pdf", sealed)
        #expect(try FileEncryption.encryptionFormat(ofFileAt: path) == .openInDocument(keyID: Fixture.alice.objectID))
        let fd = try FileDescriptor.open(path, .readOnly)
        defer { try? fd.close() }
        #expect(try DocumentCipher.keyID(of: fd) == Fixture.alice.objectID)
        #expect(try DocumentCipher.open(input: fd, key: key.key) == plain)
        #expect(throws: DocumentCipher.Failure.self) { try DocumentCipher.open(input: fd, key: Fixture.bobKey.key) }
        #expect(throws: DocumentCipher.Failure.self) { try DocumentCipher.open(input: fd, key: SymmetricKey(size: .bits256)) }
        #expect(throws: FileProtectionError.self) { try FileEncryption.decryptFile(at: path, key: Fixture.bobKey) }
        #expect(scratch.read("received.pdf") == sealed, "a failed decrypt leaves the document")
        try FileEncryption.decryptFile(at: path, key: key)
        #expect(scratch.read("received.pdf") == plain)
        #expect(try FileOwnership.owner(ofFileAt: path).objectID == Fixture.alice.objectID)
    }

    @Test func aChangedOrCutOpenInDocumentFailsFromItsDescriptor() throws {
        let plain = Fixture.bytes(2 * 65_536)
        let sealed = try plain.withUnsafeBytes { try DocumentCipher.seal($0, key: key.key.withUnsafeBytes { Array($0) }, keyID: "k") }
        for changed in [Array(sealed.prefix(sealed.count - 65_552)), Array(sealed.dropLast()), sealed.enumerated().map { $0 == 100 ? $1 ^ 1 : $1 }] {
            let path = scratch.write("doc", changed)
            let fd = try FileDescriptor.open(path, .readOnly)
            #expect(throws: DocumentCipher.Failure.self) { try DocumentCipher.open(input: fd, key: key.key) }
            try fd.close()
        }
    }
}
