#if canImport(Glibc)
import Crypto
import Foundation
import Glibc

/// An encrypted file read and written at plaintext offsets, like the SDK's IntuneMAMFile
/// (docs/PROTECTION.md, "Encrypted files").
///
/// The file is a header naming the owner, then 4 KiB chunks, each sealed on its own with
/// AES-256-GCM: a write re-seals only the chunks it touches. Every seal draws a fresh random
/// 96-bit nonce, stored in front of the chunk, so re-sealing a chunk never reuses a nonce. Each
/// chunk's additional data is the whole header (owner, key check, a random file id), the chunk's
/// index and whether it is the last, so chunks cannot be changed, swapped, moved to another
/// file, or cut off the end without reading failing.
///
/// One handle is for one thread at a time. Writes are not atomic across a crash: a torn chunk
/// reads as changed. `FileEncryption.encryptFile` replaces a file atomically instead.
public final class EncryptedFile {
    public let path: String
    public let owner: DataOwner
    public let isWritable: Bool
    /// The plaintext size.
    public internal(set) var size: Int
    /// Where `read(count:)` and `write(_:)` start.
    public var position = 0

    static let chunkSize = EncryptedFileHeader.chunkSize
    static let overhead = 12 + 16
    static let recordSize = chunkSize + overhead
    /// The largest plaintext size this side writes (16 TiB, ext4's file size limit).
    public static let maximumSize = 1 << 44

    private var fd: Int32
    private let key: ProtectionKey
    private let headerLength: Int
    /// The header and nine spare bytes for the chunk index and the last-chunk flag.
    private var additional: [UInt8]

    private init(fd: Int32, path: String, owner: DataOwner, key: ProtectionKey, header: [UInt8], size: Int, writable: Bool) {
        self.fd = fd
        self.path = path
        self.owner = owner
        self.key = key
        self.headerLength = header.count
        self.additional = header + [UInt8](repeating: 0, count: 9)
        self.size = size
        self.isWritable = writable
    }

    deinit { close() }

    // MARK: Opening

    /// Creates the file at `path` (or truncates it) as an empty encrypted file owned by `owner`,
    /// whose owner attribute is set too. A symbolic link at `path` is refused.
    public static func create(at path: String, for owner: DataOwner, key: ProtectionKey, permissions: mode_t = 0o600) throws(FileProtectionError) -> EncryptedFile {
        guard !owner.isNobody else { throw .unmanagedIdentity(path: path) }
        let fd = try FileOwnership.createFile(at: path, for: owner, permissions: permissions)
        return try create(adopting: fd, path: path, for: owner, key: key)
    }

    /// Writes an empty encrypted file into the empty file `fd`, which the handle then owns.
    static func create(adopting fd: Int32, path: String, for owner: DataOwner, key: ProtectionKey) throws(FileProtectionError) -> EncryptedFile {
        let header = EncryptedFileHeader(owner: owner, keyCheck: key.check, fileID: randomBytes(EncryptedFileHeader.fileIDSize)).encoded()
        let file = EncryptedFile(fd: fd, path: path, owner: owner, key: key, header: header, size: 0, writable: true)
        try SystemCall.write(fd, header, at: 0, path)
        try file.seal(0, [], last: true)
        return file
    }

    /// Opens the encrypted file at `path` with its owner's key. A symbolic link is refused; a
    /// wrong key, a changed header or a file cut short is reported before any byte is read.
    public static func open(at path: String, key: ProtectionKey, writable: Bool = true) throws(FileProtectionError) -> EncryptedFile {
        let fd = try SystemCall.open(path, writable ? O_RDWR : O_RDONLY)
        return try open(adopting: fd, path: path, key: key, writable: writable)
    }

