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
        // Written by hand: this runs for every decision, and Foundation's JSON writer and date
        // formatter cost more than the decision itself. Keys come out sorted, as a reader expects.
        var line = "{\"channel\":\(json(r.channel)),\"id\":\(r.id),\"outcome\":\(json(r.outcome)),\"revision\":\(r.revision)"
        line += ",\"rule\":\(json(r.rule))"
        if let s = r.size { line += ",\"size\":\(s)" }
        line += ",\"source\":{\"app\":\(json(r.source.app)),\"identity\":\(json(r.source.identity))}"
        line += ",\"tag\":\(json(r.tag))"
        if let t = r.target { line += ",\"target\":{\"app\":\(json(t.app)),\"identity\":\(json(t.identity))}" }
        line += ",\"time\":\"\(Self.timestamp())\""
        if let d = r.dataType { line += ",\"type\":\(json(d))" }
        line += "}\n"
        var bytes = Array(line.utf8)
        _ = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress, $0.count) }
    }

    /// A JSON string literal.
    func json(_ s: String) -> String {
        var out = "\""
        for c in s.unicodeScalars {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if c.value < 0x20 { out += String(format: "\\u%04x", c.value) } else { out.unicodeScalars.append(c) }
            }
        }
        return out + "\""
    }

    /// UTC, milliseconds: 2026-11-22T13:30:02.272Z.
    static func timestamp() -> String {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        var t = tm()
        var seconds = ts.tv_sec
        gmtime_r(&seconds, &t)
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let ms = ts.tv_nsec / 1_000_000
        let msText = ms < 10 ? "00\(ms)" : ms < 100 ? "0\(ms)" : "\(ms)"
        return "\(t.tm_year + 1900)-\(two(t.tm_mon + 1))-\(two(t.tm_mday))T\(two(t.tm_hour)):\(two(t.tm_min)):\(two(t.tm_sec)).\(msText)Z"
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
