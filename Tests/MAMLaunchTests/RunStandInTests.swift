import Foundation
import MAMTestSupport
import Testing

/// A catalog app run by hand: `mamlaunch run outlook` runs the stand-in the matrix runs for it,
/// installed in the broker the run starts, managed under a policy that targets it.
@Suite("mamlaunch run: a catalog app's stand-in by hand")
struct RunStandInTests {
    @Test("run outlook starts Outlook's stand-in, enrolled and managed under Level 2")
    func outlookRunsAsItsStandIn() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-standin-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        // Level 2 targets the core Microsoft apps (Outlook among them) for the sales group.
        let tenant = try TwoUserTenantTests.tenant(in: dir)
        let r = try ChildProcess.run(CommandRunner.executable.path,
                                     ["run", "outlook", "--user", "adele@contoso.com", "--tenant", tenant, "--containers", dir.path + "/containers", "--clean"],
                                     environment: CommandRunner.environment([:]), input: "hello\nwait notice 10\npolicy adele@contoso.com\nbye\n", timeout: 60)
        #expect(r.status == 0, "\(r.err.suffix(1500))")
        let lines = r.out.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let hello = lines.first { $0["app"] != nil }
        #expect(hello?["app"] as? String == "com.microsoft.office.outlook" && hello?["sdk"] as? Bool == true, "\(r.out)")
        #expect(lines.contains { $0["kind"] as? String == "enrollment" && $0["succeeded"] as? Bool == true }, "enrolled: \(r.out)")
        #expect(lines.contains { $0["managed"] as? Bool == true && $0["policy"] != nil }, "managed under Level 2: \(r.out)")
    }

    @Test("a stand-in with a broker of the user's own is refused: only the run's broker installs it")
    func aStandInNeedsTheRunsOwnBroker() throws {
        let r = try CommandRunner.run(["run", "Outlook", "--broker", "/nonexistent/launcher.sock"])
        #expect(r.status != 0 && r.stderr.contains("is a stand-in for a catalog app"), "\(r.stderr)")
    }

    @Test("a misspelled catalog app is unknown, with the name meant")
    func aMisspelledCatalogApp() throws {
        let r = try CommandRunner.run(["run", "Outlok", "--no-broker"])
        #expect(r.status != 0 && r.stderr.contains("did you mean \"Outlook\""), "\(r.stderr)")
    }
}
