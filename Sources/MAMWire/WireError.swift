/// Why a frame or a conversation was refused. The code travels in `.error` replies.
public enum WireErrorCode: UInt16, Sendable, CaseIterable {
    case badMagic = 1
    case unsupportedVersion = 2
    case unknownType = 3
    case truncated = 4
    case oversized = 5
    case fieldOutOfRange = 6
    case invalidText = 7
    case trailingBytes = 8
    case outOfOrder = 9
    case missingDescriptor = 10
    case unexpectedDescriptor = 11
    case notAllowed = 12
    case unknownTarget = 13
    case internalError = 14
    /// A bound was reached: a size, a quota, a number of waiting requests.
    case limitReached = 15
    /// A name field broke the name rules (docs/PROTOCOL.md, "Names").
    case invalidName = 16
}

/// A decoding or protocol error: the code, and what and where, for the error reply.
public struct WireError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: WireErrorCode
    public var detail: String

    public init(_ code: WireErrorCode, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "\(code): \(detail)" }
}
