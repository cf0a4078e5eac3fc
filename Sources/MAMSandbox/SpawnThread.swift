import Foundation

/// The one thread every app is cloned from. The app's parent-death signal (PR_SET_PDEATHSIG)
/// fires when the *thread* that cloned it ends, not the launcher: an app launched from a worker
/// thread was killed with SIGKILL as soon as that thread retired (Dispatch's pool retires idle
/// ones after a few seconds; the matrix launches from them, so on a slow kernel-lab guest Mail
/// died between cells). This thread, like the main thread, lives as long as the launcher, so
/// "dies with its launcher" means the launcher's process.
final class SpawnThread: @unchecked Sendable {
    static let shared = SpawnThread()

    private let condition = NSCondition()
    private var pending: [() -> Void] = []

    private init() {
        let thread = Thread { [unowned self] in self.serve() }
        thread.name = "mamlab-spawn"
        thread.start()
    }

    /// Runs `body` on the spawn thread and returns its result; the caller waits. The main thread
    /// lives as long as the process too, and runs `body` itself: a hop to another thread costs
    /// a wake-up, milliseconds on a loaded machine, at every launch (`bench-launch` measures
    /// from there).
    func run<T>(_ body: @escaping () -> T) -> T {
        if Thread.isMainThread { return body() }
        let slot = SpawnSlot<T>()
        let done = DispatchSemaphore(value: 0)
        condition.lock()
        pending.append {
            slot.value = body()
            done.signal()
        }
        condition.signal()
        condition.unlock()
        done.wait()
        return slot.value!
    }

    private func serve() {
        while true {
            condition.lock()
            while pending.isEmpty { condition.wait() }
            let job = pending.removeFirst()
            condition.unlock()
            job()
        }
    }
}

/// Where a job on the spawn thread leaves its result for the waiting caller.
private final class SpawnSlot<T>: @unchecked Sendable {
    var value: T?
}
