import Glibc
import MAMBrokerCore
import Synchronization

/// The machine's monotonic clock: the one the broker runs on unless told to run on a
/// `ManualClock` (mambroker --clock virtual).
public struct MonotonicClock: BrokerClock {
    public init() {}
    public func now() -> Duration {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return .seconds(Int64(ts.tv_sec)) + .nanoseconds(Int64(ts.tv_nsec))
    }
}

/// A lock over state kept beside it (the standard library's `Mutex` guards a value it holds;
/// the shell's sections guard several fields of their owner at once).
final class Mutex: Sendable {
    private let mutex = Synchronization.Mutex(())
    init() {}
    func withLock<T: Sendable, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        try mutex.withLock { (_: inout ()) throws(E) -> T in try body() }
    }
}