    /// Opens the encrypted file `fd`; the handle owns the descriptor from then on (also when
    /// opening fails, when it is closed).
    static func open(adopting fd: Int32, path: String = "(descriptor)", key: ProtectionKey, writable: Bool) throws(FileProtectionError) -> EncryptedFile {
        do throws(FileProtectionError) {
            let st = try SystemCall.requireRegular(fd, path)
            let first = try SystemCall.read(fd, count: EncryptedFileHeader.maximumSize, at: 0, path)
            let parsed: (header: EncryptedFileHeader, length: Int)
            do throws(DataProtectionError) { parsed = try EncryptedFileHeader.parse(first) } catch { throw .undecryptable(path: path, reason: error) }
            guard key.matches(parsed.header.keyCheck) else { throw .undecryptable(path: path, reason: .wrongKey(owner: parsed.header.owner)) }
            let size = try plaintextSize(body: Int(st.st_size) - parsed.length, path: path)
            let file = EncryptedFile(fd: fd, path: path, owner: parsed.header.owner, key: key,
                                     header: Array(first[0..<parsed.length]), size: size, writable: writable)
            // The last chunk must say it is the last: that catches whole chunks cut off the end.
            _ = try file.chunk(lastIndex(size))
            return file
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    /// The plaintext size a body of `body` bytes holds: full records, then the last one with
    /// 1...4096 bytes, or a single empty record for an empty file.
    static func plaintextSize(body: Int, path: String) throws(FileProtectionError) -> Int {
        let whole = body / recordSize, rest = body % recordSize
        if rest == 0 && whole > 0 { return whole * chunkSize }
        if rest > overhead { return whole * chunkSize + rest - overhead }
        if rest == overhead && whole == 0 { return 0 }
        throw .undecryptable(path: path, reason: .truncated("the chunks take \(body) bytes, which no plaintext size gives: the file was cut or extended"))
    }

    static func lastIndex(_ size: Int) -> Int { size == 0 ? 0 : (size - 1) / chunkSize }

    // MARK: Reading and writing

    /// Up to `count` plaintext bytes from `offset`; fewer at the end of the file.
    public func read(at offset: Int, count: Int) throws(FileProtectionError) -> [UInt8] {
        guard offset >= 0, count >= 0 else { throw .invalidArgument("\(path): read of \(count) bytes at offset \(offset)") }
        guard offset < size, count > 0 else { return [] }
        let end = min(size, offset + min(count, size))
        var out: [UInt8] = []
        out.reserveCapacity(end - offset)
        for k in offset / Self.chunkSize...(end - 1) / Self.chunkSize {
            let plain = try chunk(k)
            let start = k * Self.chunkSize
            out += plain[max(offset, start) - start..<min(end, start + plain.count) - start]
        }
        return out
    }

    /// Writes `data` at plaintext `offset`, growing the file (with zeros between its old end and
    /// `offset`) as needed.
    public func write(_ data: some ContiguousBytes, at offset: Int) throws(FileProtectionError) {
        var failure: FileProtectionError?
        data.withUnsafeBytes { raw in
            do throws(FileProtectionError) { try writeRegion(at: offset, count: raw.count, raw) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Reads from `position` and moves it on.
    public func read(count: Int) throws(FileProtectionError) -> [UInt8] {
        let bytes = try read(at: position, count: count)
        position += bytes.count
        return bytes
    }

    /// Writes at `position` and moves it on.
    public func write(_ data: some ContiguousBytes) throws(FileProtectionError) {
        let count = data.withUnsafeBytes { $0.count }
        try write(data, at: position)
        position += count
    }

    /// Cuts the file to `newSize` plaintext bytes, or grows it with zeros.
    public func truncate(to newSize: Int) throws(FileProtectionError) {
        try requireWritable()
        guard newSize >= 0, newSize <= Self.maximumSize else { throw .invalidArgument("\(path): truncate to \(newSize) bytes") }
        if newSize > size { return try writeRegion(at: size, count: newSize - size, nil) }
        guard newSize < size else { return }
        let k = Self.lastIndex(newSize)
        let keep = newSize - k * Self.chunkSize
        let plain = try chunk(k)
        try seal(k, Array(plain.prefix(keep)), last: true)
        try SystemCall.truncate(fd, to: headerLength + k * Self.recordSize + keep + Self.overhead, path)
        size = newSize
    }

    /// Flushes the file to the disk.
    public func sync() throws(FileProtectionError) { try SystemCall.sync(fd, path) }

    /// Closes the descriptor; later calls fail.
    public func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    // MARK: Chunks

    /// Writes `count` bytes (`bytes`, or zeros when nil) at `offset`. Re-seals the chunks the
    /// range touches, the chunks between the old end and `offset`, and the old last chunk when it
    /// stops being the last.
    func writeRegion(at offset: Int, count: Int, _ bytes: UnsafeRawBufferPointer?) throws(FileProtectionError) {
        try requireWritable()
        guard offset >= 0, count >= 0, offset <= Self.maximumSize - count else {
            throw .invalidArgument("\(path): write of \(count) bytes at offset \(offset); files end by \(Self.maximumSize) bytes")
        }
        guard count > 0 else { return }
        let c = Self.chunkSize
        let end = offset + count, oldSize = size, newSize = max(oldSize, end)
        var first = min(offset, oldSize) / c
        if newSize > oldSize && oldSize > 0 && oldSize % c == 0 { first = min(first, oldSize / c - 1) }
        let newLast = Self.lastIndex(newSize)
        for k in first...(end - 1) / c {
            let start = k * c, stop = min(newSize, start + c)
            var plain: [UInt8] = []
            if start < oldSize && !(offset <= start && end >= stop) { plain = try chunk(k) }
            plain.reserveCapacity(stop - start)
            if plain.count < stop - start { plain += repeatElement(0, count: stop - start - plain.count) }
            let from = max(offset, start), to = min(end, stop)
            if from < to {
                plain.withUnsafeMutableBytes { target in
                    let slot = UnsafeMutableRawBufferPointer(rebasing: target[from - start..<to - start])
                    if let bytes { slot.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[from - offset..<to - offset])) } else { slot.initializeMemory(as: UInt8.self, repeating: 0) }
                }
            }
            try seal(k, plain, last: k == newLast)
        }
        size = newSize
    }

    /// Chunk k's plaintext, authenticated against the current size's layout.
    func chunk(_ k: Int) throws(FileProtectionError) -> [UInt8] {
        guard fd >= 0 else { throw .invalidArgument("\(path): the file is closed") }
        let last = Self.lastIndex(size)
        let length = k < last ? Self.recordSize : size - k * Self.chunkSize + Self.overhead
        let record = try SystemCall.read(fd, count: length, at: headerLength + k * Self.recordSize, path)
        guard record.count == length else {
            throw .undecryptable(path: path, reason: .truncated("chunk \(k) ends after \(record.count) of its \(length) bytes"))
        }
        setChunk(k, last: k == last)
        do {
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: record[0..<12]), ciphertext: record[12..<length - 16], tag: record[(length - 16)...])
            return Array(try AES.GCM.open(box, using: key.key, authenticating: additional))
        } catch {
            throw .undecryptable(path: path, reason: .tampered("chunk \(k) does not authenticate: the file was changed, or chunks were moved or cut off"))
        }
    }

    /// Seals `plain` as chunk k under a fresh random nonce and writes its record.
    func seal(_ k: Int, _ plain: [UInt8], last: Bool) throws(FileProtectionError) {
        guard fd >= 0 else { throw .invalidArgument("\(path): the file is closed") }
        setChunk(k, last: last)
        var record: [UInt8] = []
        do {
            let box = try AES.GCM.seal(plain, using: key.key, nonce: AES.GCM.Nonce(), authenticating: additional)
            record.reserveCapacity(plain.count + Self.overhead)
            record += box.nonce
            record += box.ciphertext
            record += box.tag
        } catch {
            throw .system(call: "AES-GCM seal of chunk \(k)", path: path, errno: EIO)
        }
        try SystemCall.write(fd, record, at: headerLength + k * Self.recordSize, path)
    }

    private func setChunk(_ k: Int, last: Bool) {
        let n = additional.count
        for i in 0..<8 { additional[n - 9 + i] = UInt8(truncatingIfNeeded: UInt64(k) >> (56 - 8 * i)) }
        additional[n - 1] = last ? 1 : 0
    }

    private func requireWritable() throws(FileProtectionError) {
        guard isWritable else { throw .invalidArgument("\(path): opened read-only") }
    }
}

func randomBytes(_ count: Int) -> [UInt8] {
    var rng = SystemRandomNumberGenerator()
    return (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
}
#endif
