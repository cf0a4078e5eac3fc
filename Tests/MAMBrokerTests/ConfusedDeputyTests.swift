import Foundation
import GRDB
import Glibc
import MAMProtect
import MAMWire
import Testing

/// The attacks of issue 9, each through a real broker and real sandboxed apps (Courier under a
/// sample app's manifest). Each failed on the broker before the core/shell split.
@Suite("The broker is nobody's deputy", .serialized, .timeLimit(.minutes(2)))
struct ConfusedDeputyTests {
    @Test func anUnmanagedAppCannotReadAFileOutsideTheLocationsThroughTheBroker() throws {
        let b = try BrokerHarness()
        defer { b.stop() }
        // The review's reproduction: the account field used to be joined into the path.
        let notes = try b.run("Notes", ["hello", "open", "1", "../../../../../etc", "passwd", "open", "8", "-", "../../../etc/passwd"])
        #expect(notes.step("open")["error"] as? String == "notAllowed")
        #expect(notes.step("open")["content"] == nil)
        #expect(notes.step("open", 1)["error"] as? String == "invalidName")
        #expect(!(String(describing: notes).contains("root:x:0")))
    }

    @Test func anAppCannotWriteOutsideTheLocationsThroughTheBroker() throws {
        let b = try BrokerHarness()
        defer { b.stop() }
        let target = "/tmp/mamlab-deputy-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: target) }
        let notes = try b.run("Notes", ["hello", "save", "1", "../../../../..\(target)", "f.txt", "owned", "save", "32", "-", "../../../..\(target)", "owned"])
        #expect(notes.step("save")["error"] as? String == "notAllowed")
        #expect(notes.step("save", 1)["error"] as? String == "invalidName")
        #expect(!FileManager.default.fileExists(atPath: target + "/f.txt") && !FileManager.default.fileExists(atPath: target))
    }

    @Test func anUnmanagedAppCannotUseAManagedAccountsLocation() throws {
        let b = try BrokerHarness()
        defer { b.stop() }
        _ = try b.run("Mail", ["hello", "save", "1", "adele@contoso.com", "plan.txt", "the plan"])
        let notes = try b.run("Notes", ["hello", "open", "1", "adele@contoso.com", "plan.txt", "save", "1", "adele@contoso.com", "plan.txt", "overwritten"])
        #expect(notes.step("open")["error"] as? String == "notAllowed" && notes.step("open")["content"] == nil)
        #expect(notes.step("save")["error"] as? String == "notAllowed")
        let mail = try b.run("Mail", ["hello", "open", "1", "adele@contoso.com", "plan.txt"]).step("open")
        #expect(mail["content"] as? String == "the plan" && mail["owner"] as? String == "adele@contoso.com")
    }

    @Test func aSymlinkOrFIFOPlantedInALocationGetsAnErrorNotADescriptor() throws {
        let b = try BrokerHarness()
        defer { b.stop() }
        _ = try b.run("Notes", ["hello", "save", "32", "-", "link.txt", "x", "save", "32", "-", "fifo.txt", "x"])
        // Someone with access to the device directory swaps the files for a symlink and a FIFO.
        let folder = b.device + "/locations/localDrive"
        try FileManager.default.removeItem(atPath: folder + "/link.txt")
        try FileManager.default.createSymbolicLink(atPath: folder + "/link.txt", withDestinationPath: "/etc/passwd")
        try FileManager.default.removeItem(atPath: folder + "/fifo.txt")
        #expect(mkfifo(folder + "/fifo.txt", 0o600) == 0)
        let notes = try b.run("Notes", ["hello", "open", "8", "-", "link.txt", "open", "8", "-", "fifo.txt", "copy", "still served"])
        #expect(notes.step("open")["content"] == nil && notes.step("open")["error"] != nil)
        #expect(notes.step("open", 1)["content"] == nil && notes.step("open", 1)["error"] != nil)
        #expect(notes.step("copy")["changeCount"] != nil, "the broker did not hang on the FIFO")
    }

