import CMAMWire
import Foundation
import Glibc
import MAMBrokerCore
import MAMWire
import SystemPackage

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
    /// How many times the log has been set aside since it was opened: each time the oldest
    /// kept log is dropped (AuditTrail counts each app's share of the kept logs by it).
    public private(set) var rotations = 0
    /// Where the next record goes (the committed length).
    private var committed: Int
    /// How much of the file is allocated: records are stored only there (a store past the end of
    /// a file is a SIGBUS), and it grows a step at a time.
    private var reserved: Int
    static let step = 1 << 20
    private var cachedSecond = -1
    /// The current second's `2026-11-22T13:30:02.` (20 bytes), for the records made in it.
    private let cachedPrefix = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 20)
    /// Where a record is rendered when the mapped space left may not hold it.
    private var scratch = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 0)

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
        cachedPrefix.deallocate()
        scratch.deallocate()
    }

    /// Opens (or makes) a log file readable by root alone; a new one gets its header and a first
    /// step of space.
    private static func open(_ path: String, existing: Bool, reserve: Int) throws -> (fd: Int32, committed: Int?, reserved: Int) {
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw BrokerError("cannot open the audit log \(path): \(String(cString: strerror(errno)))") }
        do { try TrustedPath.checkOwnFile(FileDescriptor(rawValue: fd), shown: path) } catch {
            close(fd)
            throw BrokerError("cannot keep the audit log in \(error)")
        }
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
    /// so no value from an app can end a line or start a forged one. Returns the bytes stored
    /// (0: dropped, the log could not grow).
    @discardableResult
    public func append(_ r: AuditEntry, id: UInt64) -> Int {
        // Written byte by byte, straight into the mapped page when the reserved space holds the
        // longest the record could be: this runs for every decision, and Foundation's JSON
        // writer, its date formatter, string interpolation, even an array's append per byte,
        // cost more than the decision itself.
        let time = now()
        setAsideIfAged(at: time.tv_sec)
        let bound = Self.longest(r)
        // (A log reopened larger than the limit is reserved past the mapping's end.)
        if committed + bound <= min(reserved, maximumBytes) {
            var w = RecordWriter(mapping.assumingMemoryBound(to: UInt8.self) + committed)
            render(r, id: id, time: time, &w)
            let count = w.p - (mapping.assumingMemoryBound(to: UInt8.self) + committed)
            commit(count, at: time.tv_sec)
            return count
        }
        // Near the end of the reserved space (or of the log): rendered aside, then stored the
        // way store decides (grown, rotated or dropped at the size limit).
        if scratch.count < bound {
            scratch.deallocate()
            scratch = .allocate(capacity: bound)
        }
        var w = RecordWriter(scratch.baseAddress!)
        render(r, id: id, time: time, &w)
        let count = w.p - scratch.baseAddress!
        return store(UnsafeRawBufferPointer(start: scratch.baseAddress!, count: count), at: time.tv_sec) ? count : 0
    }

    /// The most bytes `render` can write for `r`: every string escaped at its worst (`\u00XX`,
    /// six bytes a byte) and every number at 20 digits, plus the keys and punctuation (under 400).
    static func longest(_ r: AuditEntry) -> Int {
        var text = r.channel.utf8.count + r.outcome.utf8.count + r.rule.utf8.count + r.tag.utf8.count
        text += (r.decidedAt?.utf8.count ?? 0) + (r.detail?.utf8.count ?? 0) + (r.ruleName?.utf8.count ?? 0) + (r.dataType?.utf8.count ?? 0)
        text += r.source.app.utf8.count + r.source.identity.utf8.count
        if let t = r.target { text += t.app.utf8.count + t.identity.utf8.count }
        return 512 + 6 * text
    }

    private func render(_ r: AuditEntry, id: UInt64, time: timespec, _ w: inout RecordWriter) {
        w.literal("{\"channel\":"); w.string(r.channel)
        if let s = r.decidedAt { w.literal(",\"decidedAt\":"); w.string(s) }
        if let d = r.detail { w.literal(",\"detail\":"); w.string(d) }
        w.literal(",\"id\":"); w.number(id)
        w.literal(",\"outcome\":"); w.string(r.outcome)
        w.literal(",\"request\":"); w.number(UInt64(r.request))
        w.literal(",\"revision\":"); w.number(UInt64(r.revision))
        w.literal(",\"rule\":"); w.string(r.rule)
        if let n = r.ruleName { w.literal(",\"ruleName\":"); w.string(n) }
        w.literal(",\"session\":"); w.number(UInt64(r.session.raw))
        if let size = r.size { w.literal(",\"size\":"); w.number(UInt64(size)) }
        w.literal(",\"source\":"); party(r.source, &w)
        w.literal(",\"tag\":"); w.string(r.tag)
        if let t = r.target { w.literal(",\"target\":"); party(t, &w) }
        w.literal(",\"time\":\""); timestamp(time, &w); w.byte(UInt8(ascii: "\""))
        if let d = r.dataType { w.literal(",\"type\":"); w.string(d) }
        w.literal("}\n")
    }

    /// Copies a whole record in, then commits it: a kill between the two leaves it uncommitted,
    /// and the next record is stored over it.
    private func store(_ record: UnsafeRawBufferPointer, at second: Int) -> Bool {
        if committed + record.count > maximumBytes && committed > AuditFile.headerSize { rotate() }
        setAsideIfAged(at: second)
        guard committed + record.count <= maximumBytes else { return false }
        if committed + record.count > reserved {
            let more = min(max(Self.step, record.count), maximumBytes - reserved)
            let rc = posix_fallocate(fd, off_t(reserved), off_t(more))
            guard rc == 0 else {
                Self.warn("mambroker: the audit log \(path) cannot grow: \(String(cString: strerror(rc)))\n")
                return false
            }
            prefault(from: reserved, to: reserved + more)
            reserved += more
        }
        (mapping + committed).copyMemory(from: record.baseAddress!, byteCount: record.count)
        commit(record.count, at: second)
        return true
    }

    /// Counts the `count` bytes stored past the committed length: the header's length moves
    /// over them only once they are all in place.
    @inline(__always) private func commit(_ count: Int, at second: Int) {
        if committed == AuditFile.headerSize { firstRecord = second }
        newestRecord = second
        committed += count
        mam_store_release_u64(mapping + AuditFile.committedOffset, AuditFile.committedWord(committed))
    }

    private func party(_ p: AuditEntry.Party, _ w: inout RecordWriter) {
        w.literal("{\"app\":"); w.string(p.app)
        w.literal(",\"identity\":"); w.string(p.identity)
        if p.managed { w.literal(",\"managed\":true}") } else { w.literal(",\"managed\":false}") }
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
        rotations += 1
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

    /// UTC with milliseconds: 2026-11-22T13:30:02.272Z. The calendar fields are worked out once
    /// per second, not per line.
    private func timestamp(_ ts: timespec, _ w: inout RecordWriter) {
        if ts.tv_sec != cachedSecond {
            var t = tm()
            var seconds = ts.tv_sec
            gmtime_r(&seconds, &t)
            var p = RecordWriter(cachedPrefix.baseAddress!)
            p.digits(Int(t.tm_year) + 1900, 4); p.byte(UInt8(ascii: "-"))
            p.digits(Int(t.tm_mon) + 1, 2); p.byte(UInt8(ascii: "-"))
            p.digits(Int(t.tm_mday), 2); p.byte(UInt8(ascii: "T"))
            p.digits(Int(t.tm_hour), 2); p.byte(UInt8(ascii: ":"))
            p.digits(Int(t.tm_min), 2); p.byte(UInt8(ascii: ":"))
            p.digits(Int(t.tm_sec), 2); p.byte(UInt8(ascii: "."))
            cachedSecond = ts.tv_sec
        }
        w.bytes(UnsafeBufferPointer(cachedPrefix))
        w.digits(ts.tv_nsec / 1_000_000, 3); w.byte(UInt8(ascii: "Z"))
    }
}

