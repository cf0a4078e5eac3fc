import MAMMatrix
import MAMTestSupport
import Testing

/// The matrix's scheduler and plan, driven by hand: no thread, no process. The live lanes and the
/// embedded shell run exactly these picks.
@Suite struct CellScheduleTests {
    typealias Claim = CellSchedule.Claim

    /// Picks until nothing more may run; returns the cells picked, in order, with their claims.
    func drain(_ s: inout CellSchedule, _ claims: [Claim]) -> [(cell: Int, claim: Claim)] {
        var picked: [(cell: Int, claim: Claim)] = []
        while let p = s.next(claim: { claims[$0] }) { picked.append(p) }
        return picked
    }

    @Test("cells on other apps run side by side; a cell on a busy app waits for it and is passed meanwhile")
    func resourcesAreHeldAlone() {
        var s = CellSchedule([0, 1, 2])
        let claims: [Claim] = [.resources(["mail", "docs"]), .resources(["docs"]), .resources(["notes"])]
        #expect(drain(&s, claims).map(\.cell) == [0, 2])
        #expect(s.running == 2)
        s.finished(claims[0])
        #expect(drain(&s, claims).map(\.cell) == [1])
        s.finished(claims[1])
        s.finished(claims[2])
        #expect(s.isDrained && s.running == 0)
    }

    @Test("a barrier waits for the running cells, runs alone, and nothing passes it")
    func barrierRunsAlone() {
        var s = CellSchedule([0, 1, 2])
        let claims: [Claim] = [.resources(["mail"]), .everything, .resources(["notes"])]
        #expect(drain(&s, claims).map(\.cell) == [0])
        s.finished(claims[0])
        #expect(drain(&s, claims).map(\.cell) == [1])
        // Alone: not even a cell on another app starts beside it.
        #expect(s.next { claims[$0] } == nil)
        s.finished(.everything)
        #expect(drain(&s, claims).map(\.cell) == [2])
    }

    @Test("a cell whose app is starting is passed; a barrier that is blocked holds every cell after it")
    func waitingAndBlocked() {
        var claims: [Claim] = [.waiting, .resources(["b"]), .blocked, .resources(["c"])]
        var s = CellSchedule([0, 1, 2, 3])
        #expect(drain(&s, claims).map(\.cell) == [1])
        s.finished(claims[1])
        // The app came up: the waiting cell runs, the barrier now needs everything.
        claims[0] = .resources(["a"])
        claims[2] = .everything
        #expect(drain(&s, claims).map(\.cell) == [0])
        s.finished(claims[0])
        #expect(drain(&s, claims).map(\.cell) == [2])
        s.finished(claims[2])
        #expect(drain(&s, claims).map(\.cell) == [3])
    }

    @Test("a pick looks a bounded way past cells it cannot run")
    func lookaheadIsBounded() {
        let n = CellSchedule.lookahead
        var claims = [Claim](repeating: .waiting, count: n)
        claims.append(.resources(["x"]))
        var s = CellSchedule(Array(claims.indices))
        #expect(s.next { claims[$0] } == nil)
    }

    @Test("random claims: no two running cells share an app, a barrier runs alone, every cell runs once, barriers keep the order")
    func randomSchedules() {
        var rng = SplitMix64(state: 0x5C4E_D011)
        let apps = ["mail", "docs", "notes", "edge", " pasteboard"]
        for _ in 0..<300 {
            let count = Int(1 + rng.next() % 40)
            let claims: [Claim] = (0..<count).map { _ in
                if rng.next() % 8 == 0 { return .everything }
                return .resources(Set(apps.filter { _ in rng.next() % 3 == 0 }))
            }
            var s = CellSchedule(Array(0..<count))
            var running: [(cell: Int, claim: Claim)] = []
            var ran: [Int] = []
            while !s.isDrained || !running.isEmpty {
                while let p = s.next(claim: { claims[$0] }) {
                    for r in running {
                        if case let .resources(a) = r.claim, case let .resources(b) = p.claim { #expect(a.isDisjoint(with: b)) } else {
                            Issue.record("cell \(p.cell) ran beside \(r.cell), one of them a barrier")
                        }
                    }
                    running.append(p)
                    ran.append(p.cell)
                }
                // Nothing more may run while none runs: the schedule would be stuck.
                guard !running.isEmpty else {
                    Issue.record("stuck with \(s.pending) pending")
                    break
                }
                let done = running.remove(at: Int(rng.next() % UInt64(running.count)))
                s.finished(done.claim)
            }
            #expect(ran.sorted() == Array(0..<count))
            // Every cell before a barrier ran before it; every cell after, after it.
            for (i, c) in claims.enumerated() where c == .everything {
                let at = ran.firstIndex(of: i)!
                #expect(ran[..<at].allSatisfy { $0 < i } && ran[(at + 1)...].allSatisfy { $0 > i })
            }
        }
    }

