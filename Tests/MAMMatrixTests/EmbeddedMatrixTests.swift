import MAMMatrix
import MAMMatrixEmbedded
import MAMPolicy
import MAMScript
import Testing

/// The whole matrix (plan, schedule, cell logic, judging by the broker's records) on the
/// embedded shell: the broker's core in memory, no process. What passes here and fails live is
/// the processes' doing; what fails here is the matrix's or the broker core's.
@Suite struct EmbeddedMatrixTests {
    static let apps = Fixture.apps.map { (names: [$0.name, $0.manifest.bundleID], manifest: $0.manifest) }

    func run(_ experiment: Experiment) throws -> [CellResult] {
        let predictors = try Fixture.predictors(experiment)
        let cells = Plan.cells(experiment, bundleID: Fixture.bundleID, handles: Fixture.handles)
        let predicted = MatrixPrediction.run(cells, predictors: predictors, payload: experiment.payload)
        let matrix = EmbeddedMatrix(tenants: predictors.mapValues(\.engine.tenant), apps: Self.apps, payload: experiment.payload)
        return matrix.run(predicted)
    }

    func failures(_ results: [CellResult]) -> String {
        results.filter { !$0.passed }.prefix(8).map { r in
            "\(r.cell.policy) \(r.cell.source.name) \(r.cell.channel) → \(r.cell.target?.name ?? "-"): predicted \(r.predicted.outcome.rawValue) \(r.predicted.rule), "
                + "embedded \(r.live?.outcome.rawValue ?? "-") \(r.live?.rule ?? "-") \(r.live?.note ?? "")"
        }.joined(separator: "\n")
    }

    @Test("the default experiment passes on the embedded shell: every channel, every sample policy, every cell answered")
    func defaultExperiment() throws {
        let results = try run(BuiltIn.default)
        #expect(results.count > 500)
        #expect(results.allSatisfy { $0.live != nil })
        #expect(results.allSatisfy { $0.passed }, "\(failures(results))")
        #expect(!results.contains { $0.leaked })
        let channels = Set(results.map(\.cell.channel.channel))
        #expect(channels.isSuperset(of: [.paste, .openIn, .import, .saveTo, .openFrom, .openURL]), "\(channels)")
    }

    @Test("the exit-criteria experiment passes on the embedded shell as seed 002 expects, logins and logouts included")
    func exitCriteria() throws {
        let results = try run(BuiltIn.exitCriteria)
        #expect(results.filter { $0.cell.channel.channel.isAccountChannel }.count == 7)
        #expect(results.allSatisfy { $0.live != nil && $0.meetsExpectation })
        #expect(results.allSatisfy { $0.passed }, "\(failures(results))")
    }

    @Test("a broker that decides otherwise than the engine fails its cells on the embedded shell too")
    func disagreementIsCaught() throws {
        // The broker's tenant says Allow all for the clipboard; the prediction's, the sample's.
        let experiment = BuiltIn.default
        let predictors = try Fixture.predictors(experiment)
        let cells = Plan.cells(experiment, bundleID: Fixture.bundleID, handles: Fixture.handles)
        let predicted = MatrixPrediction.run(cells, predictors: predictors, payload: experiment.payload)
        var tenants = predictors.mapValues(\.engine.tenant)
        for (label, var t) in tenants {
            for i in t.policies.indices { t.policies[i].settings.clipboard = .allApps }
            tenants[label] = t
        }
        let results = EmbeddedMatrix(tenants: tenants, apps: Self.apps, payload: experiment.payload).run(predicted)
        let pastes = results.filter { $0.cell.channel.channel == .paste }
        #expect(!pastes.isEmpty)
        #expect(pastes.contains { !$0.passed && $0.predicted.outcome == .blocked && $0.live?.outcome == .allowed })
    }
}