/// A cursor storing a record's bytes into memory sized for it ahead (`AuditLog.longest`): no
/// bounds or uniqueness check per byte, as an array's append makes.
struct RecordWriter {
    var p: UnsafeMutablePointer<UInt8>
    init(_ p: UnsafeMutablePointer<UInt8>) { self.p = p }

    @inline(__always) mutating func byte(_ c: UInt8) {
        p.pointee = c
        p += 1
    }

    @inline(__always) mutating func bytes(_ b: UnsafeBufferPointer<UInt8>) {
        guard let base = b.baseAddress else { return }
        p.update(from: base, count: b.count)
        p += b.count
    }

    @inline(__always) mutating func literal(_ s: StaticString) {
        bytes(UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }

    static let hex: StaticString = "0123456789abcdef"

    /// A JSON string literal: quotes, backslashes and control characters escaped.
    mutating func string(_ s: String) {
        byte(UInt8(ascii: "\""))
        if s.utf8.withContiguousStorageIfAvailable({ escaped($0) }) == nil {
            Array(s.utf8).withUnsafeBufferPointer { escaped($0) }
        }
        byte(UInt8(ascii: "\""))
    }

    /// A run of bytes that need no escape (nearly every string here is one) is copied whole;
    /// only quotes, backslashes and control characters are written one by one.
    @inline(__always) private mutating func escaped(_ text: UnsafeBufferPointer<UInt8>) {
        guard var run = text.baseAddress else { return }
        let end = run + text.count
        var at = run
        while at < end {
            let c = at.pointee
            if c >= 0x20 && c != UInt8(ascii: "\"") && c != UInt8(ascii: "\\") && c != 0x7F {
                at += 1
                continue
            }
            bytes(UnsafeBufferPointer(start: run, count: at - run))
            switch c {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): byte(UInt8(ascii: "\\")); byte(c)
            case 0x0A: byte(UInt8(ascii: "\\")); byte(UInt8(ascii: "n"))
            case 0x0D: byte(UInt8(ascii: "\\")); byte(UInt8(ascii: "r"))
            case 0x09: byte(UInt8(ascii: "\\")); byte(UInt8(ascii: "t"))
            default:
                literal("\\u00")
                byte(Self.hex.utf8Start[Int(c >> 4)]); byte(Self.hex.utf8Start[Int(c & 0xF)])
            }
            at += 1
            run = at
        }
        bytes(UnsafeBufferPointer(start: run, count: at - run))
    }

    /// Digits stored in place, highest first: no array per number.
    mutating func number(_ v: UInt64) {
        var divisor: UInt64 = 1
        while divisor <= v / 10 { divisor *= 10 }
        var n = v
        while divisor > 0 {
            byte(UInt8(ascii: "0") + UInt8(n / divisor))
            n %= divisor
            divisor /= 10
        }
    }

    /// Exactly `width` digits, zero-padded.
    @inline(__always) mutating func digits(_ v: Int, _ width: Int) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        var n = v
        while divisor > 0 {
            byte(UInt8(ascii: "0") + UInt8((n / divisor) % 10))
            n %= divisor
            divisor /= 10
        }
    }
}

public struct BrokerError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
