import Glibc
import MAMPolicy
import MAMWire

/// Storage locations (OneDrive, SharePoint, the local drive, photos ...), kept by the broker.
public struct Locations: Sendable {
    let kit: Kit

    /// Saves a copy; the decision is the engine's for the data's owner (this app's effective identity).
    public func save(_ bytes: [UInt8], name: String, to location: SaveLocation, account: String?) async throws -> SharingDecision {
        let fd = try Documents.seal(bytes)
        defer { close(fd) }
        let replies = try await kit.acting(forUIWork: true) {
            try await kit.connection.request(.saveTo(location: UInt8(location.rawValue), account: account, name: name), descriptor: fd)
        }
        guard case let .decision(d)? = replies.first?.frame.message else { throw MAMKitError(.unexpectedReply, "saveTo") }
        return SharingDecision(d)
    }

    /// Opens a stored file: the decision, and when allowed its bytes and owner.
    public func open(_ name: String, from location: OpenLocation, account: String?) async throws
        -> (decision: SharingDecision, bytes: [UInt8]?, owner: String?) {
        let replies = try await kit.acting(forUIWork: true) {
            try await kit.connection.request(.openFrom(location: UInt8(location.rawValue), account: account, name: name), shape: .decisionThenItem)
        }
        guard case let .decision(d)? = replies.first?.frame.message else { throw MAMKitError(.unexpectedReply, "openFrom") }
        guard replies.count > 1, case let .file(_, owner) = replies[1].frame.message else { return (SharingDecision(d), nil, nil) }
        let bytes = Documents.take(replies[1].descriptor)
        // The file is shown under its owner's identity when the engine says the app switches
        // for it (org data of the enrolled account opened while another identity shows).
        if let snap = kit.snapshot, snap.app.isMultiIdentity, let arrival = kit.arrivalIdentity(snap, owner: owner, via: .import),
           kit.state.current.ui != arrival {
            await kit.switchForArrival(to: arrival.account.map { $0.upn ?? $0.name } ?? "", reason: .documentImport)
        }
        return (SharingDecision(d), bytes, owner)
    }
}