    @Test func anEncryptedOutcomeDeliversCiphertextThatOnlyTheAccountsKeyOpens() throws {
        let b = try BrokerHarness()
        defer { b.stop() }
        let secret = "Q3 revenue is up 12 percent; do not forward"
        let notes = try b.launch("Notes", ["hello", "wait-document"])
        notes.waitForLines(1)  // connected, so what is sent next reaches this instance
        let mail = try b.run("Mail", ["hello", "share", "com.example.notes", "com.adobe.pdf", "q3.pdf", secret])
        let got = notes.finish().step("wait-document")
        #expect(mail.step("share").outcome == "encrypted")
        let hex = got["hex"] as? String ?? ""
        var bytes: [UInt8] = []
        var i = hex.startIndex
        while i < hex.endIndex { let j = hex.index(i, offsetBy: 2); bytes.append(UInt8(hex[i..<j], radix: 16)!); i = j }
        #expect(bytes.count > secret.utf8.count)
        // No run of the plaintext (eight bytes or more) survives in what arrived.
        let plain = Array(secret.utf8)
        let leaked = (0...(plain.count - 8)).contains { k in
            let run = plain[k..<k + 8]
            return bytes.indices.dropLast(7).contains { bytes[$0..<$0 + 8].elementsEqual(run) }
        }
        #expect(!leaked)
        // The account's key, kept in the broker's state, opens it (as MAMKit will).
        let keyID = try DocumentCipher.keyID(of: bytes)
        #expect(keyID == "5f1c7a2e-3b4d-4e6f-8a9b-0c1d2e3f4a5b")
        let key = try DatabaseQueue(path: b.device + "/state.sqlite").read { db in
            try Data.fetchOne(db, sql: "SELECT key FROM accountKey WHERE keyID = ?", arguments: [keyID])
        }
        let opened = try DocumentCipher.open(bytes, key: Array(key ?? Data()))
        #expect(String(decoding: opened, as: UTF8.self) == secret)
        var tampered = bytes
        tampered[tampered.count - 20] ^= 1
        #expect(throws: (any Error).self) { try DocumentCipher.open(tampered, key: Array(key ?? Data())) }
    }

    @Test func aSenderCannotChooseTheIdentityAURLArrivesWith() throws {
        let b = try BrokerHarness()
        defer { b.stop() }
        let mail = try b.launch("Mail", ["hello", "wait-url"])
        mail.waitForLines(1)
        let forged = "contosomail-intunemam://contosomail%3A%2F%2Finbox?com.microsoft.intune.mam.identity=ben%40contoso.com&com.microsoft.intune.mam.identity.oid=9a8b7c6d"
        let notes = try b.run("Notes", ["hello", "open-url", forged])
        let got = mail.finish().step("wait-url")
        #expect(notes.step("open-url").outcome == "allowed")
        #expect(got["url"] as? String == "contosomail://inbox")
        #expect(got["sender"] is NSNull)
        let line = b.auditRecords.first { $0["channel"] as? String == "open-url" }
        #expect((line?["source"] as? [String: Any])?["identity"] as? String == "personal")
    }

    @Test func valuesFromALauncherOrAnAppCannotForgeLogLines() throws {
        let b = try BrokerHarness()
        defer { b.stop() }
        let launcher = try WireSocket.connect(b.launcherSocket)
        defer { launcher.close() }
        let forged = "/tmp/x\n2026-11-22T00:00:00+0000 critical mambroker : FORGED admin logged in\u{1B}[2J"
        try LauncherMessage.violation(SandboxViolation(bundleID: "com.example.hostile", pid: 1, syscall: "openat", detail: forged,
                                                        action: .denied, time: "2026-11-22T00:00:00Z")).send(on: launcher)
        b.waitForLog("sandbox violation")
        let log = (try? String(contentsOfFile: b.log, encoding: .utf8)) ?? ""
        #expect(log.contains("sandbox violation"))
        #expect(!log.split(separator: "\n").contains { $0.hasPrefix("2026-11-22T00:00:00+0000 critical") })
        #expect(!log.contains("\u{1B}"))
    }
}
