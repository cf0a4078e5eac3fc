import Foundation

/// Hands a policy run's cells to several lanes at once, so that a cell waiting on one pair of
/// apps (a round trip through the broker, an arrival) does not hold up a cell between two others.
///
/// Each cell claims what it touches: its source and target app (an app runs one cell at a time:
/// its identity, its events and its command stream are the cell's), and the device's pasteboard
/// for a paste. A cell whose outcome can depend on apps it does not name claims everything and
/// runs alone: an open-url (the broker routes a link among all running apps, by their current
/// identities, and may start one), and any cell that must start or restart an app. Such a cell is
/// a barrier: the cells after it wait until it is done, so the run keeps the plan's order around
/// it. Cells are otherwise taken in order, the first whose claims are free.
final class CellLanes: @unchecked Sendable {
    /// What a cell claims: named resources, or everything; or nothing yet.
    enum Claim: Equatable {
        case resources(Set<String>)
        case everything
        /// Not yet (an app it needs is still starting): the cells after it may go first.
        case waiting
        /// Everything, but not yet (apps are still starting): a barrier that cannot run yet.
        case blocked
    }

    private let condition = NSCondition()
    private var pending: [Int]
    private var busy: Set<String> = []
    private var running = 0
    private var alone = false
    private let claim: (Int) -> Claim
    /// How far past the first waiting cell a lane looks for one it can run: bounded, so that a
    /// campaign's thousands of cells are not rescanned for every pick.
    static let lookahead = 64

    init(_ cells: [Int], claim: @escaping (Int) -> Claim) {
        pending = cells
        self.claim = claim
    }

    /// Runs `body` for every cell on `lanes` threads; returns when all are done or `stop` says so.
    func run(lanes: Int, stop: @escaping @Sendable () -> Bool, _ body: @escaping @Sendable (Int) -> Void) {
        let finished = DispatchGroup()
        for i in 0..<max(1, lanes) {
            finished.enter()
            let t = Thread { [self] in
                defer { finished.leave() }
                while !stop(), let (cell, claimed) = next() {
                    body(cell)
                    release(claimed)
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
        while true {
            if pending.isEmpty { return nil }
            if !alone {
                for (offset, cell) in pending.prefix(Self.lookahead).enumerated() {
                    let c = claim(cell)
                    switch c {
                    case .everything:
                        // A barrier: runs when nothing else does, and nothing passes it.
                        if running == 0 {
                            pending.remove(at: offset)
                            alone = true
                            running += 1
                            return (cell, c)
                        }
                    case let .resources(wanted):
                        guard busy.isDisjoint(with: wanted) else { continue }
                        pending.remove(at: offset)
                        busy.formUnion(wanted)
                        running += 1
                        // Another waiting lane may find a cell too: it is woken now, one at a
                        // time (a lane that finds nothing wakes no other).
                        condition.signal()
                        return (cell, c)
                    case .waiting, .blocked:
                        break
                    }
                    if c == .everything || c == .blocked { break }
                }
            }
            condition.wait()
        }
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
        running -= 1
        switch claimed {
        case .everything: alone = false
        case let .resources(r): busy.subtract(r)
        case .waiting, .blocked: break
        }
        condition.signal()
        condition.unlock()
    }
}
