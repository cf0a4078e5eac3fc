import Foundation
import GRDB
@testable import MAMBroker
import MAMBrokerCore
import MAMService
import Testing

/// Enrollments kept in the state database (issue 20): a saved list comes back as it was, and a
/// field that is missing is an error naming it, never a made-up value (a check-in due at once,
/// status 201).
@Suite("Broker state: saved enrollments")
struct EnrollmentStateTests {
    /// The database and the log and index SQLite keeps beside it.
    static func remove(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
    }

    static func store() throws -> (StateStore, String) {
        let path = "/tmp/mamlab-state-\(UUID().uuidString.prefix(8)).sqlite"
        return (try StateStore(path: path), path)
    }

    static let list = [
        Enrollment(app: "com.contoso.mail", account: "adele@contoso.com", state: .enrolled(policy: "p1"), nextCheckIn: .seconds(3600)),
        Enrollment(app: "com.contoso.docs", account: "ben@contoso.com", state: .failed(.internalError, retryAt: .seconds(600)),
                   nextCheckIn: .seconds(60), restartAsked: true),
    ]

    @Test func savedEnrollmentsComeBackAsTheyWere() throws {
        let (store, path) = try Self.store()
        defer { Self.remove(path) }
        try store.saveEnrollments(Self.list, pendingWipes: ["ben@contoso.com"], now: .zero)
        let loaded = try store.loadEnrollments(now: .zero)
        #expect(loaded.enrollments == Self.list && loaded.pendingWipes == ["ben@contoso.com"])
    }

    @Test(arguments: ["checkInInMs", "status", "retryInMs", "restartAsked", "state"])
    func aMissingFieldIsAnErrorThatNamesIt(_ field: String) throws {
        let (store, path) = try Self.store()
        defer { Self.remove(path) }
        try store.saveEnrollments(Self.list, pendingWipes: [], now: .zero)
        // The failed enrollment (the second) loses the field.
        try store.db.write { db in
            let text = try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'enrollments'") ?? ""
            var object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as! [String: Any]
            var rows = object["enrollments"] as! [[String: Any]]
            let failed = rows.firstIndex { $0["state"] as? String == "failed" }!
            rows[failed][field] = nil
            object["enrollments"] = rows
            let data = try JSONSerialization.data(withJSONObject: object)
            try db.execute(sql: "UPDATE meta SET value = ? WHERE key = 'enrollments'", arguments: [String(decoding: data, as: UTF8.self)])
        }
        #expect { _ = try store.loadEnrollments(now: .zero) } throws: { "\($0)".contains("enrollment 2: \"\(field)\" is missing") }
    }
}
