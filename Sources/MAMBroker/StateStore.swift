import Foundation
import GRDB

/// What must survive a broker restart, in SQLite in the device directory: the pasteboard, the
/// owners of saved files, and the block of decision ids in use. Every change is a transaction,
/// so a kill at any moment leaves the state before or after it (DESIGN.md, "State").
public final class StateStore: @unchecked Sendable {
    let db: DatabaseQueue
    /// Decision ids are handed out from blocks reserved in the database, so an id is never reused
    /// after a crash without a write per decision.
    private var nextID: UInt64 = 0
    private var blockEnd: UInt64 = 0
    static let block: UInt64 = 4096

    public struct PasteboardRow: Sendable, Equatable {
        public var text: String
        public var types: [String]
        public var ownerApp: String
        public var ownerIdentity: String
        public var changeCount: UInt32
    }

    public init(path: String) throws {
        db = try DatabaseQueue(path: path)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.create(table: "meta") { t in
                t.primaryKey("key", .text)
                t.column("value", .text).notNull()
            }
            try db.create(table: "pasteboard") { t in
                t.primaryKey("id", .integer).check { $0 == 1 }
                t.column("text", .text).notNull()
                t.column("types", .text).notNull()
                t.column("ownerApp", .text).notNull()
                t.column("ownerIdentity", .text).notNull()
                t.column("changeCount", .integer).notNull()
            }
            try db.create(table: "fileOwner") { t in
                t.primaryKey("path", .text)
                t.column("owner", .text).notNull()
                t.column("app", .text).notNull()
                t.column("savedAt", .datetime).notNull()
            }
        }
        try migrator.migrate(db)
    }

    /// The next decision id.
    public func nextDecisionID() throws -> UInt64 {
        if nextID >= blockEnd {
            let start: UInt64 = try db.write { db in
                let current = try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'idBlock'").flatMap { UInt64($0) } ?? 0
                try db.execute(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('idBlock', ?)", arguments: [String(current + Self.block)])
                return current
            }
            nextID = start + 1
            blockEnd = start + Self.block
        }
        defer { nextID += 1 }
        return nextID
    }

    public func savePasteboard(_ row: PasteboardRow) throws {
        let types = String(decoding: try JSONSerialization.data(withJSONObject: row.types), as: UTF8.self)
        try db.write { db in
            try db.execute(sql: """
                INSERT OR REPLACE INTO pasteboard (id, text, types, ownerApp, ownerIdentity, changeCount)
                VALUES (1, ?, ?, ?, ?, ?)
                """, arguments: [row.text, types, row.ownerApp, row.ownerIdentity, Int(row.changeCount)])
        }
    }

    public func loadPasteboard() throws -> PasteboardRow? {
        try db.read { db in
            guard let r = try Row.fetchOne(db, sql: "SELECT * FROM pasteboard WHERE id = 1") else { return nil }
            let typesText: String = r["types"]
            let types = (try? JSONSerialization.jsonObject(with: Data(typesText.utf8)) as? [String]) ?? []
            return PasteboardRow(text: r["text"], types: types, ownerApp: r["ownerApp"], ownerIdentity: r["ownerIdentity"],
                                 changeCount: UInt32(truncatingIfNeeded: r["changeCount"] as Int))
        }
    }

    public func recordOwner(path: String, owner: String, app: String) throws {
        try db.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO fileOwner (path, owner, app, savedAt) VALUES (?, ?, ?, ?)",
                           arguments: [path, owner, app, Date()])
        }
    }
}
