import Foundation
import Synchronization
import Testing
@testable import MAMLauncher
@testable import MAMMatrixLive

/// The lanes while a policy's apps are still starting (PolicyRun.perform): a cell whose app is
/// not up yet waits without holding up the cells after it, and is run once the app is up and the
/// lanes are woken; a cell that may reach any app waits as a barrier, which nothing passes.
@Suite struct CellLanesTests {
    /// What each cell claims, changed by the test while the lanes run; the cells in the order run.
    final class Plan: @unchecked Sendable {
        let claims: Mutex<[CellLanes.Claim]>
        let order = Mutex<[Int]>([])
        init(_ claims: [CellLanes.Claim]) { self.claims = Mutex(claims) }
        func set(_ cell: Int, _ claim: CellLanes.Claim) { claims.withLock { $0[cell] = claim } }
        var ran: [Int] { order.withLock { $0 } }
    }

    /// Runs the lanes on a thread of their own; `during` runs meanwhile. Waits up to 30 s.
    /// `after`: what a cell leaves to run once its claim is released.
    func run(_ plan: Plan, lanes count: Int, body: @escaping @Sendable (Int, CellLanes) -> Void = { _, _ in },
             during: (CellLanes) -> Void = { _ in },
             after: @escaping @Sendable (Int) -> (@Sendable () -> Void)? = { _ in nil }) throws {
        let cells = plan.claims.withLock { Array($0.indices) }
        let lanes = CellLanes(cells) { i in plan.claims.withLock { $0[i] } }
        let done = DispatchSemaphore(value: 0)
        let t = Thread {
            lanes.run(lanes: count, stop: { false }) { i in
                plan.order.withLock { $0.append(i) }
                body(i, lanes)
                return after(i)
            }
            done.signal()
        }
        t.start()
        during(lanes)
        #expect(done.wait(timeout: .now() + 30) == .success, "the lanes did not finish")
    }

    @Test("a cell whose app is still starting is passed by the cells after it and runs once woken")
    func waitingCellRunsWhenWoken() throws {
        let plan = Plan([.waiting, .resources(["b"]), .resources(["c"])])
        let passed = DispatchSemaphore(value: 0)
        try run(plan, lanes: 1, body: { i, _ in if i == 2 { passed.signal() } }) { lanes in
            // The lanes run cells 1 and 2, then wait: a wake-up after the change lets 0 run.
            #expect(passed.wait(timeout: .now() + 30) == .success)
            plan.set(0, .resources(["a"]))
            lanes.wake()
        }
        #expect(plan.ran == [1, 2, 0])
    }

    @Test("what a cell leaves for after its claim runs with its apps free: the next cell between them goes first")
    func restRunsAfterTheClaimIsReleased() throws {
        let plan = Plan([.resources(["a"]), .resources(["a"])])
        let second = DispatchSemaphore(value: 0)
        let judged = DispatchSemaphore(value: 0)
        // Cell 0's judging waits for cell 1, which claims the same app: it could not start while
        // cell 0 held its claim.
        let afterCell: @Sendable (Int) -> (@Sendable () -> Void)? = { i in
            guard i == 0 else { return nil }
            return { if second.wait(timeout: .now() + 30) == .success { judged.signal() } }
        }
        try run(plan, lanes: 2, body: { i, _ in if i == 1 { second.signal() } }, after: afterCell)
        #expect(judged.wait(timeout: .now()) == .success, "cell 1 ran while cell 0's judging waited")
        #expect(plan.ran == [0, 1])
    }

    @Test("a cell that needs every app waits while apps start, and nothing passes it")
    func blockedCellIsABarrier() throws {
        let plan = Plan([.resources(["a"]), .blocked, .resources(["b"]), .waiting])
        // Cell 0's body "starts the apps": the barrier may run after it, cell 3 then too.
        try run(plan, lanes: 2, body: { i, lanes in
            guard i == 0 else { return }
            plan.set(1, .everything)
            plan.set(3, .resources(["c"]))
            lanes.wake()
        })
        let ran = plan.ran
        #expect(ran.first == 0)
        #expect(ran.firstIndex(of: 1)! < ran.firstIndex(of: 2)!)
        #expect(Set(ran) == [0, 1, 2, 3])
    }
}
