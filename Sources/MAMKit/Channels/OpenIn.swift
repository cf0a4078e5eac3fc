import Glibc
import MAMPolicy
import MAMWire
import SystemPackage

/// Open-in and share: the share sheet, pushes to another app, active imports from one, and
/// what this app hands out when another imports from it.
public struct OpenIn: Sendable {
    let kit: Kit

    public struct Target: Sendable, Hashable {
        public var bundleID: String
        /// What a push to it would come to.
        public var outcome: Outcome
    }

    /// The share sheet for a content type: running apps that take it, with their outcome.
    public func targets(for contentType: String) async throws -> [Target] {
        let replies = try await kit.acting { try await kit.connection.request(.listTargets(contentType: contentType)) }
        guard case let .targets(list)? = replies.first?.frame.message else { throw MAMKitError(.unexpectedReply, "listTargets") }
        let outcomes = Outcome.allCases
        return list.map { Target(bundleID: $0.bundleID, outcome: Int($0.outcome) < outcomes.count ? outcomes[Int($0.outcome)] : .blocked) }
    }

    /// Pushes a document to `target` (open-in).
    public func share(_ bytes: [UInt8], name: String, contentType: String, to target: String) async throws -> SharingDecision {
        let fd = try Documents.seal(bytes)
        defer { close(fd) }
        let replies = try await kit.acting {
            try await kit.connection.request(.share(target: target, contentType: contentType, name: name), descriptor: fd)
        }
        guard case let .decision(d)? = replies.first?.frame.message else { throw MAMKitError(.unexpectedReply, "share") }
        return SharingDecision(d)
    }

    /// Active import: asks `source` for a document of the type. The decision, and the document
    /// when it was allowed.
    public func importDocument(from source: String, contentType: String) async throws -> (decision: SharingDecision, document: ReceivedDocument?) {
        let replies = try await kit.acting {
            try await kit.connection.request(.importRequest(source: source, contentType: contentType), shape: .decisionThenItem)
        }
        guard case let .decision(d)? = replies.first?.frame.message else { throw MAMKitError(.unexpectedReply, "importRequest") }
        var document: ReceivedDocument?
        if replies.count > 1, case let .document(type, name, owner, encrypted) = replies[1].frame.message {
            document = await kit.receive(type: type, name: name, owner: owner, encrypted: encrypted, descriptor: replies[1].descriptor, via: .import)
        }
        return (SharingDecision(d), document)
    }

    /// What this app hands out when another app imports a document of `contentType` from it.
    public func serve(_ bytes: [UInt8], name: String, contentType: String) {
        kit.state.withLock { $0.served[contentType.lowercased()] = (name, bytes) }
    }
}

/// Sealed memfds, as the broker takes documents.
enum Documents {
    static func seal(_ bytes: [UInt8]) throws -> Int32 {
        do { return try SealedDocument.create(bytes).release() } catch { throw MAMKitError(.invalidArgument, "the document could not be sealed: \(error)") }
    }

    /// Reads and closes a received descriptor.
    static func take(_ fd: Int32?) -> [UInt8] {
        guard let fd else { return [] }
        defer { close(fd) }
        return SealedDocument.read(FileDescriptor(rawValue: fd))
    }
}
