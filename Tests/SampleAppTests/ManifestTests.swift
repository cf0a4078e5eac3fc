import Foundation
import Testing

/// The sample apps' manifests are what `mamconfigurator` makes of them and what `mamlaunch
/// check` accepts without a word.
@Suite("Sample apps: manifests")
struct ManifestTests {
    static let apps = ["Chat", "Mail", "Docs", "Edge", "Dialer"]

    @Test(arguments: apps)
    func theConfiguratorWouldChangeNothing(_ app: String) throws {
        let folder = Built.root + "/Apps/" + app
        let r = try Built.run("mamconfigurator", ["-i", folder + "/Info.plist", "-e", folder + "/\(app).entitlements", "--check"])
        #expect(r.status == 0, "mamconfigurator would change Apps/\(app): \(r.out)\(r.err)")
        #expect(!r.out.contains("warning:") && !r.err.contains("warning:"), "\(r.out)\(r.err)")
    }

    @Test(arguments: apps)
    func checkFindsNothingToSay(_ app: String) throws {
        let r = try Built.run("mamlaunch", ["check", Built.root + "/Apps/\(app)/Info.plist"])
        #expect(r.status == 0, "\(r.out)\(r.err)")
        #expect(r.out.contains("checked 1 file: 0 errors, 0 warnings"), "\(r.out)\(r.err)")
        #expect(!r.out.contains("warning:") && !r.err.contains("warning:"), "\(r.out)\(r.err)")
    }

    @Test func theModeFollowsTheArgumentsAndTheTerminal() {
        #expect(SampleModeProbe.choose(["--script"], terminal: true) == "scripted")
        #expect(SampleModeProbe.choose([], terminal: true) == "interactive")
        #expect(SampleModeProbe.choose([], terminal: false) == "serve")
        #expect(SampleModeProbe.choose(["--interactive"], terminal: false) == "interactive")
        #expect(SampleModeProbe.choose(["--scrip"], terminal: true) == nil)
    }
}

import MAMSampleSupport

enum SampleModeProbe {
    static func choose(_ a: [String], terminal: Bool) -> String? {
        SampleMode.choose(a, stdinIsTerminal: terminal).map { "\($0)" }
    }
}
