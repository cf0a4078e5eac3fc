import Foundation

/// The one thread every app is cloned from, for as long as the launcher runs.
///
/// The app's parent-death signal (PR_SET_PDEATHSIG, SIGKILL: the app ends with its launcher)
/// fires when the *thread* that cloned it ends, not the process. Cloned from a dispatch worker
/// (the matrix starts apps in parallel), a running app was killed when libdispatch retired
/// that worker after it idled a few seconds: on a slow kernel-lab guest, in the middle of the
/// matrix, with no violation and no message (SI_USER from the launcher's own thread).
final class SpawnThread: @unchecked Sendable {
    static let shared = SpawnThread()

    /// One call to make on the thread. Its closure is dropped before the caller hears that it
    /// ran: `run` lends a non-escaping closure, and the runtime checks that nothing kept it.
    private final class Job {
        var body: (() -> Void)?
        var finished = false
        let done = NSCondition()
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    private let condition = NSCondition()
    private var work: [Job] = []

    private init() {
        let thread = Thread { [self] in serve() }
        thread.name = "mam-spawn"
        thread.start()
    }

    /// Runs `body` on the spawn thread and returns its result; callers take turns.
    func run<T>(_ body: () -> T) -> T {
        var result: T?
        withoutActuallyEscaping(body) { body in
            let job = Job { result = body() }
            condition.lock()
            work.append(job)
            condition.signal()
            condition.unlock()
            job.done.lock()
            while !job.finished { job.done.wait() }
            job.done.unlock()
        }
        return result!
    }

    private func serve() {
        while true {
            condition.lock()
            while work.isEmpty { condition.wait() }
            let job = work.removeFirst()
            condition.unlock()
            job.body?()
            job.body = nil
            job.done.lock()
            job.finished = true
            job.done.signal()
            job.done.unlock()
        }
    }
}
