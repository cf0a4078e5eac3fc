/// The tenant's emulated MAM service, as `mambroker` runs it for one device: enrollment and its
/// status codes, policy check-in on the broker's clock, selective wipe, keys, app configuration
/// and App Protection conditional access.
///
/// Pure like the broker's core: values in, values out, time from an injected clock (so a 24-hour
/// retry runs in microseconds in a test); the broker's shell does the I/O and keeps the state.
public enum MAMService {
    /// Seed 000 FAQ: a failed enrollment is retried every 24 hours.
    public static let enrollmentRetry: Duration = .seconds(24 * 3600)
    /// Seed 000 FAQ: policy is checked in every 8 hours.
    public static let checkInInterval: Duration = .seconds(8 * 3600)
}
