import Foundation
import GRDB
import MAMBrokerCore
import MAMProtect
import MAMWire
import SystemPackage

/// What must survive a broker restart, in SQLite in the device directory: the pasteboard, the
/// stored files with their owners, the accounts' keys, and the block of decision ids in use. Every change is a transaction,
/// so a kill at any moment leaves the state before or after it.
public final class StateStore: @unchecked Sendable {
    let db: DatabaseQueue
    /// Decision ids are handed out from blocks reserved in the database, so an id is never reused
    /// after a crash without a write per decision.
    private var nextID: UInt64 = 0
    private var blockEnd: UInt64 = 0
    static let block: UInt64 = 4096
    /// Where the next block is reserved while the current one is half used, so the caller (the
    /// broker's loop) does not wait for that write; nil: reserved when needed.
    var reserveAhead: DispatchQueue?
    private let aheadLock = Mutex()
    nonisolated(unsafe) private var aheadBlock: UInt64?
    private var aheadAsked = false

    /// The database holds every managed account's key and the pasteboard's managed text: it is
    /// the broker's alone (0600), made so before anything is written to it, and an older file
    /// readable by others is tightened. SQLite gives its WAL and shared-memory files the
    /// database's mode; those an earlier run left are tightened too.
    static func restrictToOwner(_ path: String) throws {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw BrokerError("cannot make \(path) the broker's alone: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        // A file another user made (in a folder that was once theirs) would be theirs to read
        // whatever its mode: refused, as are its companions.
        do { try TrustedPath.checkOwnFile(FileDescriptor(rawValue: fd), shown: path) } catch { throw BrokerError("cannot keep the broker's state in \(error)") }
        guard fchmod(fd, 0o600) == 0 else { throw BrokerError("cannot make \(path) the broker's alone: \(String(cString: strerror(errno)))") }
        for suffix in ["-wal", "-shm", "-journal"] {
            let companion = path + suffix
            let cfd = open(companion, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
            guard cfd >= 0 else { continue }
            defer { close(cfd) }
            do { try TrustedPath.checkOwnFile(FileDescriptor(rawValue: cfd), shown: companion) } catch { throw BrokerError("cannot keep the broker's state in \(error)") }
            guard fchmod(cfd, 0o600) == 0 else { throw BrokerError("cannot make \(companion) the broker's alone: \(String(cString: strerror(errno)))") }
        }
    }

    public init(path: String) throws {
        try Self.restrictToOwner(path)
        var config = Configuration()
        // WAL: a commit is one append to the log, and a kill -9 at any moment leaves the state
        // before or after each transaction (what is written is in the kernel's hands).
        // Another process that holds the database a moment (an administrator's sqlite3) delays
        // a write rather than losing it; the loop never waits for one (HeldReplies).
        config.busyMode = .timeout(10)
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        db = try DatabaseQueue(path: path, configuration: config)
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
        migrator.registerMigration("v2: stored files by location, account folder and name; account keys") { db in
            // Owners were recorded by path and never read; files are now keyed by what the
            // broker owns (location folder, account folder, name) and carry their size.
            try db.drop(table: "fileOwner")
            try db.create(table: "storedFile") { t in
                t.column("folder", .text).notNull()
                t.column("accountFolder", .text).notNull()
                t.column("name", .text).notNull()
                t.column("owner", .text)
                t.column("app", .text).notNull()
                t.column("size", .integer).notNull()
                t.column("savedAt", .datetime).notNull()
                t.primaryKey(["folder", "accountFolder", "name"])
            }
            try db.create(table: "accountKey") { t in
                t.primaryKey("keyID", .text)
                t.column("key", .blob).notNull()
                t.column("createdAt", .datetime).notNull()
            }
        }
        try migrator.migrate(db)
    }

    /// The next decision id.
    public func nextDecisionID() throws -> UInt64 {
        if nextID >= blockEnd {
            // The block reserved ahead, unless the loop outran it and reserved a later one itself.
            let ahead = aheadLock.withLock { () -> UInt64? in
                defer { aheadBlock = nil }
                return aheadBlock
            }
            let start = try ahead.flatMap { $0 >= blockEnd ? $0 : nil } ?? reserveBlock()
            nextID = start + 1
            blockEnd = start + Self.block
            aheadAsked = false
        }
        if !aheadAsked, let queue = reserveAhead, blockEnd - nextID <= Self.block / 2 {
            aheadAsked = true
            queue.async { [self] in
                guard let start = try? reserveBlock() else { return }
                aheadLock.withLock { aheadBlock = start }
            }
        }
        defer { nextID += 1 }
        return nextID
    }

    /// Reserves the next block of ids in the database; returns its start.
    private func reserveBlock() throws -> UInt64 {
        try db.write { db in
            let current = try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'idBlock'").flatMap { UInt64($0) } ?? 0
            try db.execute(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('idBlock', ?)", arguments: [String(current + Self.block)])
            return current
        }
    }

    public func savePasteboard(_ row: PasteboardState) throws {
        let types = String(decoding: try JSONSerialization.data(withJSONObject: row.types), as: UTF8.self)
        try db.write { db in
            try db.execute(sql: """
                INSERT OR REPLACE INTO pasteboard (id, text, types, ownerApp, ownerIdentity, changeCount)
                VALUES (1, ?, ?, ?, ?, ?)
                """, arguments: [row.text, types, row.ownerApp, row.ownerIdentity, Int(row.changeCount)])
        }
    }

    public func loadPasteboard() throws -> PasteboardState? {
        try db.read { db in
            guard let r = try Row.fetchOne(db, sql: "SELECT * FROM pasteboard WHERE id = 1") else { return nil }
            let typesText: String = r["types"]
            let types = (try? JSONSerialization.jsonObject(with: Data(typesText.utf8)) as? [String]) ?? []
            return PasteboardState(text: r["text"], types: types, ownerApp: r["ownerApp"], ownerIdentity: r["ownerIdentity"],
                                 changeCount: UInt32(truncatingIfNeeded: r["changeCount"] as Int))
        }
    }

    public func saveFile(_ f: StoredFile) throws {
        try db.write { db in
            try db.execute(sql: """
                INSERT OR REPLACE INTO storedFile (folder, accountFolder, name, owner, app, size, savedAt) VALUES (?, ?, ?, ?, ?, ?, ?)
                """, arguments: [f.key.folder, f.key.accountFolder ?? "", f.key.name, f.owner, f.app, f.size, Date()])
        }
    }

    public func loadFiles() throws -> [StoredFile] {
        try db.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM storedFile").map { r in
                let account: String = r["accountFolder"]
                return StoredFile(key: StoredFileKey(folder: r["folder"], accountFolder: account.isEmpty ? nil : account, name: r["name"]),
                                  owner: r["owner"], app: r["app"], size: r["size"])
            }
        }
    }

    /// The key of an account, made (256 random bits) and kept the first time it is asked for.
    /// Keys never leave the broker's state except as ciphertext made under them.
    public func key(for keyID: String) throws -> [UInt8] {
        try db.write { db in
            if let existing = try Data.fetchOne(db, sql: "SELECT key FROM accountKey WHERE keyID = ?", arguments: [keyID]) {
                return Array(existing)
            }
            let key = DocumentCipher.newKey()
            try db.execute(sql: "INSERT INTO accountKey (keyID, key, createdAt) VALUES (?, ?, ?)", arguments: [keyID, Data(key), Date()])
            return key
        }
    }
}
