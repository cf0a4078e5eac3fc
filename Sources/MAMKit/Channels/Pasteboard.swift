import MAMPolicy
import MAMWire

/// The general pasteboard, kept by the broker: an item keeps its copier's identity and policy.
public struct Pasteboard: Sendable {
    let kit: Kit

    /// The type the sample apps copy as.
    public static let plainText = "public.utf8-plain-text"

    /// Copies text; returns the pasteboard's new change count.
    public func copy(_ text: String, types: [String] = [Pasteboard.plainText]) async throws -> UInt32 {
        guard text.utf8.count <= Wire.maximumPasteText else {
            throw MAMKitError(.invalidArgument, "the text is \(text.utf8.count) bytes; the pasteboard takes at most \(Wire.maximumPasteText)")
        }
        let replies = try await kit.acting { try await kit.connection.request(.copy(text: text, types: types)) }
        guard case let .copied(n)? = replies.first?.frame.message else { throw MAMKitError(.unexpectedReply, "copy") }
        return n
    }

    /// Pastes: the engine's decision and what arrived (the replacement text when blocked).
    public func paste() async throws -> (decision: SharingDecision, text: String) {
        let replies = try await kit.acting { try await kit.connection.request(.paste) }
        guard case let .pasteResult(d, text)? = replies.first?.frame.message else { throw MAMKitError(.unexpectedReply, "paste") }
        return (SharingDecision(d), text)
    }
}
