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

    /// State written before the enrollments were Codable (JSONSerialization's output: slashes
    /// escaped, no `signedOut`) loads as it did.
    @Test func stateFromBeforeLoads() throws {
        let (store, path) = try Self.store()
        defer { Self.remove(path) }
        let old = #"{"enrollments":[{"account":"adele@contoso.com","app":"com.contoso.mail","checkInInMs":3600000,"policy":"p\/1","restartAsked":false,"state":"enrolled"},{"account":"ben@contoso.com","app":"com.contoso.docs","checkInInMs":60000,"restartAsked":true,"retryInMs":600000,"state":"failed","status":201}],"pendingWipes":["ben@contoso.com"]}"#
        try store.db.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('enrollments', ?)", arguments: [old])
        }
        let loaded = try store.loadEnrollments(now: .zero)
        var expected = Self.list
        expected[0].state = .enrolled(policy: "p/1")
        #expect(loaded.enrollments == expected)
        #expect(loaded.pendingWipes == ["ben@contoso.com"] && loaded.signedOut.isEmpty)
    }

    /// A value of the wrong type is named by its place in the document, not defaulted.
    @Test(arguments: [
        (#"{"enrollments":[{"account":"a","app":"b","checkInInMs":"soon","restartAsked":false,"state":"licensedNotTargeted"}],"pendingWipes":[]}"#,
         #"enrollment 1: "checkInInMs" is not a whole number"#),
        (#"{"enrollments":[],"pendingWipes":"adele"}"#, #""pendingWipes" is not a list"#),
        (#"{"enrollments":[]}"#, #""pendingWipes" is missing"#),
        (#"{"enrollments":[],"pendingWipes":[],"signedOut":[3]}"#, #""signedOut": item 1 is not a string"#),
        ("[]", "the document is not a JSON object"),
    ])
    func aValueOfTheWrongTypeIsNamedByItsPlace(_ document: String, _ message: String) throws {
        let (store, path) = try Self.store()
        defer { Self.remove(path) }
        try store.db.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('enrollments', ?)", arguments: [document])
        }
        #expect { _ = try store.loadEnrollments(now: .zero) } throws: { "\($0)".contains(message) }
    }
}
