import MAMMatrix
import MAMPolicy
import Testing

@Suite("The engine's side of the matrix")
struct PredictionTests {
    @Test("exit-criteria: the engine meets seed 002's expectations, cell by cell")
    func exitCriteriaPredicted() throws {
        let report = try Fixture.predict(BuiltIn.exitCriteria)
        #expect(report.results.count == 19)
        for r in report.results { #expect(r.passed, "\(MatrixReport.explainFailure(r))") }
    }

    @Test func aWrongExpectationFails() throws {
        var e = BuiltIn.exitCriteria
        e.cells[1].expect = Expectation(.blocked)  // "managed identity send to managed app" is allowed
        let report = try Fixture.predict(e)
        #expect(report.failures.map(\.cell.id) == [2])
        #expect(MatrixReport.explainFailure(report.failures[0]).contains("expected   blocked"))
    }

    @Test func predictionAsksWhatTheBrokerAsks() throws {
        // A share is decided as Open-in of the document's type: encrypted towards Notes under managed-only.
        let report = try Fixture.predict(BuiltIn.exitCriteria)
        let toNotes = report.results[0]
        #expect(toNotes.predicted.outcome == .encrypted)
        #expect(toNotes.predicted.ruleName == "sendOpenInEncrypted")
        #expect(toNotes.orgData)
        // The passive receive from Docs into Mail's personal identity switches to adele.
        #expect(report.results[10].predicted.identity == "adele@contoso.com")
    }

    @Test func diffShowsOnlyChangedCells() throws {
        var e = BuiltIn.default
        e.policies = [.file("Policies/contoso/policies/managed-only.json"), .file("Policies/contoso/policies/allow-all.json")]
        let report = try Fixture.predict(e)
        let diff = MatrixDiff(report.results, policyA: "managed-only", policyB: "allow-all")
        #expect(diff.compared == report.results.count / 2)
        #expect(!diff.changes.isEmpty && diff.changes.count < diff.compared)
        for c in diff.changes {
            #expect(c.a.cell.key == c.b.cell.key)
            #expect(c.a.shown.outcome != c.b.shown.outcome || c.a.shown.rule != c.b.shown.rule || c.a.shown.identity != c.b.shown.identity)
        }
        // Org data to Notes: encrypted under managed-only, allowed under allow-all.
        #expect(diff.changes.contains { $0.a.cell.source.name == "Mail (adele)" && $0.a.cell.target?.name == "Notes"
            && $0.a.cell.channel.channel == .openIn && $0.a.shown.outcome == .encrypted && $0.b.shown.outcome == .allowed })
    }

    @Test func randomCellsAreReproducibleAndRunnable() throws {
        let a = RandomCells.experiment(count: 60, seed: 7, apps: Fixture.pairs, users: Fixture.tenant.users.map(\.upn), policies: BuiltIn.samplePolicies)
        let b = RandomCells.experiment(count: 60, seed: 7, apps: Fixture.pairs, users: Fixture.tenant.users.map(\.upn), policies: BuiltIn.samplePolicies)
        let c = RandomCells.experiment(count: 60, seed: 8, apps: Fixture.pairs, users: Fixture.tenant.users.map(\.upn), policies: BuiltIn.samplePolicies)
        #expect(a == b)
        #expect(a != c)
        #expect(a.cells.count == 60)
        // Each app has one set of accounts per user: a second user's copy has that user only.
        let accounts = Dictionary(grouping: a.parties, by: \.app).mapValues { Set($0.map(\.accounts)) }
        #expect(accounts.values.allSatisfy { $0.count <= 2 })
        let report = try Fixture.predict(a)
        #expect(report.results.count == 60)
        #expect(report.results.allSatisfy { $0.predicted.note == nil }, "every random party is one the engine accepts")
    }

    @Test("a party signed in only to accounts no policy targets has enrolled nobody, as the broker has it (not the tenant's first targeted user)")
    func aPartyOfUntargetedAccountsEnrollsNobody() throws {
        let predictor = Predictor(engine: PolicyEngine(tenant: Fixture.tenant, apps: Fixture.apps.map(\.manifest)), apps: Fixture.pairs)
        let dana = try predictor.party(PartySpec(name: "Mail (dana)", app: "Mail", accounts: ["dana@outlook.com"]))
        #expect(dana.enrolled == nil && !dana.isManaged)
        // Launched with the personal account alone, the app enrolls on launch as the device has it.
        let personal = try predictor.party(PartySpec(name: "Mail (personal)", app: "Mail", accounts: ["personal"]))
        #expect(personal.enrolled?.upn == "adele@contoso.com")
    }

    @Test("a random campaign tries two accounts of one app against each other, never a link to the app's own scheme")
    func randomCellsIncludeTwoAccountsOfOneApp() {
        let e = RandomCells.experiment(count: 2000, seed: 5, apps: Fixture.pairs, users: Fixture.tenant.users.map(\.upn), policies: BuiltIn.samplePolicies)
        let app = Dictionary(e.parties.map { ($0.name, $0.app) }, uniquingKeysWith: { a, _ in a })
        let within = e.cells.filter { c in c.target.map { app[$0] == app[c.source] } ?? false }
        #expect(Set(within.map(\.channel.channel)).isSuperset(of: [.openIn, .import, .paste, .openFrom]))
        #expect(within.allSatisfy { $0.source != $0.target && $0.channel.channel != .openURL })
        // Another user's copy of an app is a party too, never paired with the first user's copy.
        let party = Dictionary(e.parties.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        #expect(Dictionary(grouping: e.parties, by: \.app).values.contains { Set($0.map(\.accounts)).count == 2 })
        #expect(!within.contains { Plan.collide(party[$0.source]!, party[$0.target!]!) })
    }
}
