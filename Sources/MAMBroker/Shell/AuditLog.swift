import CMAMWire
import Foundation
import Glibc
import MAMBrokerCore
import MAMWire

/// The audit log: one JSON line per decision, stored into shared pages of a file reserved ahead
/// (AuditFile): no system call per record, and every record stored is the page cache's the
/// moment it is made, so it survives the broker's `kill -9` (not the machine's crash). A record
/// counts once the header's committed length covers it, so a kill halfway through one leaves
/// whole lines only.
public final class AuditLog: @unchecked Sendable {
    private var fd: Int32
    private var mapping: UnsafeMutableRawPointer
    public let path: String
    /// A log that would grow past this is set aside as `<path>.1` (older ones shifted up,
    /// `keptLogs` kept) and a fresh one swapped in, so a flood of decisions cannot fill the disk.
    public let maximumBytes: Int
    /// Records older than this are dropped: the log is set aside once its first record is a
    /// quarter of this old, and a kept log whose newest record is older is deleted. Nil: kept
    /// until the size limit pushes them out.
    public let maximumAge: Duration?
    /// A quarter of the maximum age in whole seconds, rounded up: the age at which the current
    /// log is set aside, checked at every record (Duration's arithmetic is 128-bit and slow).
    private let setAsideAge: Int?
    /// The wall clock records are stamped with and aged by (injected: tests move it by hand).
    let now: @Sendable () -> timespec
    /// When the current log's first and newest records were made (seconds since the epoch);
    /// nil: none yet.
    private var firstRecord: Int?
    private var newestRecord: Int?
    /// Where the next record goes (the committed length).
    private var committed: Int
    /// How much of the file is allocated: records are stored only there (a store past the end of
    /// a file is a SIGBUS), and it grows a step at a time.
    private var reserved: Int
    static let step = 1 << 20
    private var cachedSecond = -1
    private var cachedPrefix: [UInt8] = []
    private var buffer: [UInt8] = []

    public init(path: String, maximumBytes: Int = 64 << 20, maximumAge: Duration? = nil, now: @escaping @Sendable () -> timespec = AuditLog.realTime) throws {
        self.path = path
        self.maximumBytes = min(max(maximumBytes, 4096), AuditFile.largest)
        self.maximumAge = maximumAge
        setAsideAge = maximumAge.map { age in
            let quarter = (age / 4).components
            return Int(quarter.seconds) + (quarter.attoseconds > 0 ? 1 : 0)
        }
        self.now = now
        unlink(path + ".next")
        var file = try Self.open(path, existing: true, reserve: min(Self.step, self.maximumBytes))
        if file.committed == nil {
            // An older broker's plain log, or none: the old one is kept as the newest rotated log.
            close(file.fd)
            if file.reserved > 0 { Self.shift(path, keptLogs: Self.keptLogs); _ = rename(path, path + ".1") }
            file = try Self.open(path, existing: false, reserve: min(Self.step, self.maximumBytes))
        }
        fd = file.fd
        committed = file.committed ?? AuditFile.headerSize
        reserved = file.reserved
        mapping = try Self.map(fd, self.maximumBytes, path)
        if committed > AuditFile.headerSize {
            let records = UnsafeRawBufferPointer(start: mapping + AuditFile.headerSize, count: committed - AuditFile.headerSize)
            firstRecord = Self.recordTime(records, line: 0)
            newestRecord = Self.recordTime(records, line: (records.dropLast().lastIndex(of: 0x0A) ?? -1) + 1)
        }
        if committed > self.maximumBytes { rotate() } else { prefault(from: committed, to: reserved) }
        expire()
    }

    public static func realTime() -> timespec {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return ts
    }

    /// Ages the log (each second, from the broker's loop): the current log is set aside when
    /// its first record has reached a quarter of the maximum age, and kept logs past the age go.
    public func expire() {
        setAsideIfAged()
        dropExpired()
    }

    /// At each record too, so a log never holds records further apart than a quarter of the age.
    /// `second`: now, when the caller has just read the clock (a record, stamped with it).
    private func setAsideIfAged(at second: Int? = nil) {
        guard let setAsideAge, let firstRecord, committed > AuditFile.headerSize else { return }
        if (second ?? now().tv_sec) - firstRecord >= setAsideAge { rotate() }
    }

