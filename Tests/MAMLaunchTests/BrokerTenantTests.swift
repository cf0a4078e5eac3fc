import Foundation
import Glibc
import MAMCatalog
@testable import MAMLauncher
@testable import MAMMatrixLive
import MAMMatrix
import MAMPolicy
import MAMScript
import MAMTestSupport
import Testing

/// The tenant each policy's broker is given in a live matrix: the prediction's own, private to
/// root, never written through a link someone left in its place.
@Suite("The broker's tenant in a live matrix")
struct BrokerTenantTests {
    static func folder() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-broker-tenant-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
        return dir
    }

    /// Each policy's broker tenant of the default experiment over `tenant` (the sample one when
    /// nil), written to a scratch file and handed to `check` with the setup and its predictor.
    static func eachWrittenTenant(_ tenant: String?, _ check: (MatrixSetup, String, Predictor, String) throws -> Void) throws {
        let path = tenant.map { CommandRunner.root.appendingPathComponent($0).path }
        let setup = try MatrixSetup.load(experiment: "default", policies: [], diff: [], random: nil, seed: 1, tenant: path)
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for (label, predictor) in setup.predictors {
            try check(setup, label, predictor, try PolicyRun.writeTenant(setup, policy: label, to: dir + "/tenant.json"))
        }
    }

    @Test("the tenant's text holds what Foundation's JSONSerialization wrote of the same tree",
          arguments: [nil, "Policies/graph-export/fabrikam-export.json"])
    func theTenantTextIsFoundationsToo(tenant: String?) throws {
        try Self.eachWrittenTenant(tenant) { setup, label, predictor, out in
            let written = try Array(Data(contentsOf: URL(fileURLWithPath: out)))
            let node = TenantFile.write(try DevicePlan.brokerTenant(predictor.engine.tenant), conditionalAccess: setup.conditionalAccess)
            let foundation = try JSONSerialization.data(withJSONObject: try #require(node.propertyListObject), options: [.sortedKeys])
            #expect(try JSONValue.parse(written) == JSONValue.parse(Array(foundation)), "\(label)")
        }
    }

    @Test(arguments: [nil, "Policies/graph-export/fabrikam-export.json"])
    func theBrokerLoadsTheTenantThePredictionDecidesBy(tenant: String?) throws {
        try Self.eachWrittenTenant(tenant) { setup, label, predictor, out in
            var st = stat()
            #expect(lstat(out, &st) == 0 && st.st_mode & 0o777 == 0o600, "the tenant holds credentials: 0600")
            let loaded = try Catalog.loadTenant(out)
            #expect(loaded.warnings.isEmpty, "\(loaded.warnings)")
            let typed = predictor.engine.tenant
            #expect(!typed.managedApps.isEmpty)
            for app in typed.managedApps {
                for (i, u) in typed.users.enumerated() {
                    let account = Account(userIndex: i, upn: u.upn, oid: u.oid)
                    #expect(loaded.tenant.policy(app: app, account: account)?.settings == typed.policy(app: app, account: account)?.settings,
                            "\(label): \(app) for \(u.upn)")
                }
            }
        }
    }

    /// A link in the file's place (the folder is everyone's to read) is not followed.
    @Test func aLinkInTheTenantsPlaceIsNotWrittenThrough() throws {
        let setup = try MatrixSetup.load(experiment: "default", policies: [], diff: [], random: nil, seed: 1, tenant: nil)
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let victim = dir + "/victim"
        try Data("keep".utf8).write(to: URL(fileURLWithPath: victim))
        #expect(symlink(victim, dir + "/tenant.json") == 0)
        let label = try #require(setup.predictors.keys.sorted().first)
        #expect(throws: (any Error).self) { try PolicyRun.writeTenant(setup, policy: label, to: dir + "/tenant.json") }
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "keep")
    }
}
