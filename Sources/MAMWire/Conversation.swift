/// The order a conversation must keep, seen from the broker: `hello` first and once; then
/// only what an app may send. Anything else is out of order (docs/PROTOCOL.md, "Order").
public struct Conversation: Sendable {
    public private(set) var greeted = false
    public private(set) var closed = false
    /// The version agreed at hello: the newest both sides speak.
    public private(set) var version: UInt8 = Wire.version

    public init() {}

    /// Checks one frame from the app, with whether a descriptor came with it.
    public mutating func accept(_ frame: Frame, hasDescriptor: Bool) throws(WireError) {
        let m = frame.message
        if closed { throw WireError(.outOfOrder, "message after bye") }
        if m.carriesDescriptor && !hasDescriptor {
            throw WireError(.missingDescriptor, "\(name(m)) must carry one descriptor (SCM_RIGHTS)")
        }
        if !m.carriesDescriptor && hasDescriptor {
            throw WireError(.unexpectedDescriptor, "\(name(m)) carries no descriptor")
        }
        switch m {
        case let .hello(minV, maxV, _):
            if greeted { throw WireError(.outOfOrder, "hello twice") }
            let newest = min(maxV, Wire.versions.upperBound)
            guard newest >= max(minV, Wire.versions.lowerBound) else {
                throw WireError(.unsupportedVersion,
                                "the app speaks versions \(minV)...\(maxV); the broker speaks \(Wire.versions.lowerBound)...\(Wire.versions.upperBound)")
            }
            version = newest
            greeted = true
        case .welcome, .error, .canOpenURLResult, .urlDelivery, .decision, .copied, .pasteResult, .targets, .document,
             .exportRequest, .file, .enrollmentNotice, .restartRequest, .wipeRequest, .signedIn, .conditionalLaunch,
             .appConfigData, .appConfigChanged, .token, .remediationAccepted, .complianceStatus,
             .remediationProgress, .policySnapshot, .accountKey:
            throw WireError(.outOfOrder, "\(name(m)) is sent by the broker, not to it")
        case .bye:
            closed = true
        default:
            if !greeted { throw WireError(.outOfOrder, "\(name(m)) before hello") }
        }
    }

    func name(_ m: Message) -> String { String(describing: m).split(separator: "(").first.map(String.init) ?? "message" }
}