    /// Deletes the kept logs whose newest record is older than the maximum age (a kept log's
    /// modification time is set to when it was set aside).
    private func dropExpired() {
        guard let maximumAge else { return }
        let limit = now().tv_sec - Int(maximumAge.components.seconds)
        for n in 1...Self.keptLogs {
            var st = stat()
            if lstat(path + ".\(n)", &st) == 0, st.st_mtim.tv_sec < limit { unlink(path + ".\(n)") }
        }
    }

    /// The time of the record starting at `line`, read from its `"time":"2026-11-22T13:30:02.272Z"`;
    /// nil when there is none to read (the log is then aged from now).
    static func recordTime(_ records: UnsafeRawBufferPointer, line start: Int) -> Int? {
        guard start < records.count, let end = records[start...].firstIndex(of: 0x0A) else { return nil }
        let line = String(decoding: records[start..<end], as: UTF8.self)
        guard let r = line.range(of: #""time":""#) else { return nil }
        let text = Array(line[r.upperBound...].utf8.prefix(19))
        guard text.count == 19 else { return nil }
        func n(_ from: Int, _ count: Int) -> Int32? { Int32(String(decoding: text[from..<(from + count)], as: UTF8.self)) }
        guard let y = n(0, 4), let mo = n(5, 2), let d = n(8, 2), let h = n(11, 2), let mi = n(14, 2), let sec = n(17, 2) else { return nil }
        var t = tm()
        (t.tm_year, t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec) = (y - 1900, mo - 1, d, h, mi, sec)
        return timegm(&t)
    }

    deinit {
        munmap(mapping, maximumBytes)
        close(fd)
    }

    /// Opens (or makes) a log file readable by root alone; a new one gets its header and a first
    /// step of space.
    private static func open(_ path: String, existing: Bool, reserve: Int) throws -> (fd: Int32, committed: Int?, reserved: Int) {
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw BrokerError("cannot open the audit log \(path): \(String(cString: strerror(errno)))") }
        fchmod(fd, 0o600)
        var st = stat()
        let size = fstat(fd, &st) == 0 ? Int(st.st_size) : 0
        if existing && size > 0 {
            var head = [UInt8](repeating: 0, count: AuditFile.headerSize)
            let n = pread(fd, &head, head.count, 0)
            if n == head.count, let c = AuditFile.committed(head), c <= size { return (fd, c, size) }
            return (fd, nil, size)
        }
        let header = AuditFile.header(committed: AuditFile.headerSize)
        let rc = posix_fallocate(fd, 0, off_t(reserve))
        guard rc == 0, pwrite(fd, header, header.count, 0) == header.count else {
            let e = String(cString: strerror(rc != 0 ? rc : errno))
            close(fd)
            throw BrokerError("cannot reserve space for the audit log \(path): \(e)")
        }
        return (fd, AuditFile.headerSize, reserve)
    }

    private static func map(_ fd: Int32, _ length: Int, _ path: String) throws -> UnsafeMutableRawPointer {
        // The whole largest size mapped once; only the reserved part is ever touched.
        let p = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
        guard let p, p != MAP_FAILED else { throw BrokerError("cannot map the audit log \(path): \(String(cString: strerror(errno)))") }
        return p
    }

