/// How often an account's password may be tried: the emulated identity provider's answer to
/// guessing. The first few wrong passwords cost nothing (a person mistypes); after them each
/// attempt waits twice as long as the last (2 s, 4 s, … at most 5 minutes), and after
/// `lockAfter` wrong passwords in a row the account is locked for `lockFor`. One attempt per
/// account is checked at a time, so guesses cannot be sent side by side while a slow hash runs.
/// A right password clears the count. Kept in memory, on the broker's clock: a restart (root's
/// to make) starts afresh.
struct SignInThrottle: Sendable {
    static let freeFailures = 3
    static let lockAfter = 10
    static let lockFor: Duration = .seconds(30 * 60)
    static let longestWait: Duration = .seconds(5 * 60)

    struct State: Sendable, Equatable {
        var failures = 0
        /// No attempt before this moment (the broker's clock).
        var notBefore: Duration = .zero
        /// An attempt is being checked now.
        var checking = false
    }

    enum Verdict: Sendable, Equatable {
        case allowed
        /// Another attempt for the account is being checked.
        case checking
        /// Too soon after the last wrong password: this long still.
        case wait(Duration)
        /// Locked after `lockAfter` wrong passwords: this long still.
        case locked(Duration)
    }

    private(set) var accounts: [String: State] = [:]

    func verdict(for account: String, now: Duration) -> Verdict {
        guard let state = accounts[account] else { return .allowed }
        if state.checking { return .checking }
        guard now < state.notBefore else { return .allowed }
        return state.failures >= Self.lockAfter ? .locked(state.notBefore - now) : .wait(state.notBefore - now)
    }

    mutating func started(_ account: String) {
        accounts[account, default: State()].checking = true
    }

    /// A wrong password; true when it locks the account.
    mutating func failed(_ account: String, now: Duration) -> Bool {
        var state = accounts[account, default: State()]
        state.checking = false
        state.failures += 1
        let locks = state.failures >= Self.lockAfter
        if locks {
            state.notBefore = now + Self.lockFor
        } else if state.failures >= Self.freeFailures {
            let doublings = state.failures - Self.freeFailures + 1
            state.notBefore = now + min(Self.longestWait, .seconds(1 << min(doublings, 16)))
        }
        accounts[account] = state
        return locks
    }

    /// The check ended without a verdict on the password (the app left meanwhile).
    mutating func abandoned(_ account: String) {
        accounts[account]?.checking = false
    }

    mutating func succeeded(_ account: String) {
        accounts[account] = nil
    }

    /// "2 s", "4 min 10 s": a wait as the refusal says it.
    static func words(_ d: Duration) -> String {
        let seconds = max(1, Int((d + .milliseconds(999)).components.seconds))
        return seconds < 60 ? "\(seconds) s" : seconds % 60 == 0 ? "\(seconds / 60) min" : "\(seconds / 60) min \(seconds % 60) s"
    }
}
