/// Which cell of one device runs next, and beside which others: the matrix's scheduler, a
/// value with no threads, no clock and no I/O. The live shell (threads waiting on a condition)
/// and the embedded shell (one loop, in process) both drive it; its tests drive it by hand.
///
/// Each cell claims what it touches: its source and target app (an app runs one cell at a time:
/// its identity, its events and its command stream are the cell's), and the device's pasteboard
/// for a paste. A cell whose outcome can depend on apps it does not name claims everything and
/// runs alone: an open-url (the broker routes a link among all running apps, by their current
/// identities, and may start one), and any cell that must start or restart an app. Such a cell is
/// a barrier: the cells after it wait until it is done, so the run keeps the plan's order around
/// it. Cells are otherwise taken in order, the first whose claims are free.
public struct CellSchedule: Sendable {
    /// What a cell claims: named resources, or everything; or nothing yet.
    public enum Claim: Hashable, Sendable {
        case resources(Set<String>)
        case everything
        /// Not yet (an app it needs is still starting): the cells after it may go first.
        case waiting
        /// Everything, but not yet (apps are still starting): a barrier that cannot run yet.
        case blocked
    }

    /// The cells not yet handed out, in the plan's order.
    public private(set) var pending: [Int]
    /// The cells handed out and not yet finished.
    public private(set) var running = 0
    private var busy: Set<String> = []
    /// A barrier is running: nothing else starts.
    private var alone = false

    /// How far past the first waiting cell a pick looks for one it can run: bounded, so that a
    /// campaign's thousands of cells are not rescanned for every pick.
    public static let lookahead = 64

    public init(_ cells: [Int]) {
        pending = cells
    }

    /// Every cell was handed out.
    public var isDrained: Bool { pending.isEmpty }

    /// The next cell that may run now, with what it claimed (hold it until `finished`); nil when
    /// none may run until a running cell finishes or a claim changes (an app came up), or none is left.
    public mutating func next(claim: (Int) -> Claim) -> (cell: Int, claim: Claim)? {
        guard !alone else { return nil }
        for (offset, cell) in pending.prefix(Self.lookahead).enumerated() {
            let c = claim(cell)
            switch c {
            case .everything:
                // A barrier: runs when nothing else does, and nothing passes it.
                guard running == 0 else { return nil }
                pending.remove(at: offset)
                alone = true
                running += 1
                return (cell, c)
            case .blocked:
                return nil
            case let .resources(wanted):
                guard busy.isDisjoint(with: wanted) else { continue }
                pending.remove(at: offset)
                busy.formUnion(wanted)
                running += 1
                return (cell, c)
            case .waiting:
                continue
            }
        }
        return nil
    }

    /// A cell handed out by `next` is done: what it claimed is free again.
    public mutating func finished(_ claimed: Claim) {
        running -= 1
        switch claimed {
        case .everything: alone = false
        case let .resources(r): busy.subtract(r)
        case .waiting, .blocked: break
        }
    }

    /// What a cell between running apps claims: its apps (keys as the shell names its apps, with
    /// the accounts each must run with) and the pasteboard for a paste; everything when `alone`
    /// (a link another app may take) and for a cell that must start or restart an app, which
    /// waits (`blocked`) while apps are being started; nothing yet (`waiting`) while one of its
    /// apps is being started. `accounts` gives a running app's accounts (nil: not running).
    /// A nil part is an app the shell could not name: the cell runs alone, to fail there.
    public static func claim(parts: [(key: String, accounts: [String])?], alone: Bool, paste: Bool, starting: Set<String>,
                             accounts: (String) -> [String]?) -> Claim {
        let everything: Claim = starting.isEmpty ? .everything : .blocked
        if alone { return everything }
        var apps = Set<String>()
        for part in parts {
            guard let (key, wanted) = part else { return everything }
            if starting.contains(key) { return .waiting }
            if accounts(key) != wanted { return everything }
            apps.insert(key)
        }
        if paste { apps.insert(" pasteboard") }
        return .resources(apps)
    }
}
