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
        var object: [String: Any] = [
            "time": ISO8601DateFormatter.audit.string(from: Date()), "id": r.id, "channel": r.channel,
            "source": ["app": r.source.app, "identity": r.source.identity],
            "outcome": r.outcome, "rule": r.rule, "tag": r.tag, "revision": r.revision,
        ]
        if let t = r.target { object["target"] = ["app": t.app, "identity": t.identity] }
        if let d = r.dataType { object["type"] = d }
        if let s = r.size { object["size"] = s }
        guard var line = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        line.append(0x0A)
        _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
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