    @Test("a cell's claim: its apps and the pasteboard; waiting on a starting app; everything to start one or to run alone")
    func claimOfACell() {
        let running = ["mail": ["adele@contoso.com"], "notes": []]
        func claim(_ parts: [(key: String, accounts: [String])?], alone: Bool = false, paste: Bool = false, starting: Set<String> = []) -> Claim {
            CellSchedule.claim(parts: parts, alone: alone, paste: paste, starting: starting) { running[$0] }
        }
        #expect(claim([("mail", ["adele@contoso.com"]), ("notes", [])], paste: true) == .resources(["mail", "notes", " pasteboard"]))
        #expect(claim([("mail", ["adele@contoso.com"]), ("docs", [])], starting: ["docs"]) == .waiting)
        // Another account set, or an app not running: it must be (re)started, alone.
        #expect(claim([("mail", ["ben@contoso.com"])]) == .everything)
        #expect(claim([("docs", [])]) == .everything)
        #expect(claim([("docs", [])], starting: ["edge"]) == .blocked)
        #expect(claim([("mail", ["adele@contoso.com"])], alone: true) == .everything)
        #expect(claim([nil]) == .everything)
    }

    // MARK: the plan

    func party(_ app: String, _ accounts: [String]) -> PartySpec {
        PartySpec(name: "\(app) (\(accounts.joined(separator: ",")))", app: app, accounts: accounts)
    }

    func cell(_ id: Int, _ policy: String, _ channel: Channel, _ source: PartySpec, _ target: PartySpec? = nil) -> Cell {
        Cell(id: id, policy: policy, channel: ChannelSpec(channel), source: source, target: target)
    }

    @Test("policies alike in whom they target share a device, in order; a login has a device of its own")
    func policiesShareByTargeting() {
        let mail = party("mail", ["adele@contoso.com"]), notes = party("notes", [])
        let cells = [cell(0, "p1", .paste, mail, notes), cell(1, "p2", .paste, mail, notes), cell(2, "p1", .login, mail),
                     cell(3, "p3", .paste, mail, notes)]
        let targeting = ["p1": ["mail | sales"], "p2": ["mail | sales"], "p3": ["mail | execs"]]
        let plan = DevicePlan.stints(cells, targeting: targeting) { $0.app }
        #expect(plan == [[.init(policy: "p1", cells: [0]), .init(policy: "p2", cells: [1])], [.init(policy: "p1", cells: [2])],
                         [.init(policy: "p3", cells: [3])]])
        let apart = DevicePlan.stints(cells, targeting: targeting, perPolicy: true) { $0.app }
        #expect(apart.count == 4)
    }

    @Test("an app signed in to two users' accounts is two devices; cells go to the first device that agrees")
    func twoUsersAreTwoDevices() {
        let adele = party("outlook", ["adele@contoso.com"]), ben = party("outlook", ["ben@contoso.com"]), notes = party("notes", [])
        let cells = [cell(0, "p", .paste, adele, notes), cell(1, "p", .paste, ben, notes), cell(2, "p", .openIn, notes, adele),
                     cell(3, "p", .openIn, notes, ben)]
        let plan = DevicePlan.stints(cells, targeting: [:]) { $0.app }
        #expect(plan == [[.init(policy: "p", cells: [0, 2])], [.init(policy: "p", cells: [1, 3])]])
    }
}
