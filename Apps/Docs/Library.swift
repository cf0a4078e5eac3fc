import Foundation
import MAMKit
import MAMSampleSupport

// Story: files that keep their owner. A file of a managed account is stored encrypted with that
// account's key (data protection); the owner travels inside the protected bytes, so Docs can say
// whose a file is, and a selective wipe of the account leaves it unreadable.

/// The files, in `library/` in the app's container.
struct Library: Sendable {
    let folder = "library"

    func path(_ name: String) throws -> String {
        // A file name, not a path: nothing outside the library.
        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else { throw UsageError("a file name, without /") }
        return folder + "/" + name
    }

    func names() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted() }

    func store(_ name: String, _ bytes: [UInt8]) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: try path(name)), options: .atomic)
    }

    func load(_ name: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: try path(name)) else { throw UsageError("no file \(name); `list` shows them") }
        return Array(data)
    }
}

extension Docs {
    /// Stores bytes owned by `owner`: protected (encrypted, owner inside) when the owner is managed.
    func write(_ name: String, _ bytes: [UInt8], owner: String?) async throws {
        // protect(_:for:) returns the bytes unchanged when the owner is not managed here.
        var stored = bytes
        if let owner { stored = try await app.dataProtection.protect(bytes, for: owner) }
        try library.store(name, stored)
        console.say("Wrote \(name), owned by \(owner ?? "nobody (personal)")\(stored == bytes ? "" : ", encrypted").")
    }

    func read(_ name: String) async throws {
        let stored = try library.load(name)
        // unprotect finds the key from the owner recorded in the bytes.
        let text = String(decoding: try await app.dataProtection.unprotect(stored), as: UTF8.self)
        console.say("\(name) (owner: \(app.dataProtection.owner(of: stored) ?? "personal")):\n\(text)")
    }

    func list() {
        let names = library.names()
        console.say(names.isEmpty ? "(no files)" : names.map { name in
            let owner = (try? library.load(name)).flatMap { app.dataProtection.owner(of: $0) }
            return "  \(name)  owner: \(owner ?? "personal")"
        }.joined(separator: "\n"))
    }

    /// A file's plaintext and its owner, for sending or saving it.
    func contents(_ name: String) async throws -> (bytes: [UInt8], owner: String?) {
        let stored = try library.load(name)
        return (try await app.dataProtection.unprotect(stored), app.dataProtection.owner(of: stored))
    }
}
