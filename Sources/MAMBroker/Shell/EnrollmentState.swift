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
        guard let text = try db.read({ db in try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'enrollments'") }),
              let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { return ([], [], []) }
        let rows = object["enrollments"] as? [[String: Any]] ?? []
        let list: [Enrollment] = rows.compactMap { r in
            guard let app = r["app"] as? String, let account = r["account"] as? String, let state = r["state"] as? String else { return nil }
            let checkIn = now + .milliseconds(r["checkInInMs"] as? Int64 ?? 0)
            let s: Enrollment.State
            switch state {
            case "enrolled": s = .enrolled(policy: r["policy"] as? String ?? "")
            case "licensedNotTargeted": s = .licensedNotTargeted
            default:
                s = .failed(EnrollmentStatus(rawValue: r["status"] as? Int ?? 201) ?? .internalError, retryAt: now + .milliseconds(r["retryInMs"] as? Int64 ?? 0))
            }
            return Enrollment(app: app, account: account, state: s, nextCheckIn: checkIn, restartAsked: r["restartAsked"] as? Bool ?? false)
        }
        return (list, Set(object["pendingWipes"] as? [String] ?? []), Set(object["signedOut"] as? [String] ?? []))
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
