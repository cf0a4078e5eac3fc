import Synchronization

/// A value behind a lock: the kit's shared state, read and written from any thread or task
/// (the reader thread, the app's tasks). Every access is one short critical section. A class
/// so that the kit's parts share one; the standard library's `Mutex` does the locking.
final class Locked<Value>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: sending Value) { mutex = Mutex(value) }

    func withLock<T, E: Error>(_ body: (inout sending Value) throws(E) -> sending T) throws(E) -> sending T {
        try mutex.withLock(body)
    }

    var current: Value { withLock { $0 } }
}

/// One request to the broker at a time where the broker's idea of the app's identity matters:
/// an action under a scoped identity sets that identity, acts, and sets the UI identity back,
/// and nothing may come in between. A FIFO async lock (suspends, never blocks a thread).
actor SerialLane {
    private var busy = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func acquire() async {
        guard busy else {
            busy = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func release() {
        if waiters.isEmpty { busy = false } else { waiters.removeFirst().resume() }
    }
}
