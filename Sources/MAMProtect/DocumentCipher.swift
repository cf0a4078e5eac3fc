import Crypto
import Foundation

/// The byte format of a document the broker delivers with an `encrypted` outcome
/// (docs/PROTOCOL.md, "Encrypted documents"; what MAMKit protects itself is in
/// docs/PROTECTION.md): AES-256-GCM in chunks, so a large
/// document is sealed and opened piece by piece and no chunk can be dropped, reordered or
/// moved to another document unnoticed.
///
///     offset  size  field
///     0       4     magic "MAMP"
///     4       1     version (1)
///     5       1     algorithm (1 = AES-256-GCM)
///     6       4     chunk size, u32 little-endian (65536)
///     10      2     key id length n, u16 little-endian
///     12      n     key id: the owning account's object id (UTF-8)
///     12+n    8     nonce prefix (random per document)
///     20+n    …     chunks: ciphertext (chunk size, the last one shorter or empty) + 16-byte tag
///
/// Chunk i's nonce is the prefix followed by i as a u32 big-endian; its additional data is the
/// whole header, i as a u32 big-endian, and 1 for the last chunk or 0 for the others.
public enum DocumentCipher {
    public static let magic: [UInt8] = Array("MAMP".utf8)
    public static let chunkSize = 65_536
    static let tagSize = 16

    public struct Failure: Error, CustomStringConvertible, Equatable {
        public var description: String
        init(_ d: String) { description = d }
    }

    /// A fresh 256-bit key.
    public static func newKey() -> [UInt8] {
        SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
    }

    public static func header(keyID: String, noncePrefix: [UInt8]) -> [UInt8] {
        let id = Array(keyID.utf8)
        return magic + [1, 1] + le32(UInt32(chunkSize)) + [UInt8(id.count & 0xff), UInt8(id.count >> 8)] + id + noncePrefix
    }

    /// Encrypts `plaintext` under `key` for the account named by `keyID`.
    public static func seal(_ plaintext: UnsafeRawBufferPointer, key: [UInt8], keyID: String) throws -> [UInt8] {
        guard key.count == 32 else { throw Failure("a key is 32 bytes, not \(key.count)") }
        guard keyID.utf8.count <= 1024 else { throw Failure("key id longer than 1024 bytes") }
        let symmetric = SymmetricKey(data: key)
        var prefix = [UInt8](repeating: 0, count: 8)
        var rng = SystemRandomNumberGenerator()
        for i in prefix.indices { prefix[i] = UInt8.random(in: 0...255, using: &rng) }
        let head = header(keyID: keyID, noncePrefix: prefix)
        let count = max(1, (plaintext.count + chunkSize - 1) / chunkSize)
        var out = head
        out.reserveCapacity(head.count + plaintext.count + count * tagSize)
        for i in 0..<count {
            let start = i * chunkSize
            let chunk = UnsafeRawBufferPointer(rebasing: plaintext[start..<min(plaintext.count, start + chunkSize)])
            let box = try AES.GCM.seal(chunk, using: symmetric, nonce: try nonce(prefix, i),
                                       authenticating: additional(head, i, last: i == count - 1))
            out += box.ciphertext
            out += box.tag
        }
        return out
    }

    /// The key id a sealed document names (to find the key), without opening it.
    public static func keyID(of sealed: [UInt8]) throws -> String {
        try parseHeader(sealed).keyID
    }

    /// Decrypts what `seal` made; any change to any byte fails.
    public static func open(_ sealed: [UInt8], key: [UInt8]) throws -> [UInt8] {
        let h = try parseHeader(sealed)
        let symmetric = SymmetricKey(data: key)
        let head = Array(sealed[0..<h.length])
        var body = sealed[h.length...]
        var out: [UInt8] = []
        var i = 0
        repeat {
            let n = min(body.count, chunkSize + tagSize)
            guard n >= tagSize else { throw Failure("chunk \(i) is \(n) bytes, shorter than its tag") }
            let last = body.count <= chunkSize + tagSize
            let piece = body.prefix(n)
            let box = try AES.GCM.SealedBox(nonce: try nonce(h.prefix, i), ciphertext: piece.dropLast(tagSize), tag: piece.suffix(tagSize))
            do {
                out += try AES.GCM.open(box, using: symmetric, authenticating: additional(head, i, last: last))
            } catch {
                throw Failure("chunk \(i) does not authenticate: wrong key, or the document was changed")
            }
            body = body.dropFirst(n)
            i += 1
        } while !body.isEmpty
        return out
    }