    /// Appends one decision. Keys come out sorted, as a reader expects; every string is escaped,
    /// so no value from an app can end a line or start a forged one.
    public func append(_ r: AuditEntry, id: UInt64) {
        // Written byte by byte: this runs for every decision, and Foundation's JSON writer, its
        // date formatter, and even string interpolation cost more than the decision itself.
        var b: [UInt8] = []
        swap(&b, &buffer)  // one buffer reused, never copied
        b.removeAll(keepingCapacity: true)
        b.reserveCapacity(384)
        b += Self.literal("{\"channel\":"); string(r.channel, &b)
        if let s = r.decidedAt { b += Self.literal(",\"decidedAt\":"); string(s, &b) }
        if let d = r.detail { b += Self.literal(",\"detail\":"); string(d, &b) }
        b += Self.literal(",\"id\":"); number(id, &b)
        b += Self.literal(",\"outcome\":"); string(r.outcome, &b)
        b += Self.literal(",\"request\":"); number(UInt64(r.request), &b)
        b += Self.literal(",\"revision\":"); number(UInt64(r.revision), &b)
        b += Self.literal(",\"rule\":"); string(r.rule, &b)
        if let n = r.ruleName { b += Self.literal(",\"ruleName\":"); string(n, &b) }
        b += Self.literal(",\"session\":"); number(UInt64(r.session.raw), &b)
        if let size = r.size { b += Self.literal(",\"size\":"); number(UInt64(size), &b) }
        b += Self.literal(",\"source\":"); party(r.source, &b)
        b += Self.literal(",\"tag\":"); string(r.tag, &b)
        if let t = r.target { b += Self.literal(",\"target\":"); party(t, &b) }
        let time = now()
        b += Self.literal(",\"time\":\""); timestamp(time, &b); b.append(UInt8(ascii: "\""))
        if let d = r.dataType { b += Self.literal(",\"type\":"); string(d, &b) }
        b += Self.literal("}\n")
        store(b, at: time.tv_sec)
        buffer = b
    }

