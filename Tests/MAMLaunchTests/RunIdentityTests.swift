import Foundation
import Testing

/// `mamlaunch run --manifest` with a manifest that claims an installed app's bundle id (found in
/// a review: a plain app saying `COM.CONTOSO.MAIL` was welcomed as the managed Mail).
@Suite("mamlaunch run: an app's identity is its own")
struct RunIdentityTests {
    @Test(arguments: ["com.contoso.mail", "COM.CONTOSO.MAIL"])
    func aManifestCannotPassItselfOffAsAnInstalledApp(_ claimed: String) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-impostor-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let notes = try String(contentsOf: CommandRunner.root.appendingPathComponent("Apps/Notes/Info.plist"), encoding: .utf8)
        let plist = dir.appendingPathComponent("Info.plist")
        try notes.replacingOccurrences(of: "com.example.notes", with: claimed).write(to: plist, atomically: true, encoding: .utf8)
        let r = try CommandRunner.run(["run", "--manifest", plist.path, "--no-broker", "--", "/bin/true"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("belongs to the installed app Mail"), "\(r.stderr)")
    }
}
