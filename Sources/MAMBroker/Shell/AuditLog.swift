import Foundation
import Glibc
import MAMBrokerCore

/// The audit log: one JSON line per decision, appended with a single write so that a kill at
/// any moment leaves whole lines only.
public final class AuditLog: @unchecked Sendable {
    private var fd: Int32
    public let path: String
    /// A log larger than this is renamed to `<path>.1` (older ones shifted up, `keptLogs` kept)
    /// and begun anew, so a flood of decisions cannot fill the disk.
    public let maximumBytes: Int
    private var written: Int
    private var cachedSecond = -1
    private var cachedPrefix: [UInt8] = []

    public init(path: String, maximumBytes: Int = 64 << 20) throws {
        self.path = path
        self.maximumBytes = maximumBytes
        fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o640)
        guard fd >= 0 else { throw BrokerError("cannot open the audit log \(path): \(String(cString: strerror(errno)))") }
        var st = stat()
        written = fstat(fd, &st) == 0 ? Int(st.st_size) : 0
    }

    deinit { close(fd) }

    /// Appends one decision. Keys come out sorted, as a reader expects; every string is escaped,
    /// so no value from an app can end a line or start a forged one.
    public func append(_ r: AuditEntry, id: UInt64) {
        // Written byte by byte: this runs for every decision, and Foundation's JSON writer, its
        // date formatter, and even string interpolation cost more than the decision itself.
        var b = [UInt8]()
        b.reserveCapacity(384)
        b += Self.literal("{\"channel\":"); string(r.channel, &b)
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
        b += Self.literal(",\"time\":\""); timestamp(&b); b.append(UInt8(ascii: "\""))
        if let d = r.dataType { b += Self.literal(",\"type\":"); string(d, &b) }
        b += Self.literal("}\n")
        if written + b.count > maximumBytes && written > 0 { rotate() }
        let n = b.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if n > 0 { written += n }
    }

    private func party(_ p: AuditEntry.Party, _ b: inout [UInt8]) {
        b += Self.literal("{\"app\":"); string(p.app, &b)
        b += Self.literal(",\"identity\":"); string(p.identity, &b)
        b += Self.literal(",\"managed\":"); b += p.managed ? Self.literal("true") : Self.literal("false")
        b.append(UInt8(ascii: "}"))
    }

    /// Older logs kept beside the current one: `audit.jsonl.1` (the newest) to `.N`.
    public static let keptLogs = 8

    private func rotate() {
        // Shifted up one, the oldest dropped: a flood must write eight whole logs' worth of
        // decisions before a record it wants gone is gone.
        unlink(path + ".\(Self.keptLogs)")
        for n in stride(from: Self.keptLogs - 1, through: 1, by: -1) { _ = rename(path + ".\(n)", path + ".\(n + 1)") }
        guard rename(path, path + ".1") == 0 else { return }
        let next = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o640)
        guard next >= 0 else { _ = rename(path + ".1", path); return }
        close(fd)
        fd = next
        written = 0
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
    func timestamp(_ b: inout [UInt8]) {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
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
