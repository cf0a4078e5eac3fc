import Foundation
import MAMLauncher
import MAMMatrix

/// The live shell of the matrix's scheduler (CellSchedule): a policy run's cells on several
/// threads at once, so that a cell waiting on one pair of apps (a round trip through the broker,
/// an arrival) does not hold up a cell between two others. The schedule decides which cell goes
/// next; the lanes wait on a condition until it names one.
final class CellLanes: @unchecked Sendable {
    typealias Claim = CellSchedule.Claim

    private let condition = NSCondition()
    private var schedule: CellSchedule
    private let claim: (Int) -> Claim

    init(_ cells: [Int], claim: @escaping (Int) -> Claim) {
        schedule = CellSchedule(cells)
        self.claim = claim
    }

    /// Runs `body` for every cell on `lanes` threads; returns when all are done or `stop` says so.
    /// What `body` returns runs after the cell's claim is released: work that needs none of the
    /// cell's apps (judging it by the broker's records) does not hold up the next cell between them.
    func run(lanes: Int, stop: @escaping @Sendable () -> Bool, _ body: @escaping @Sendable (Int) -> (@Sendable () -> Void)?) {
        let finished = DispatchGroup()
        for i in 0..<max(1, lanes) {
            finished.enter()
            let t = Thread { [self] in
                defer { finished.leave() }
                while !stop(), let (cell, claimed) = next() {
                    let rest = body(cell)
                    release(claimed)
                    rest?()
                }
                // The lanes still waiting end too (no cells left, or stopped): woken all at once.
                condition.lock()
                condition.broadcast()
                condition.unlock()
            }
            t.name = "matrix-lane-\(i)"
            t.stackSize = 1 << 20
            t.start()
        }
        finished.wait()
    }

    /// The next cell a lane may run, with what it claimed; nil when none is left.
    private func next() -> (Int, Claim)? {
        condition.lock()
        defer { condition.unlock() }
        while !schedule.isDrained {
            if let picked = schedule.next(claim: claim) {
                // Another waiting lane may find a cell too: it is woken now, one at a time (a
                // lane that finds nothing wakes no other).
                if case .resources = picked.claim { condition.signal() }
                return picked
            }
            condition.wait()
        }
        return nil
    }

    /// What the claims depend on changed (an app is up): a waiting lane looks again (and wakes
    /// the next when it finds a cell).
    ///
    /// One lane at a time, not all: waking every lane at each cell's end made the lanes contend
    /// for the lock and rescan the same cells, a quarter of the launcher's context switches.
    /// Lanes that find nothing would find nothing in the same state, so none is left waiting
    /// while a cell could run.
    func wake() {
        condition.lock()
        condition.signal()
        condition.unlock()
    }

    private func release(_ claimed: Claim) {
        condition.lock()
        schedule.finished(claimed)
        condition.signal()
        condition.unlock()
    }
}