    struct Header { var keyID: String; var prefix: [UInt8]; var length: Int }

    static func parseHeader(_ b: [UInt8]) throws -> Header {
        guard b.count >= 20, Array(b[0..<4]) == magic else { throw Failure("not an encrypted MAMLab document (no \"MAMP\" at byte 0)") }
        guard b[4] == 1 else { throw Failure("byte 4: version \(b[4]); this side reads 1") }
        guard b[5] == 1 else { throw Failure("byte 5: algorithm \(b[5]); this side reads 1 (AES-256-GCM)") }
        let size = Int(b[6]) | Int(b[7]) << 8 | Int(b[8]) << 16 | Int(b[9]) << 24
        guard size == chunkSize else { throw Failure("bytes 6-9: chunk size \(size); this side reads \(chunkSize)") }
        let n = Int(b[10]) | Int(b[11]) << 8
        guard b.count >= 20 + n, let id = String(validating: b[12..<12 + n], as: UTF8.self) else {
            throw Failure("bytes 12-\(11 + n): the key id is cut short or not UTF-8")
        }
        return Header(keyID: id, prefix: Array(b[12 + n..<20 + n]), length: 20 + n)
    }

    static func nonce(_ prefix: [UInt8], _ i: Int) throws -> AES.GCM.Nonce {
        try AES.GCM.Nonce(data: prefix + be32(UInt32(i)))
    }

    static func additional(_ head: [UInt8], _ i: Int, last: Bool) -> [UInt8] {
        head + be32(UInt32(i)) + [last ? 1 : 0]
    }

    static func le32(_ v: UInt32) -> [UInt8] { [UInt8(v & 0xff), UInt8((v >> 8) & 0xff), UInt8((v >> 16) & 0xff), UInt8(v >> 24)] }
    static func be32(_ v: UInt32) -> [UInt8] { le32(v).reversed() }
}

#if canImport(Glibc)
import Glibc
import SystemPackage

extension DocumentCipher {
    /// `seal`, streaming: reads `size` bytes of `input` from offset 0 and writes the encrypted
    /// document to `output`, one chunk at a time, so a large document costs one chunk of memory.
    /// Both are borrowed: left open, their owner's to close.
    public static func seal(input: FileDescriptor, size: Int, into output: FileDescriptor, key: [UInt8], keyID: String) throws {
        let input = input.rawValue, output = output.rawValue
        guard key.count == 32 else { throw Failure("a key is 32 bytes, not \(key.count)") }
        let symmetric = SymmetricKey(data: key)
        var prefix = [UInt8](repeating: 0, count: 8)
        var rng = SystemRandomNumberGenerator()
        for i in prefix.indices { prefix[i] = UInt8.random(in: 0...255, using: &rng) }
        let head = header(keyID: keyID, noncePrefix: prefix)
        try writeAll(output, head)
        let count = max(1, (size + chunkSize - 1) / chunkSize)
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        for i in 0..<count {
            let want = min(chunkSize, size - i * chunkSize)
            var got = 0
            while got < want {
                let n = buffer.withUnsafeMutableBytes { pread(input, $0.baseAddress! + got, want - got, off_t(i * chunkSize + got)) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { throw Failure("the document ended at byte \(i * chunkSize + got) of \(size)") }
                got += n
            }
            let box = try buffer.withUnsafeBytes { raw in
                try AES.GCM.seal(UnsafeRawBufferPointer(rebasing: raw[0..<want]), using: symmetric, nonce: try nonce(prefix, i),
                                 authenticating: additional(head, i, last: i == count - 1))
            }
            try writeAll(output, Array(box.ciphertext) + Array(box.tag))
        }
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + done, bytes.count - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw Failure("writing the encrypted document failed: \(String(cString: strerror(errno)))") }
            done += n
        }
    }
}
#endif
