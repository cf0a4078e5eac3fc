import MAMPolicy
import MAMWire

/// Opening URLs in other apps, and receiving them (the broker routes, the engine decides).
public struct URLChannel: Sendable {
    let kit: Kit

    /// `canOpenURL`: the queries list, the twin and the policy, as the broker answers.
    public func canOpen(_ url: String) async throws -> Bool {
        try Self.checkLength(url)
        let replies = try await kit.acting { try await kit.connection.request(.canOpenURL(url: url)) }
        guard case let .canOpenURLResult(b)? = replies.first?.frame.message else { throw MAMKitError(.unexpectedReply, "canOpenURL") }
        return b
    }

    /// Opens a URL in the app that handles it, under the effective identity. The decision's
    /// `detail` is the URL as delivered (wrapped, rewritten).
    public func open(_ url: String) async throws -> SharingDecision {
        try Self.checkLength(url)
        let replies = try await kit.acting { try await kit.connection.request(.openURL(url: url)) }
        guard case let .decision(d)? = replies.first?.frame.message else { throw MAMKitError(.unexpectedReply, "openURL") }
        let decision = SharingDecision(d)
        kit.logger.info("open URL", metadata: ["url": "\(url)", "outcome": "\(decision.outcome.rawValue)", "rule": "\(decision.rule)"])
        return decision
    }

    /// The handler for URLs other apps open in this one; while it runs,
    /// `PolicyManager.accountForCurrentActivity` is the sender's account.
    public func setHandler(_ handler: (@Sendable (URLDelivery) async -> Void)?) {
        kit.state.withLock { $0.urlHandler = handler }
    }

    static func checkLength(_ url: String) throws {
        guard url.utf8.count <= Wire.maximumText else {
            throw MAMKitError(.invalidArgument, "the URL is \(url.utf8.count) bytes; at most \(Wire.maximumText)")
        }
    }
}
