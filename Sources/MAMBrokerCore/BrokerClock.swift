import Foundation

/// Time as the broker sees it: injected, so tests move it by hand (a 15-second launch timeout,
/// and later the service's 24-hour retries, pass in microseconds). The machine's clock is the
/// shell's (`MonotonicClock` in MAMBroker): the core reads no clock of its own.
public protocol BrokerClock: Sendable {
    /// Time since an arbitrary fixed point; only differences mean anything.
    func now() -> Duration
}

/// A clock that moves only when told to.
public final class ManualClock: BrokerClock, @unchecked Sendable {
    private var current: Duration = .zero
    private let lock = NSLock()
    public init() {}
    public func now() -> Duration { lock.withLock { current } }
    public func advance(by d: Duration) { lock.withLock { current += d } }
}

extension Duration {
    /// The duration in seconds, as Foundation's dates count time.
    public var timeInterval: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
    }
}
