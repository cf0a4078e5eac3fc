#if canImport(Glibc)
import Crypto
import Glibc
import SystemPackage

/// Opening a received document from its descriptor: what the kit does with an `encrypted`
/// Open-in, whose descriptor the broker hands over (docs/PROTOCOL.md, "Encrypted documents").
/// The descriptors are borrowed (swift-system's `FileDescriptor`): read or written during the
/// call and left open, their owner's to close.
extension DocumentCipher {
    /// The key id of the document `input`, read from its header without opening it.
    public static func keyID(of input: FileDescriptor) throws -> String {
        try parseHeader(readHeader(input.rawValue)).keyID
    }

    /// Opens the document `input` (read from offset 0 with pread, so the descriptor's position
    /// does not matter) under `key` and writes the plaintext to `output`, one chunk at a time.
    /// Any other key, or any changed, dropped or reordered chunk, fails before the chunk's
    /// plaintext is written; plaintext already written for earlier chunks stays, so write to a
    /// temporary file and keep it only on success.
    public static func open(input: FileDescriptor, into output: FileDescriptor, key: SymmetricKey) throws {
        try open(input: input.rawValue, key: key) { try writeAll(output.rawValue, $0) }
    }

    /// Opens the document `input` under `key` into memory.
    public static func open(input: FileDescriptor, key: SymmetricKey) throws -> [UInt8] {
        var out: [UInt8] = []
        try open(input: input.rawValue, key: key) { out += $0 }
        return out
    }

    /// `open(_:key:)` with the key as a `SymmetricKey`.
    public static func open(_ sealed: [UInt8], key: SymmetricKey) throws -> [UInt8] {
        try open(sealed, key: key.withUnsafeBytes { Array($0) })
    }

    static func open(input: Int32, key: SymmetricKey, chunk deliver: ([UInt8]) throws -> Void) throws {
        guard key.bitCount == 256 else { throw Failure("a key is 32 bytes, not \(key.bitCount / 8)") }
        var st = stat()
        guard fstat(input, &st) == 0 else { throw Failure("fstat: \(String(cString: strerror(errno)))") }
        let head = try readHeader(input)
        let h = try parseHeader(head)
        let header = Array(head[0..<h.length])
        let total = Int(st.st_size)
        var offset = h.length
        var i = 0
        repeat {
            let n = min(total - offset, chunkSize + tagSize)
            guard n >= tagSize else { throw Failure("chunk \(i) is \(max(0, n)) bytes, shorter than its tag") }
            let last = total - offset <= chunkSize + tagSize
            let piece = try readExactly(input, count: n, at: offset)
            let box = try AES.GCM.SealedBox(nonce: try nonce(h.prefix, i), ciphertext: piece.dropLast(tagSize), tag: piece.suffix(tagSize))
            let plain: [UInt8]
            do {
                plain = Array(try AES.GCM.open(box, using: key, authenticating: additional(header, i, last: last)))
            } catch {
                throw Failure("chunk \(i) does not authenticate: wrong key, or the document was changed")
            }
            try deliver(plain)
            offset += n
            i += 1
        } while offset < total
    }

    /// The first bytes of `input`: enough for the longest header.
    static func readHeader(_ input: Int32) throws -> [UInt8] {
        let fixed = try readExactly(input, count: 12, at: 0, orLess: true)
        guard fixed.count == 12 else { return fixed }
        let n = Int(fixed[10]) | Int(fixed[11]) << 8
        return try readExactly(input, count: 20 + n, at: 0, orLess: true)
    }

    static func readExactly(_ fd: Int32, count: Int, at offset: Int, orLess: Bool = false) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + got, count - got, off_t(offset + got)) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw Failure("reading the document failed: \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            got += n
        }
        guard got == count || orLess else { throw Failure("the document ended at byte \(offset + got), inside chunk data it announced") }
        return Array(bytes[0..<got])
    }
}
#endif
