import MAMWire

/// Why a kit call could not be carried out (a refusal is not a decision: a blocked action
/// comes back as a `SharingDecision`, not as an error).
public struct MAMKitError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: Sendable, Equatable {
        /// The broker refused the request (`error` on the wire), with its code.
        case refused(WireErrorCode)
        /// The connection to the broker is closed (or was never there).
        case disconnected
        /// The broker answered something this request does not expect (or a reply that could not
        /// be read).
        case unexpectedReply
        /// The broker did not answer within the request's time-out.
        case timedOut
        /// The app passed something the kit cannot send (too long, not a name).
        case invalidArgument
        /// Data protection failed (no key, not protected, corrupt).
        case protection
    }

    public var code: Code
    public var detail: String

    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String {
        switch code {
        case let .refused(c): return "refused (\(c)): \(detail)"
        default: return "\(code): \(detail)"
        }
    }
}
