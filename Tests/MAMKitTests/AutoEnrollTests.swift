import Foundation
import MAMScript
import MAMTestSupport
import Testing

/// Issue 19, from the seeds: AutoEnrollOnLaunch defaults to NO (seed 001's settings table). An app
/// without it, started with a targeted user signed in, is unmanaged until it enrolls the account
/// itself; before, the broker took the tenant's default enrollment and enforced Adele's policy at
/// once with no notice.
@Suite("An app without AutoEnrollOnLaunch enrolls itself (issue 19)", .serialized, .timeLimit(.minutes(2)))
struct AutoEnrollTests {
    @Test func mailWithoutAutoEnrollIsUnmanagedUntilItEnrollsAdele() throws {
        // A project whose Mail manifest lacks the key: the broker installs it, the launcher finds
        // it there (MAMLAB_ROOT), and the program is still the one built for Mail.
        let root = "/tmp/mamkit-noauto-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/Apps/Mail", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: root + "/Policies", withDestinationPath: KitBroker.root + "/Policies")
        let plist = try String(contentsOfFile: KitBroker.root + "/Apps/Mail/Info.plist", encoding: .utf8)
        let stripped = plist.replacingOccurrences(of: #"<key>AutoEnrollOnLaunch</key>\s*<true/>"#, with: "", options: .regularExpression)
        #expect(stripped != plist && !stripped.contains("AutoEnrollOnLaunch"))
        try stripped.write(toFile: root + "/Apps/Mail/Info.plist", atomically: true, encoding: .utf8)

        let b = try TestBroker(prefix: "mamkit-noauto", apps: root + "/Apps")
        defer { b.stop() }
        let environment = ProcessInfo.processInfo.environment.merging(["MAMLAB_ROOT": root]) { _, new in new }
        let mail = try ScriptedProcess(KitBroker.bin + "/mamlaunch", ["run", "Mail", "--broker", b.launcherSocket, "--containers", b.containers,
                                                                    "--user", "adele@contoso.com", "--", "--script"], environment: environment)
        let before = try mail.send("policy", "adele@contoso.com")
        #expect(before["managed"]?.bool == false, "managed at launch without AutoEnrollOnLaunch: \(before)")
        let enrolled = try mail.send("enroll", "adele@contoso.com")
        #expect(enrolled["status"]?.number == 100, "\(enrolled)")
        let after = try mail.send("policy", "adele@contoso.com")
        #expect(after["managed"]?.bool == true, "\(after)")
        mail.finish()
    }
}
