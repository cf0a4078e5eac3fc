import Foundation
import MAMScript
import MAMTestSupport
import Testing

/// File owners under a scoped ("thread") identity, in a real app process with a real broker
/// (SEMANTICS §5): the file belongs to the identity in effect for file work when it is created.
@Suite("MAMKit: file owners under a scoped identity", .serialized, .timeLimit(.minutes(2)))
struct FileOwnerScopeTests {
    @Test func aFileCreatedUnderAScopedAccountIsItsEncryptedAndGoesWithItsWipe() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let mail = try b.launch("Mail")
        #expect(try mail.send("enroll", "adele@contoso.com")["succeeded"]?.bool == true)
        #expect(try mail.send("identity", "personal")["result"]?.string == "success")
        // Created while the task acts as adele: hers, and encrypted (her policy requires it).
        let hers = try mail.send("in", "adele@contoso.com", "write-file", "scoped.txt", "-", "board minutes")
        #expect(hers["owner"]?.string == "adele@contoso.com" && hers["encrypted"]?.bool == true, "\(hers)")
        // The UI identity does not own files; outside a scope Mail (multi-identity) has no process
        // identity, so the file is personal.
        let mine = try mail.send("write-file", "plain.txt", "-", "my own")
        #expect(mine["owner"]?.isNull == true && mine["encrypted"]?.bool == false, "\(mine)")
        let personal = try mail.send("in", "personal", "write-file", "diary.txt", "-", "dear diary")
        #expect(personal["owner"]?.isNull == true, "\(personal)")

        #expect(try mail.send("delegate", "wipe", "decline")["ok"]?.bool == true)
        let wipe = try ChildProcess(KitBroker.bin + "/mamlaunch", ["wipe", "--user", "adele@contoso.com", "--broker", b.launcherSocket])
        #expect(try wipe.waitForExit("mamlaunch wipe", timeout: 30) == 0)
        let event = try mail.send("wait", "wipe")
        #expect(event["account"]?.string == "adele@contoso.com", "\(event)")
        let left = try mail.send("files")["files"]?.array?.compactMap(\.string) ?? []
        #expect(!left.contains("scoped.txt") && left.contains("plain.txt") && left.contains("diary.txt"), "\(left)")
        mail.finish()
    }
}
