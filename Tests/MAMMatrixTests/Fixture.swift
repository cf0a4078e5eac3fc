import Foundation
import MAMCatalog
import MAMMatrix
import MAMPolicy

/// The project's sample tenant, apps and policies, loaded as `mamlaunch matrix` loads them.
enum Fixture {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let apps = Catalog.loadApps(in: root.appendingPathComponent("Apps")).apps
    static let pairs = apps.map { (name: $0.name, manifest: $0.manifest) }
    static let tenant = try! Catalog.loadTenant(root.appendingPathComponent("Policies/contoso/tenant.json").path).tenant

    static func knownApp(_ name: String) -> Bool { Catalog.find(name, in: apps) != nil }
    static func bundleID(_ name: String) -> String? { Catalog.find(name, in: apps)?.manifest.bundleID }
    static func handles(_ app: String, _ scheme: String) -> Bool { Catalog.find(app, in: apps)?.manifest.handles(scheme: scheme) ?? false }

    /// A predictor per policy of `experiment`, each policy file's settings on every tenant policy.
    static func predictors(_ experiment: Experiment) throws -> [String: Predictor] {
        var out: [String: Predictor] = [:]
        for ref in experiment.policies {
            var t = tenant
            if case let .file(path) = ref {
                let file = path.hasPrefix("/") ? path : root.appendingPathComponent(path).path
                let policy = try Catalog.loadPolicyFile(file).first!.policy
                for i in t.policies.indices {
                    t.policies[i].settings = policy.settings
                    t.policies[i].displayName = policy.displayName
                }
                t.reindex()
            }
            out[ref.label] = Predictor(engine: PolicyEngine(tenant: t, apps: apps.map(\.manifest)), apps: pairs)
        }
        return out
    }

    static func predict(_ experiment: Experiment) throws -> MatrixReport {
        let cells = Plan.cells(experiment, bundleID: bundleID, handles: handles)
        let results = MatrixPrediction.run(cells, predictors: try predictors(experiment), payload: experiment.payload)
        return MatrixReport(experiment: experiment, results: results, live: false, seconds: 1)
    }

    static func load(_ json: String, file: String = "test.json") throws(LoadFailure) -> Experiment {
        try ExperimentFile.load(Data(json.utf8), file: file, knownApp: knownApp)
    }
}
