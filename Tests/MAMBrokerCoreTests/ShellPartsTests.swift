import CMAMWire
import Foundation
import Glibc
@testable import MAMBroker
@testable import MAMBrokerCore
import MAMPolicy
import MAMProtect
import MAMWire
import SystemPackage
import Testing

/// Pieces of the broker's shell that need no broker process.
@Suite("Broker shell parts")
struct ShellPartsTests {
    @Test(arguments: [0, 1, 65_535, 65_536, 65_537, 200_000])
    func aStreamedEncryptionOpensToTheSameBytes(_ size: Int) throws {
        let plain = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let input = try SealedDocument.create(plain)
        let output = mam_memfd_sealable("test")
        defer { close(output) }
        let key = DocumentCipher.newKey()
        try DocumentCipher.seal(input: FileDescriptor(rawValue: input.rawValue), size: size, into: FileDescriptor(rawValue: output), key: key, keyID: "oid-1")
        let sealed = SealedDocument.read(FileDescriptor(rawValue: output))
        #expect(try DocumentCipher.keyID(of: sealed) == "oid-1")
        #expect(try DocumentCipher.open(sealed, key: key) == plain)
        // Dropping the last chunk is noticed.
        if size > 65_536 {
            #expect(throws: (any Error).self) { try DocumentCipher.open(Array(sealed.dropLast(sealed.count - 20 - 5 - 65_552)), key: key) }
        }
    }

    @Test func oneAppsQueueOfLongJobsDoesNotHoldUpAnotherApps() {
        let lane = WorkerLane(name: "test-lane", nice: 0)
        let order = Mutex()
        nonisolated(unsafe) var ran: [String] = []
        let gate = DispatchSemaphore(value: 0), busy = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        // The lane is kept busy while the queues fill, so the order does not depend on timing.
        lane.async(for: "someone") { busy.signal(); gate.wait() }
        busy.wait()
        for i in 0...5 { lane.async(for: "flooder") { order.withLock { ran.append("flooder-\(i)") }; done.signal() } }
        lane.async(for: "quiet") { order.withLock { ran.append("quiet") }; done.signal() }
        gate.signal()
        for _ in 0..<7 { done.wait() }
        #expect(order.withLock { ran.firstIndex(of: "quiet") } == 1)
    }

    /// The test-only paste flip lives in the shell: it turns a paste's reply and audit line
    /// round alike, and leaves a paste from an empty pasteboard as the engine decided it.
    @Test func thePasteFlipTurnsRepliesAndAuditRoundOnlyOnceSomethingWasCopied() {
        let allowed = DecisionRecord(allowed: true, outcome: 0, rule: "4.3.paste", tag: 0, message: "")
        let reply = Frame(id: 7, .pasteResult(decision: allowed, text: "org text"))
        let entry = AuditEntry(session: SessionID(1), request: 7, channel: "paste", source: .init(app: "a", identity: "personal", managed: false),
                               target: nil, dataType: nil, size: nil, outcome: "allowed", rule: "4.3.paste", tag: "doc", detail: nil, revision: 1)
        var flip = PasteFlip(text: nil)
        #expect(flip.flipped(reply) == reply && flip.flipped(entry) == entry)
        flip.copied(.pasteboard(PasteboardState(text: "org text", types: [], ownerApp: "a", ownerIdentity: "personal", changeCount: 1)))
        guard case let .pasteResult(d, text) = flip.flipped(reply).message else { Issue.record("not a paste result"); return }
        #expect(!d.allowed && d.outcome == 1 && text == UserMessage.paste && flip.flipped(entry).outcome == "blocked")
        // Back the other way: a blocked paste gets the copied text.
        guard case let .pasteResult(back, backText) = flip.flipped(Frame(id: 7, .pasteResult(decision: d, text: text))).message else { return }
        #expect(back.allowed && back.outcome == 0 && backText == "org text")
    }

    /// Hostile text in an audit record comes back as it went in, and on one line: runs that
    /// need no escape are copied whole, everything else (quotes, backslashes, every control
    /// character, DEL) escaped, wherever in the string it falls.
    @Test func auditStringsAreEscapedWhereverTheyFall() throws {
        let folder = NSTemporaryDirectory() + "mamlab-audit-escape-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let log = try AuditLog(path: folder + "/audit.jsonl")
        let hostile = ["", "plain", "\"", "\\", "a\"b\\c", "\nforged\n", "tab\tcr\r", "\u{1}\u{1F}\u{7F}", "end\"",
                       "\u{1B}[2J", "é漢字🙂\"mixed\\", String(repeating: "long run ", count: 40) + "\u{0}"]
        for (n, text) in hostile.enumerated() {
            log.append(AuditEntry(session: SessionID(n), request: UInt32(n), channel: text, source: .init(app: text, identity: text, managed: true),
                                  target: nil, dataType: text, size: nil, outcome: "allowed", rule: "4.1", tag: "doc", detail: text,
                                  revision: 1, ruleName: text, decidedAt: text), id: UInt64(n))
        }
        let lines = AuditFile.records(atPath: folder + "/audit.jsonl")
        #expect(lines.count == hostile.count, "one line per record")
        for (line, text) in zip(lines, hostile) {
            #expect(!line.contains("\n") && !line.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "\(line)")
            let r = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            for key in ["channel", "type", "detail", "ruleName", "decidedAt"] { #expect(r[key] as? String == text, "\(key) of \(line)") }
            #expect((r["source"] as? [String: Any])?["app"] as? String == text)
        }
    }
}
