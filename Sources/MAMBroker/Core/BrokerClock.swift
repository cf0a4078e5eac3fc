import Glibc

/// Time as the broker sees it: injected, so tests move it by hand (a 15-second launch timeout,
/// and later the service's 24-hour retries, pass in microseconds).
public protocol BrokerClock: Sendable {
    /// Time since an arbitrary fixed point; only differences mean anything.
    func now() -> Duration
}

/// The machine's monotonic clock.
public struct MonotonicClock: BrokerClock {
    public init() {}
    public func now() -> Duration {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return .seconds(Int64(ts.tv_sec)) + .nanoseconds(Int64(ts.tv_nsec))
    }
}

/// A clock that moves only when told to.
public final class ManualClock: BrokerClock, @unchecked Sendable {
    private var current: Duration = .zero
    private let lock = Mutex()
    public init() {}
    public func now() -> Duration { lock.withLock { current } }
    public func advance(by d: Duration) { lock.withLock { current += d } }
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
