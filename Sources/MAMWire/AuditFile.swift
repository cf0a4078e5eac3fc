import Foundation

/// The audit log's file, as the broker writes it and every reader reads it (docs/PROTOCOL.md,
/// "The audit log").
///
/// The broker stores records into shared pages of a file it reserved ahead, with no system call
/// per record: what is stored is in the page cache at once, and survives the broker's `kill -9`.
/// The first 64 bytes are a header whose `committed` field says how far the records go; the
/// broker raises it after each whole record, so a reader that stops there sees whole lines only,
/// even when the broker died halfway through a record. Past it are zeros, or the start of a
/// record that was never committed.
///
/// The header is itself one JSON line (`{"format":"mamlab-audit-1","committed":     4242}` and
/// spaces), so the file stays text; but a reader must take `committed` from it, not read on to
/// the end of the file.
public enum AuditFile {
    public static let headerSize = 64
    /// The committed length: eight decimal digits, right-aligned in spaces, at an offset a
    /// single 8-byte store can replace.
    public static let committedOffset = 40
    /// The most a file can hold: eight digits.
    public static let largest = 99_999_999
    static let prefix = Array(#"{"format":"mamlab-audit-1","committed": "#.utf8)

    /// A fresh header saying `committed` bytes (the header's own included).
    public static func header(committed: Int) -> [UInt8] {
        var h = prefix
        h += field(committed)
        h.append(UInt8(ascii: "}"))
        h += [UInt8](repeating: UInt8(ascii: " "), count: headerSize - h.count - 1)
        h.append(UInt8(ascii: "\n"))
        return h
    }

    /// `n` as the header's eight bytes, in memory order, for one 8-byte store.
    /// (Worked out with no allocation: the broker does this once per record.)
    @inline(__always) public static func committedWord(_ n: Int) -> UInt64 {
        var v = UInt64(min(max(n, 0), largest))
        var word: UInt64 = 0
        var position: UInt64 = 7
        while true {
            let byte: UInt64 = v == 0 && position < 7 ? 0x20 : 0x30 + v % 10
            word |= byte << (8 * position)
            v /= 10
            if position == 0 { return word }
            position -= 1
        }
    }

    static func field(_ n: Int) -> [UInt8] {
        let digits = Array(String(min(max(n, 0), largest)).utf8)
        return [UInt8](repeating: UInt8(ascii: " "), count: 8 - digits.count) + digits
    }

    /// The same for an array: not generic, so a caller in another module (the matrix, after
    /// every cell) runs code specialized for it.
    public static func committed(_ bytes: [UInt8]) -> Int? { committed(bytes[...]) }

    /// The committed length a header says, or nil when `bytes` do not begin with one.
    public static func committed(_ bytes: some Collection<UInt8>) -> Int? {
        guard bytes.count >= headerSize, bytes.starts(with: prefix) else { return nil }
        let start = bytes.index(bytes.startIndex, offsetBy: committedOffset)
        return committed(field: bytes[start..<bytes.index(start, offsetBy: 8)])
    }

    /// The committed length the header's eight-byte field says (digits between blanks), or nil.
    static func committed(field: some Collection<UInt8>) -> Int? {
        // Read by hand: a matrix reads it around every cell, and Foundation's trimming was most
        // of that read's cost.
        var n = 0, digits = 0, after = false
        for byte in field {
            switch byte {
            case 0x30...0x39 where !after:
                n = n * 10 + Int(byte - 0x30)
                digits += 1
            case 0x20, 0x09:
                after = digits > 0
            default:
                return nil
            }
        }
        guard digits > 0, n >= headerSize else { return nil }
        return n
    }

    /// The records of one file: its committed lines (a file without a header, as older
    /// brokers wrote, is read whole), each a JSON object. None when the file is missing.
    ///
    /// Reads only the committed bytes from `offset` on: the file is reserved a megabyte at a
    /// time, and a reader that follows the log (the matrix, after each cell) must not pay for
    /// the whole of it at each look.
    /// (Bare system calls for a committed file: the matrix reads its records after every cell,
    /// and FileHandle's were a measurable share of a run.)
    public static func records(atPath path: String, from offset: Int = 0) -> [String] {
        lines(atPath: path, from: offset).lines.map { String(decoding: $0, as: UTF8.self) }
    }

    /// The committed lines from `offset` on, as bytes (what `records` decodes as text): each a
    /// slice whose index plus `start` is its offset in the file; `end` is where the committed
    /// records end (where a reader following the log reads on from).
    public static func lines(atPath path: String, from offset: Int = 0) -> (lines: [ArraySlice<UInt8>], start: Int, end: Int) {
        let none = (lines: [ArraySlice<UInt8>](), start: offset, end: offset)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return none }
        var head = [UInt8](repeating: 0, count: headerSize)
        let n = head.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        if n == headerSize, let end = committed(head) {
            defer { close(fd) }
            let start = max(offset, headerSize)
            guard start < end else { return (none.lines, start, max(start, end)) }
            var rest = [UInt8](repeating: 0, count: end - start)
            let got = rest.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(start)) }
            guard got > 0 else { return (none.lines, start, start) }
            return (rest[..<got].split(separator: UInt8(ascii: "\n")), start, start + got)
        }
        close(fd)
        let start = max(offset, 0)
        guard let all = FileManager.default.contents(atPath: path), start < all.count else { return none }
        return (Array(all[start...]).split(separator: UInt8(ascii: "\n")), start, all.count)
    }

    /// Where the committed records of a file end (what `records(atPath:from:)` reads on from
    /// later); 0 when the file is missing.
    public static func end(atPath path: String) -> Int {
        guard let h = FileHandle(forReadingAtPath: path) else { return 0 }
        defer { try? h.close() }
        let head = (try? h.read(upToCount: headerSize)) ?? Data()
        if let n = committed([UInt8](head)) { return n }
        return Int((try? h.seekToEnd()) ?? 0)
    }

    /// The folder's files, the broker's file names: ordinary decisions and security events.
    public static let decisions = "audit.jsonl"
    public static let security = "security.jsonl"

    /// Every record the broker has kept in `folder` (each log and its rotated copies), oldest
    /// first by decision id.
    public static func allRecords(inFolder folder: String, kept: Int = 8) -> [String] {
        var lines: [(UInt64, String)] = []
        // The apps past their share of the decision log have logs of their own (`apps/`).
        let own = ((try? FileManager.default.contentsOfDirectory(atPath: folder + "/" + appsFolder)) ?? [])
            .filter { $0.hasSuffix(".jsonl") }.map { appsFolder + "/" + $0 }
        for name in [decisions, security] + own.sorted() {
            for path in [folder + "/" + name] + (1...kept).map({ folder + "/" + name + ".\($0)" }) {
                lines += records(atPath: path).map { (id(of: $0), $0) }
            }
        }
        return lines.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// The folder (inside the audit folder) of the logs of apps past their share.
    public static let appsFolder = "apps"

    static func id(of line: String) -> UInt64 {
        guard let r = line.range(of: #","id":"#) else { return 0 }
        return UInt64(line[r.upperBound...].prefix { $0.isNumber }) ?? 0
    }
}
