import Foundation
import Glibc

/// The audit log: one JSON line per decision, appended with a single write so that a kill at
/// any moment leaves whole lines only (DESIGN.md, "Audit").
public final class AuditLog: @unchecked Sendable {
    public struct Party: Sendable {
        public var app: String
        public var identity: String
        public init(app: String, identity: String) {
            self.app = app
            self.identity = identity
        }
    }

    public struct Record: Sendable {
        public var id: UInt64
        public var source: Party
        public var target: Party?
        public var channel: String
        public var dataType: String?
        public var size: Int?
        public var outcome: String
        public var rule: String
        public var tag: String
        public var revision: Int
    }

    private let fd: Int32
    public let path: String

    public init(path: String) throws {
        self.path = path
        fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o640)
        guard fd >= 0 else { throw BrokerError("cannot open the audit log \(path): \(String(cString: strerror(errno)))") }
    }

    deinit { close(fd) }

    public func append(_ r: Record) {
        // Written byte by byte: this runs for every decision, and Foundation's JSON writer, its
        // date formatter, and even string interpolation cost more than the decision itself. Keys
        // come out sorted, as a reader expects.
        var b = [UInt8]()
        b.reserveCapacity(320)
        b += Self.literal("{\"channel\":"); string(r.channel, &b)
        b += Self.literal(",\"id\":"); number(UInt64(r.id), &b)
        b += Self.literal(",\"outcome\":"); string(r.outcome, &b)
        b += Self.literal(",\"revision\":"); number(UInt64(r.revision), &b)
        b += Self.literal(",\"rule\":"); string(r.rule, &b)
        if let size = r.size { b += Self.literal(",\"size\":"); number(UInt64(size), &b) }
        b += Self.literal(",\"source\":{\"app\":"); string(r.source.app, &b)
        b += Self.literal(",\"identity\":"); string(r.source.identity, &b)
        b += Self.literal("},\"tag\":"); string(r.tag, &b)
        if let t = r.target {
            b += Self.literal(",\"target\":{\"app\":"); string(t.app, &b)
            b += Self.literal(",\"identity\":"); string(t.identity, &b)
            b.append(UInt8(ascii: "}"))
        }
        b += Self.literal(",\"time\":\""); timestamp(&b); b.append(UInt8(ascii: "\""))
        if let d = r.dataType { b += Self.literal(",\"type\":"); string(d, &b) }
        b += Self.literal("}\n")
        _ = b.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }

    @inline(__always) static func literal(_ s: StaticString) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount)
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped.
    func string(_ s: String, _ b: inout [UInt8]) {
        b.append(UInt8(ascii: "\""))
        for c in s.utf8 {
            switch c {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): b.append(UInt8(ascii: "\\")); b.append(c)
            case 0x0A: b.append(UInt8(ascii: "\\")); b.append(UInt8(ascii: "n"))
            case 0x0D: b.append(UInt8(ascii: "\\")); b.append(UInt8(ascii: "r"))
            case 0x09: b.append(UInt8(ascii: "\\")); b.append(UInt8(ascii: "t"))
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                b += Array("\\u00".utf8)
                b.append(hex[Int(c >> 4)]); b.append(hex[Int(c & 0xF)])
            default: b.append(c)
            }
        }
        b.append(UInt8(ascii: "\""))
    }

    func number(_ v: UInt64, _ b: inout [UInt8]) {
        if v == 0 { b.append(UInt8(ascii: "0")); return }
        var digits: [UInt8] = []
        var n = v
        while n > 0 { digits.append(UInt8(ascii: "0") + UInt8(n % 10)); n /= 10 }
        b += digits.reversed()
    }

    /// UTC with milliseconds: 2026-11-22T13:30:02.272Z.
    func timestamp(_ b: inout [UInt8]) {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        var t = tm()
        var seconds = ts.tv_sec
        gmtime_r(&seconds, &t)
        func digits(_ v: Int, _ width: Int) {
            var out = [UInt8](repeating: UInt8(ascii: "0"), count: width)
            var n = v
            for i in stride(from: width - 1, through: 0, by: -1) { out[i] = UInt8(ascii: "0") + UInt8(n % 10); n /= 10 }
            b += out
        }
        digits(Int(t.tm_year) + 1900, 4); b.append(UInt8(ascii: "-"))
        digits(Int(t.tm_mon) + 1, 2); b.append(UInt8(ascii: "-"))
        digits(Int(t.tm_mday), 2); b.append(UInt8(ascii: "T"))
        digits(Int(t.tm_hour), 2); b.append(UInt8(ascii: ":"))
        digits(Int(t.tm_min), 2); b.append(UInt8(ascii: ":"))
        digits(Int(t.tm_sec), 2); b.append(UInt8(ascii: "."))
        digits(ts.tv_nsec / 1_000_000, 3); b.append(UInt8(ascii: "Z"))
    }
}

extension ISO8601DateFormatter {
    nonisolated(unsafe) static let audit: ISO8601DateFormatter = {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f
    }()
}

public struct BrokerError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
