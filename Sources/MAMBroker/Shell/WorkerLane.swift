import CMAMWire
import Foundation
import Glibc

/// A thread that runs blocking work one item at a time, at a lower CPU priority than the event
/// loop: an app that floods the broker with large saves or encryptions gets its work done, but
/// never at the cost of the loop's turn to answer everyone else.
final class WorkerLane: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [@Sendable () -> Void] = []

    init(name: String, nice: Int32 = 10) {
        let t = Thread { [self] in
            // Linux's nice is per thread: this lowers only this lane.
            _ = mam_thread_nice(nice)
            run()
        }
        t.name = name
        t.start()
    }

    func async(_ work: @escaping @Sendable () -> Void) {
        condition.lock()
        items.append(work)
        condition.signal()
        condition.unlock()
    }

    /// Returns once everything queued before it has run.
    func sync() {
        let done = DispatchSemaphore(value: 0)
        async { done.signal() }
        done.wait()
    }

    private func run() {
        while true {
            condition.lock()
            while items.isEmpty { condition.wait() }
            let work = items.removeFirst()
            condition.unlock()
            work()
        }
    }
}
