import Foundation
import GRDB
import MAMPolicy
import MAMService

/// The service's enrollments in the state database: one JSON document, written whole in one
/// transaction (a kill leaves the old list or the new one). Times are stored as what remains of
/// them, since the broker's clock starts anew with each run.
extension StateStore {
    public func saveEnrollments(_ list: [Enrollment], pendingWipes: Set<String>, signedOut: Set<String> = [], now: Duration) throws {
        let rows: [[String: Any]] = list.map { e in
            var row: [String: Any] = ["app": e.app, "account": e.account, "restartAsked": e.restartAsked,
                                      "checkInInMs": Self.ms(e.nextCheckIn - now)]
            switch e.state {
            case let .enrolled(policy): row["state"] = "enrolled"; row["policy"] = policy
            case .licensedNotTargeted: row["state"] = "licensedNotTargeted"
            case let .failed(status, retryAt): row["state"] = "failed"; row["status"] = status.rawValue; row["retryInMs"] = Self.ms(retryAt - now)
            }
            return row
        }
        let data = try JSONSerialization.data(withJSONObject: ["enrollments": rows, "pendingWipes": pendingWipes.sorted(),
                                                                 "signedOut": signedOut.sorted()], options: [.sortedKeys])
        try db.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('enrollments', ?)", arguments: [String(decoding: data, as: UTF8.self)])
        }
    }

    public func loadEnrollments(now: Duration) throws -> (enrollments: [Enrollment], pendingWipes: Set<String>, signedOut: Set<String>) {
        guard let text = try db.read({ db in try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'enrollments'") }) else { return ([], [], []) }
        guard let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { throw Self.bad("not a JSON object") }
        // A field missing or of another type is an error that says which: a made-up value (a
        // check-in due now, status 201) would be a decision nobody took.
        guard let rows = object["enrollments"] as? [[String: Any]] else { throw Self.bad("\"enrollments\" is not a list") }
        let list: [Enrollment] = try rows.enumerated().map { i, r in
            func field<T>(_ key: String, _ type: T.Type) throws -> T {
                guard let value = r[key] as? T else { throw Self.bad("enrollment \(i + 1): \"\(key)\" is missing or not a \(T.self)") }
                return value
            }
            let app = try field("app", String.self), account = try field("account", String.self)
            let checkIn = now + .milliseconds(try field("checkInInMs", Int64.self))
            let s: Enrollment.State
            switch try field("state", String.self) {
            case "enrolled": s = .enrolled(policy: try field("policy", String.self))
            case "licensedNotTargeted": s = .licensedNotTargeted
            case "failed":
                let code = try field("status", Int.self)
                guard let status = EnrollmentStatus(rawValue: code) else { throw Self.bad("enrollment \(i + 1): status \(code) is not an enrollment status") }
                s = .failed(status, retryAt: now + .milliseconds(try field("retryInMs", Int64.self)))
            case let other: throw Self.bad("enrollment \(i + 1): state \"\(other)\" is not enrolled, licensedNotTargeted or failed")
            }
            return Enrollment(app: app, account: account, state: s, nextCheckIn: checkIn, restartAsked: try field("restartAsked", Bool.self))
        }
        guard let wipes = object["pendingWipes"] as? [String] else { throw Self.bad("\"pendingWipes\" is not a list of accounts") }
        // Older state has no sign-outs: none were recorded then, so absence means none; a value
        // of another type is damage, not age.
        let signedOut: [String]
        switch object["signedOut"] {
        case nil: signedOut = []
        case let list as [String]: signedOut = list
        default: throw Self.bad("\"signedOut\" is not a list of app and account keys")
        }
        return (list, Set(wipes), Set(signedOut))
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
