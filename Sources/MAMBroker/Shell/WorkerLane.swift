import CMAMWire
import Foundation
import Glibc

/// A thread that runs blocking work one item at a time, at a lower CPU priority than the event
/// loop: an app that floods the broker with large saves or encryptions gets its work done, but
/// never at the cost of the loop's turn to answer everyone else. Work is queued per app and taken
/// in turn, one item per app, so one app's queue of large documents does not hold up another's.
final class WorkerLane: @unchecked Sendable {
    private let condition = NSCondition()
    private var queues: [String: [@Sendable () -> Void]] = [:]
    private var turns: [String] = []

    init(name: String, nice: Int32 = 10) {
        let t = Thread { [self] in
            // Linux's nice is per thread: this lowers only this lane.
            _ = mam_thread_nice(nice)
            run()
        }
        t.name = name
        t.start()
    }

    func async(for app: String = "", _ work: @escaping @Sendable () -> Void) {
        condition.lock()
        if queues[app, default: []].isEmpty { turns.append(app) }
        queues[app, default: []].append(work)
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while turns.isEmpty { condition.wait() }
            let app = turns.removeFirst()
            let work = queues[app]!.removeFirst()
            if queues[app]!.isEmpty { queues[app] = nil } else { turns.append(app) }
            condition.unlock()
            work()
        }
    }
}