    /// Copies a whole record in, then commits it: a kill between the two leaves it uncommitted,
    /// and the next record is stored over it.
    private func store(_ record: [UInt8], at second: Int) {
        if committed + record.count > maximumBytes && committed > AuditFile.headerSize { rotate() }
        setAsideIfAged(at: second)
        guard committed + record.count <= maximumBytes else { return }
        if committed + record.count > reserved {
            let more = min(max(Self.step, record.count), maximumBytes - reserved)
            let rc = posix_fallocate(fd, off_t(reserved), off_t(more))
            guard rc == 0 else {
                Self.warn("mambroker: the audit log \(path) cannot grow: \(String(cString: strerror(rc)))\n")
                return
            }
            prefault(from: reserved, to: reserved + more)
            reserved += more
        }
        record.withUnsafeBytes { (mapping + committed).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        if committed == AuditFile.headerSize { firstRecord = second }
        newestRecord = second
        committed += record.count
        mam_store_release_u64(mapping + AuditFile.committedOffset, AuditFile.committedWord(committed))
    }
    private func party(_ p: AuditEntry.Party, _ b: inout [UInt8]) {
        b += Self.literal("{\"app\":"); string(p.app, &b)
        b += Self.literal(",\"identity\":"); string(p.identity, &b)
        b += Self.literal(",\"managed\":"); b += p.managed ? Self.literal("true") : Self.literal("false")
        b.append(UInt8(ascii: "}"))
    }

    /// Older logs kept beside the current one: `audit.jsonl.1` (the newest) to `.N`.
    public static let keptLogs = 8

    /// The next file is made whole (header, first step) beside the current one, then swapped in:
    /// a kill at any point leaves every record in one of the kept files.
    private func rotate() {
        guard let next = try? Self.open(path + ".next", existing: false, reserve: min(Self.step, maximumBytes)), let nextMapping = try? Self.map(next.fd, maximumBytes, path) else {
            Self.warn("mambroker: the audit log \(path) cannot be rotated: \(String(cString: strerror(errno)))\n")
            return
        }
        // Shifted up one, the oldest dropped: a flood must write eight whole logs' worth of
        // decisions before a record it wants gone is gone.
        Self.shift(path, keptLogs: Self.keptLogs)
        _ = rename(path, path + ".1")
        _ = rename(path + ".next", path)
        // The time of its newest record (now when unknown): the age dropExpired goes by.
        let time = newestRecord.map { timespec(tv_sec: $0, tv_nsec: 0) } ?? now()
        var times = [time, time]
        futimens(fd, &times)
        munmap(mapping, maximumBytes)
        close(fd)
        (fd, mapping, committed, reserved) = (next.fd, nextMapping, AuditFile.headerSize, next.reserved)
        (firstRecord, newestRecord) = (nil, nil)
        dropExpired()
        prefault(from: committed, to: reserved)
    }

    /// Maps the reserved pages writable ahead (MADV_POPULATE_WRITE, Linux 5.14), once per step:
    /// otherwise the first store into each 4 KiB page faults on the decision's path (ext4's
    /// page_mkwrite, about half of a paste's audit time in `perf`). Best effort: an older kernel
    /// refuses it and the stores fault as before. A page written back to disk is made read-only
    /// again and faults once more at its next store; only that is left on the path.
    private func prefault(from start: Int, to end: Int) {
        let page = 4096
        let first = start & ~(page - 1)
        guard end > first else { return }
        _ = madvise(mapping + first, end - first, MADV_POPULATE_WRITE)
    }

    /// To standard error, whoever reads it or not: a reader that has gone makes the write fail
    /// (EPIPE; the broker ignores SIGPIPE), where FileHandle's write would stop the broker.
    public static func warn(_ text: String) {
        var text = text
        text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    }

    private static func shift(_ path: String, keptLogs: Int) {
        unlink(path + ".\(keptLogs)")
        for n in stride(from: keptLogs - 1, through: 1, by: -1) { _ = rename(path + ".\(n)", path + ".\(n + 1)") }
    }

    static let hex = Array("0123456789abcdef".utf8)

    @inline(__always) static func literal(_ s: StaticString) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount)
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped.
    func string(_ s: String, _ b: inout [UInt8]) {
        b.append(UInt8(ascii: "\""))
        // Most values need no escape: copied whole.
        var text = s
        let plain = text.withUTF8 { bytes -> Bool in
            guard !bytes.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == 0x7F }) else { return false }
            b.append(contentsOf: bytes)
            return true
        }
        if plain {
            b.append(UInt8(ascii: "\""))
            return
        }
        for c in s.utf8 {
            switch c {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): b.append(UInt8(ascii: "\\")); b.append(c)
            case 0x0A: b.append(UInt8(ascii: "\\")); b.append(UInt8(ascii: "n"))
            case 0x0D: b.append(UInt8(ascii: "\\")); b.append(UInt8(ascii: "r"))
            case 0x09: b.append(UInt8(ascii: "\\")); b.append(UInt8(ascii: "t"))
            case 0..<0x20, 0x7F:
                b += Self.literal("\\u00")
                b.append(Self.hex[Int(c >> 4)]); b.append(Self.hex[Int(c & 0xF)])
            default: b.append(c)
            }
        }
        b.append(UInt8(ascii: "\""))
    }

    func number(_ v: UInt64, _ b: inout [UInt8]) {
        // Digits written in place, highest first: no array per number.
        var divisor: UInt64 = 1
        while divisor <= v / 10 { divisor *= 10 }
        var n = v
        while divisor > 0 {
            b.append(UInt8(ascii: "0") + UInt8(n / divisor))
            n %= divisor
            divisor /= 10
        }
    }

    @inline(__always) func digits(_ v: Int, _ width: Int, _ b: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        var n = v
        while divisor > 0 {
            b.append(UInt8(ascii: "0") + UInt8((n / divisor) % 10))
            n %= divisor
            divisor /= 10
        }
    }

    /// UTC with milliseconds: 2026-11-22T13:30:02.272Z. The calendar fields are worked out once
    /// per second, not per line.
    func timestamp(_ ts: timespec, _ b: inout [UInt8]) {
        if ts.tv_sec != cachedSecond {
            var t = tm()
            var seconds = ts.tv_sec
            gmtime_r(&seconds, &t)
            var prefix: [UInt8] = []
            prefix.reserveCapacity(20)
            digits(Int(t.tm_year) + 1900, 4, &prefix); prefix.append(UInt8(ascii: "-"))
            digits(Int(t.tm_mon) + 1, 2, &prefix); prefix.append(UInt8(ascii: "-"))
            digits(Int(t.tm_mday), 2, &prefix); prefix.append(UInt8(ascii: "T"))
            digits(Int(t.tm_hour), 2, &prefix); prefix.append(UInt8(ascii: ":"))
            digits(Int(t.tm_min), 2, &prefix); prefix.append(UInt8(ascii: ":"))
            digits(Int(t.tm_sec), 2, &prefix); prefix.append(UInt8(ascii: "."))
            cachedSecond = ts.tv_sec
            cachedPrefix = prefix
        }
        b += cachedPrefix
        digits(ts.tv_nsec / 1_000_000, 3, &b); b.append(UInt8(ascii: "Z"))
    }
}

public struct BrokerError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
