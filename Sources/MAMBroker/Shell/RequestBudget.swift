import Glibc

/// Each app's requests per second (its connections together, by bundle id): a fixed one-second
/// window, real time whatever the broker's clock. Past the budget a request is refused unread
/// and only counted; the count goes into the audit once a second (channel `rate`), so a flood
/// costs the audit one record a second, not one a request, and cannot rotate the records before
/// it away.
final class RequestBudget {
    let app: String
    private let perSecond: Int
    private var window: Int = -1
    private var used = 0
    /// Refused since the last audit record.
    private(set) var refused = 0

    init(app: String, perSecond: Int) {
        self.app = app
        self.perSecond = perSecond
    }

    /// Whether one more request fits this second's budget (counted either way).
    @inline(__always) func admit() -> Bool {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &ts)
        if ts.tv_sec != window {
            window = ts.tv_sec
            used = 0
        }
        used += 1
        if used <= perSecond { return true }
        refused += 1
        return false
    }

    /// The refusals to audit, and the count begun anew.
    func takeRefused() -> Int {
        defer { refused = 0 }
        return refused
    }
}
