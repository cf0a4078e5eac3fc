import Glibc
import MAMBrokerCore

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

/// The smallest lock that is Sendable without ceremony.
final class Mutex: @unchecked Sendable {
    private var m = pthread_mutex_t()
    init() { pthread_mutex_init(&m, nil) }
    deinit { pthread_mutex_destroy(&m) }
    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(&m)
        defer { pthread_mutex_unlock(&m) }
        return try body()
    }
}
