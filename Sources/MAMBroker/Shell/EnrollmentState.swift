import Foundation
import GRDB
import MAMPolicy
import MAMService

/// The service's enrollments in the state database: one JSON document, written whole in one
/// transaction (a kill leaves the old list or the new one). Times are stored as what remains of
/// them, since the broker's clock starts anew with each run.
extension StateStore {
    /// The document as it is stored (`meta`, key `enrollments`).
    struct SavedEnrollments: Codable {
        var enrollments: [Row]
        var pendingWipes: [String]
        /// Older state has no sign-outs: none were recorded then, so absence means none.
        var signedOut: [String]?

        /// One enrollment; `policy` with `enrolled`, `status` and `retryInMs` with `failed`.
        struct Row: Codable {
            var app: String
            var account: String
            var restartAsked: Bool
            var checkInInMs: Int64
            var state: String
            var policy: String?
            var status: Int?
            var retryInMs: Int64?
        }
    }

    public func saveEnrollments(_ list: [Enrollment], pendingWipes: Set<String>, signedOut: Set<String> = [], now: Duration) throws {
        let rows = list.map { e in
            var row = SavedEnrollments.Row(app: e.app, account: e.account, restartAsked: e.restartAsked,
                                           checkInInMs: Self.ms(e.nextCheckIn - now), state: "")
            switch e.state {
            case let .enrolled(policy): row.state = "enrolled"; row.policy = policy
            case .licensedNotTargeted: row.state = "licensedNotTargeted"
            case let .failed(status, retryAt): row.state = "failed"; row.status = status.rawValue; row.retryInMs = Self.ms(retryAt - now)
            }
            return row
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(SavedEnrollments(enrollments: rows, pendingWipes: pendingWipes.sorted(), signedOut: signedOut.sorted()))
        try db.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('enrollments', ?)", arguments: [String(decoding: data, as: UTF8.self)])
        }
    }

    public func loadEnrollments(now: Duration) throws -> (enrollments: [Enrollment], pendingWipes: Set<String>, signedOut: Set<String>) {
        guard let text = try db.read({ db in try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'enrollments'") }) else { return ([], [], []) }
        // A field missing or of another type is an error that says which: a made-up value (a
        // check-in due now, status 201) would be a decision nobody took.
        let saved: SavedEnrollments
        do { saved = try JSONDecoder().decode(SavedEnrollments.self, from: Data(text.utf8)) } catch let error as DecodingError {
            throw Self.bad(Self.describe(error))
        } catch {
            throw Self.bad("not JSON: \(error)")
        }
        let list: [Enrollment] = try saved.enrollments.enumerated().map { i, r in
            func field<T>(_ key: String, _ value: T?) throws -> T {
                guard let value else { throw Self.bad("enrollment \(i + 1): \"\(key)\" is missing (state \(r.state))") }
                return value
            }
            let s: Enrollment.State
            switch r.state {
            case "enrolled": s = .enrolled(policy: try field("policy", r.policy))
            case "licensedNotTargeted": s = .licensedNotTargeted
            case "failed":
                let code = try field("status", r.status)
                guard let status = EnrollmentStatus(rawValue: code) else { throw Self.bad("enrollment \(i + 1): status \(code) is not an enrollment status") }
                s = .failed(status, retryAt: now + .milliseconds(try field("retryInMs", r.retryInMs)))
            case let other: throw Self.bad("enrollment \(i + 1): state \"\(other)\" is not enrolled, licensedNotTargeted or failed")
            }
            return Enrollment(app: r.app, account: r.account, state: s, nextCheckIn: now + .milliseconds(r.checkInInMs), restartAsked: r.restartAsked)
        }
        return (list, Set(saved.pendingWipes), Set(saved.signedOut ?? []))
    }

    /// A decoding failure in the document's own words: which enrollment, which key, what is wrong.
    static func describe(_ error: DecodingError) -> String {
        func place(_ path: [any CodingKey]) -> String {
            var words: [String] = []
            for (i, key) in path.enumerated() {
                if let index = key.intValue {
                    words.append(i > 0 && path[i - 1].stringValue == "enrollments" ? "enrollment \(index + 1)" : "item \(index + 1)")
                } else if !(key.stringValue == "enrollments" && i + 1 < path.count) {
                    words.append("\"\(key.stringValue)\"")
                }
            }
            return words.isEmpty ? "the document" : words.joined(separator: ": ")
        }
        switch error {
        case let .keyNotFound(key, context):
            return place(context.codingPath + [key]) + " is missing"
        case let .typeMismatch(type, context), let .valueNotFound(type, context):
            return place(context.codingPath) + " is not " + kind(type)
        case let .dataCorrupted(context):
            return place(context.codingPath) + ": \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }

    /// A JSON type as the document's reader would name it.
    static func kind(_ type: Any.Type) -> String {
        let name = String(describing: type)
        if name.hasPrefix("Array") { return "a list" }
        if name.hasPrefix("Dictionary") { return "a JSON object" }
        if name.hasPrefix("Int") { return "a whole number" }
        if name == "Bool" { return "true or false" }
        if name == "String" { return "a string" }
        return "a \(name)"
    }

    static func bad(_ what: String) -> BrokerError {
        BrokerError("state.sqlite: the saved enrollments cannot be read: \(what)")
    }

    /// Destroys an account's key: what was encrypted under it can never be read again.
    public func destroyKey(_ keyID: String) throws {
        try db.write { db in try db.execute(sql: "DELETE FROM accountKey WHERE keyID = ?", arguments: [keyID]) }
    }

    static func ms(_ d: Duration) -> Int64 {
        let (s, atto) = d.components
        return s * 1000 + atto / 1_000_000_000_000_000
    }
}
