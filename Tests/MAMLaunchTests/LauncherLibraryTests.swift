import Foundation
import MAMLauncher
import MAMMatrix
import MAMMatrixLive
import Testing

/// MAMLauncher called as a library, as `mamlaunch`'s commands call it: no process started.
@Suite struct LauncherLibraryTests {
    @Test func theDefaultExperimentLoadsAndIsPredictedInProcess() throws {
        let setup = try MatrixSetup.load(experiment: "default", policies: [], diff: [], random: nil, seed: 1, tenant: nil)
        let manifest = { (app: String) in setup.predictors.values.first?.manifest(app) }
        let cells = Plan.cells(setup.experiment, bundleID: { manifest($0)?.bundleID },
                               handles: { app, scheme in manifest(app)?.handles(scheme: scheme) ?? false },
                               lands: { setup.predictors[$0.policy]?.linkOpens(in: $0, payload: setup.experiment.payload) ?? true })
        // The same cells `mamlaunch matrix --predict` answers (MatrixCommandTests).
        #expect(cells.count == 1107)
        let results = MatrixPrediction.run(cells, predictors: setup.predictors, payload: setup.experiment.payload)
        #expect(results.count == cells.count)
        #expect(results.allSatisfy { $0.live == nil })
    }

    @Test func anUnknownAppIsTheCommandLinesMistakeNotAFailure() throws {
        let world = try World.load(tenant: nil, policyOverride: nil, manifests: [])
        var notes: [String] = []
        let error = #expect(throws: World.UsageError.self) { try world.party("NoSuchApp", notes: &notes) }
        #expect(error?.message.contains("unknown app \"NoSuchApp\"") == true)
    }
}
