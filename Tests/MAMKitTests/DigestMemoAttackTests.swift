import Foundation
import Glibc
import MAMCatalog
import MAMScript
import MAMTestSupport
import Testing

/// The launcher and the broker remember program digests from run to run in a root-only folder
/// (DigestMemo). What they read there decides which program is an installed app, so an entry
/// root did not write alone must not be believed: here one says another program (Courier) is
/// Mail's, and Courier is run under Mail's manifest.
@Suite("Installed identity: remembered digests (DigestMemo)", .serialized, .timeLimit(.minutes(2)))
struct DigestMemoAttackTests {
    static let adele = "adele@contoso.com"

    /// Runs a copy of Courier under Mail's manifest with an entry planted for the copy's stamp
    /// that names Mail's digest, made by `plant`; returns the bundle id Courier got and whether
    /// it was handed Adele's key.
    func runImpostor(plant: (String) throws -> Void) throws -> (bundleID: String?, gotKey: Bool) {
        let b = try KitBroker()
        defer { b.stop() }
        let folder = "/tmp/mamkit-memo-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let impostor = folder + "/Courier"
        try FileManager.default.copyItem(atPath: KitBroker.bin + "/Courier", toPath: impostor)
        var st = stat()
        #expect(stat(impostor, &st) == 0)
        let stamp = DigestMemo.stamp(st)
        let entry = DigestMemo.shared.folder + "/" + DigestMemo.entryName(stamp)
        defer { unlink(entry) }
        // The memo folder as the launcher makes it (root's, 0700), with the planted entry.
        let made = "a stamp no file has, \(UUID())"
        DigestMemo.shared.remember(made, String(repeating: "0", count: 64))
        defer { unlink(DigestMemo.shared.folder + "/" + DigestMemo.entryName(made)) }
        let mail = try #require(ProgramDigest.sha256(ofFile: KitBroker.bin + "/Mail"))
        try Data(mail.utf8).write(to: URL(fileURLWithPath: entry))
        chmod(entry, 0o600)
        try plant(entry)
        let p = try ScriptedProcess(KitBroker.bin + "/mamlaunch", ["run", "--manifest", KitBroker.root + "/Apps/Mail/Info.plist",
                                                                 "--broker", b.launcherSocket, "--containers", b.device + "-containers",
                                                                 "--user", Self.adele, "--", impostor, "hello", "key", Self.adele, "bye"])
        let lines = p.courierLines()
        let hello = lines.first { $0["step"]?.string == "hello" }
        let key = lines.first { $0["step"]?.string == "key" }
        return (hello?["bundleId"]?.string, key?["key"] != nil)
    }

    @Test(arguments: ["owned by another user", "readable by others"])
    func anEntryRootDidNotWriteAloneDoesNotMakeAnotherProgramMail(_ kind: String) throws {
        let (bundleID, gotKey) = try runImpostor { entry in
            if kind == "owned by another user" { #expect(chown(entry, 65534, 65534) == 0) } else { chmod(entry, 0o644) }
        }
        #expect(bundleID?.hasPrefix("unknown.pid") == true, "\(kind): ran as \(bundleID ?? "nothing")")
        #expect(!gotKey)
    }

    /// The other side of the boundary: an entry root wrote alone is believed by both processes
    /// (which is why nothing but root may write the folder). Without the memo this program would
    /// be hashed and refused; believed, it runs as Mail.
    @Test func anEntryRootWroteAloneIsBelievedByTheLauncherAndTheBroker() throws {
        let (bundleID, _) = try runImpostor { _ in }
        #expect(bundleID == "com.contoso.mail", "ran as \(bundleID ?? "nothing")")
    }
}
