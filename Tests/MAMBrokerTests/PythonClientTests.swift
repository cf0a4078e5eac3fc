import Foundation
import Glibc
import MAMTestSupport
import MAMWire
import Testing

/// The Python client (clients/python): its codec against MAMWire's, byte for byte, and its example
/// app sandboxed under `mamlaunch run` against a real broker.
@Suite(.serialized) struct PythonClientTests {
    static let python = "/usr/bin/python3"
    static let client = BrokerHarness.root + "/clients/python"

    /// Runs `python3 -c code` with the client importable, `input` on its standard input.
    static func python(_ code: String, input: String) throws -> (status: Int32, out: String, err: String) {
        try ChildProcess.run(python, ["-B", "-c", code], environment: ["PYTHONPATH": client, "LANG": "C.UTF-8"], input: input)
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    static let decision = DecisionRecord(allowed: false, outcome: 1, rule: "4.1.4", tag: 2,
                                         message: "Your organization's data cannot go there. ✋", detail: "détail",
                                         ruleName: "sendToUnmanagedBlocked", decidedAt: "MAMPolicy/Transfer.swift:58")

    /// The messages an app speaks, with edge values; `pythonSide` builds the same list in Python.
    static let messages: [Frame] = [
        Frame(id: 1, .hello(minVersion: 1, maxVersion: 1, integratesSDK: false)),
        Frame(id: 0x8000_0001, .welcome(version: 1, bundleID: "com.example.pyhello", managedAccount: nil)),
        Frame(id: 2, .welcome(version: 1, bundleID: "com.contoso.mail", managedAccount: "adele@contoso.com")),
        Frame(id: 3, .error(code: .limitReached, detail: "at most 16")),
        Frame(id: 4, .bye),
        Frame(id: 5, .setIdentity(account: "")),
        Frame(id: 5, .setViewIdentities(accounts: ["adele@contoso.com", ""])),
        Frame(id: 6, .canOpenURL(url: "contosodocs://x")),
        Frame(id: 6, .canOpenURLResult(true)),
        Frame(id: 7, .openURL(url: "https://contoso.com/é?q=1")),
        Frame(id: 0xFFFF_FFFF, .urlDelivery(url: "pyhello://x", senderAccount: "adele@contoso.com")),
        Frame(id: 7, .decision(decision)),
        Frame(id: 8, .copy(text: "Q3 🇫🇷", types: ["public.utf8-plain-text", "public.text"])),
        Frame(id: 8, .copied(changeCount: 0xDEAD_BEEF)),
        Frame(id: 9, .paste),
        Frame(id: 9, .pasteResult(decision: decision, text: String(repeating: "x", count: 60_000))),
        Frame(id: 10, .listTargets(contentType: "public.plain-text")),
        Frame(id: 10, .targets([ShareTarget(bundleID: "com.contoso.docs", outcome: 0), ShareTarget(bundleID: "com.example.notes", outcome: 5)])),
        Frame(id: 10, .targets([])),
        Frame(id: 11, .share(target: "com.contoso.docs", contentType: "public.plain-text", name: "notes.txt")),
        Frame(id: 0x8000_0002, .document(contentType: "public.plain-text", name: "notes.txt", owner: "adele@contoso.com", encrypted: true)),
        Frame(id: 12, .importRequest(source: "com.contoso.docs", contentType: "com.adobe.pdf")),
        Frame(id: 0x8000_0003, .exportRequest(contentType: "com.adobe.pdf")),
        Frame(id: 0x8000_0003, .exportReply(contentType: "com.adobe.pdf", name: "q3.pdf")),
        Frame(id: 13, .saveTo(location: 128, account: nil, name: "a.docx")),
        Frame(id: 14, .openFrom(location: 32, account: "adele@contoso.com", name: "a.docx")),
        Frame(id: 14, .file(name: "a.docx", owner: nil)),
    ]

    static let pythonSide = #"""
    import sys
    from mamwire import Message as M, Decision, encode
    d = Decision(False, 1, "4.1.4", 2, "Your organization's data cannot go there. ✋", "détail",
                 "sendToUnmanagedBlocked", "MAMPolicy/Transfer.swift:58")
    frames = [
        (1, M("hello", minVersion=1, maxVersion=1, integratesSDK=False)),
        (0x80000001, M("welcome", version=1, bundleID="com.example.pyhello", managedAccount=None)),
        (2, M("welcome", version=1, bundleID="com.contoso.mail", managedAccount="adele@contoso.com")),
        (3, M("error", code="limitReached", detail="at most 16")),
        (4, M("bye")),
        (5, M("setIdentity", account="")),
        (5, M("setViewIdentities", accounts=["adele@contoso.com", ""])),
        (6, M("canOpenURL", url="contosodocs://x")),
        (6, M("canOpenURLResult", result=True)),
        (7, M("openURL", url="https://contoso.com/é?q=1")),
        (0xFFFFFFFF, M("urlDelivery", url="pyhello://x", senderAccount="adele@contoso.com")),
        (7, M("decision", decision=d)),
        (8, M("copy", text="Q3 🇫🇷", types=["public.utf8-plain-text", "public.text"])),
        (8, M("copied", changeCount=0xDEADBEEF)),
        (9, M("paste")),
        (9, M("pasteResult", decision=d, text="x" * 60000)),
        (10, M("listTargets", contentType="public.plain-text")),
        (10, M("targets", targets=[("com.contoso.docs", 0), ("com.example.notes", 5)])),
        (10, M("targets", targets=[])),
        (11, M("share", target="com.contoso.docs", contentType="public.plain-text", name="notes.txt")),
        (0x80000002, M("document", contentType="public.plain-text", name="notes.txt", owner="adele@contoso.com", encrypted=True)),
        (12, M("importRequest", source="com.contoso.docs", contentType="com.adobe.pdf")),
        (0x80000003, M("exportRequest", contentType="com.adobe.pdf")),
        (0x80000003, M("exportReply", contentType="com.adobe.pdf", name="q3.pdf")),
        (13, M("saveTo", location=128, account=None, name="a.docx")),
        (14, M("openFrom", location=32, account="adele@contoso.com", name="a.docx")),
        (14, M("file", name="a.docx", owner=None)),
    ]
    for frame_id, message in frames:
        print(encode(frame_id, message).hex())
    """#

    /// For each hex frame on stdin: "ok" and the frame encoded again after decoding, or "error"
    /// and the WireError.
    static let decodeSide = #"""
    import sys
    from mamwire import decode, encode, WireError
    for line in sys.stdin:
        try:
            frame_id, message = decode(bytes.fromhex(line.strip()))
            print("ok", encode(frame_id, message).hex())
        except WireError as error:
            print("error", error)
    """#

    @Test func pythonEncodesEveryMessageAsMAMWireDoes() throws {
        let r = try Self.python(Self.pythonSide, input: "")
        #expect(r.status == 0, "\(r.err)")
        let python = r.out.split(separator: "\n").map(String.init)
        let swift = Self.messages.map { Self.hex(Wire.encode($0)) }
        #expect(python.count == swift.count, "\(r.out)\(r.err)")
        for (i, (p, s)) in zip(python, swift).enumerated() {
            #expect(p == s, "message \(i) (\(Self.messages[i].message)): Python \(p.prefix(120)) vs Swift \(s.prefix(120))")
        }
    }

    @Test func pythonDecodesMAMWiresFramesAndRefusesWhatItRefuses() throws {
        var frames = Self.messages.map { Wire.encode($0) }
        let good = frames.count
        // Broken frames: each must be refused by both codecs, for the same reason in the same words.
        let paste = Wire.encode(Frame(id: 1, .paste))
        let decision = Wire.encode(Frame(id: 1, .decision(Self.decision)))
        var badMagic = paste; badMagic[1] = 0x58
        var badVersion = paste; badVersion[2] = 9
        var unknown = paste; unknown[3] = 0x99
        var trailing = paste; trailing[8] = 1; trailing.append(0)
        var outcome = decision; outcome[13] = 6
        var flag = decision; flag[12] = 2
        var utf8 = Wire.encode(Frame(id: 1, .openURL(url: "ab"))); utf8[14] = 0xC0
        var location = Wire.encode(Frame(id: 1, .saveTo(location: 4, account: nil, name: "a"))); location[12] = 3
        var openLocation = Wire.encode(Frame(id: 1, .openFrom(location: 4, account: nil, name: "a"))); openLocation[12] = 64
        var longText = Wire.encode(Frame(id: 1, .openURL(url: String(repeating: "u", count: 4_096))))
        longText[12] = 0x01; longText[13] = 0x10; longText.append(UInt8(ascii: "u"))  // 4,097 bytes
        longText[8] = UInt8((longText.count - 12) & 0xff); longText[9] = UInt8((longText.count - 12) >> 8)
        var manyTypes = Wire.encode(Frame(id: 1, .copy(text: "", types: []))); manyTypes[14] = 0x01; manyTypes[15] = 0x01
        let bad: [[UInt8]] = [
            Array(paste.prefix(11)), badMagic, badVersion, unknown, trailing, Array(decision.dropLast()), outcome, flag, utf8,
            location, openLocation, longText, manyTypes, Array(repeating: 0, count: 65_537),
            Wire.encode(Frame(id: 1, .setIdentity(account: "x"))) + [0],
        ]
        frames += bad
        let r = try Self.python(Self.decodeSide, input: frames.map { Self.hex($0) + "\n" }.joined())
        #expect(r.status == 0, "\(r.err)")
        let lines = r.out.split(separator: "\n").map(String.init)
        #expect(lines.count == frames.count, "\(r.out)\(r.err)")
        for (i, line) in lines.enumerated() {
            if i < good {
                #expect(line == "ok " + Self.hex(frames[i]), "message \(i) did not survive Python's decode and encode: \(line.prefix(160))")
                continue
            }
            var swift = "decoded"
            do throws(WireError) { _ = try Wire.decode(frames[i]) } catch { swift = "error \(error.code): \(error.detail)" }
            #expect(swift.hasPrefix("error"), "bad frame \(i - good) is accepted by Swift")
            #expect(line == swift, "bad frame \(i - good): Python said \(line); Swift \(swift)")
        }
    }

    /// What the example app printed, by command.
    static func results(_ out: String) -> [String: [String: Any]] {
        var byCommand: [String: [String: Any]] = [:]
        for line in out.split(separator: "\n") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let command = object["command"] as? String else { continue }
            byCommand[command] = byCommand[command] ?? object
        }
        return byCommand
    }

    /// `mamlaunch run` of the example app in scripted mode, its commands on a pipe.
    static func runExample(_ b: BrokerHarness, _ commands: [String], asScript: Bool = false) throws -> (status: Int32, out: String, err: String) {
        let program = asScript ? ["clients/python/example_app.py"] : [Self.python, "clients/python/example_app.py"]
        return try ChildProcess.run(BrokerHarness.bin + "/mamlaunch", ["run", "--manifest", "clients/python/Info.plist", "--broker", b.launcherSocket,
                                                                      "--containers", b.device + "-containers", "--"] + program + ["--script"],
                                    directory: BrokerHarness.root, input: commands.map { $0 + "\n" }.joined())
    }

    @Test func theExampleAppGetsTheBrokersDecisionsSandboxed() throws {
        let b = try BrokerHarness()
        defer { b.stop() }
        // Mail (managed, adele) copies; the Python app is unmanaged: its paste gets the broker's
        // refusal and the replacement text, never Mail's text.
        _ = try b.run("Mail", ["hello", "copy", "Q3 forecast: 4.2M"])
        let docs = try b.launch("Docs", ["hello", "wait-url"])
        docs.waitForLines(1)
        let r = try Self.runExample(b, ["hello", "paste", "open-url contosodocs://open?doc=7", "copy \"from Python\"", "paste", "bye"])
        _ = docs.finish()
        #expect(r.status == 0, "\(r.err)")
        let lines = r.out.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(lines.count == 6, "\(r.out)\n\(r.err)")
        #expect(lines.first?["app"] as? String == "com.example.pyhello", "\(r.out)")
        let pastes = lines.filter { $0["command"] as? String == "paste" }
        let blocked = pastes.first ?? [:]
        #expect(blocked.outcome == "blocked", "\(blocked)")
        #expect(blocked["text"] as? String != "Q3 forecast: 4.2M")
        #expect(pastes.last?.outcome == "allowed" && pastes.last?["text"] as? String == "from Python", "\(pastes)")
        let open = lines.first { $0["command"] as? String == "open-url" } ?? [:]
        // Every decision is the broker's: the audit log holds the same outcome and rule.
        let audit = b.auditRecords.filter { ($0["source"] as? [String: Any])?["app"] as? String == "com.example.pyhello" }
        let auditURL = audit.first { $0["channel"] as? String == "open-url" }
        #expect(open.outcome != nil && open.outcome == auditURL?["outcome"] as? String && open.ruleName == auditURL?["ruleName"] as? String
                && open.decidedAt == auditURL?["decidedAt"] as? String && open.decidedAt?.isEmpty == false, "\(open) vs \(auditURL ?? [:])")
        let auditPastes = b.auditRecords.filter { $0["channel"] as? String == "paste" && ($0["target"] as? [String: Any])?["app"] as? String == "com.example.pyhello" }
        #expect(auditPastes.map { $0["rule"] as? String } == pastes.map(\.rule), "\(auditPastes)")
        #expect(!r.err.contains("sandbox violation"), "\(r.err)")
    }

    /// A client written while the protocol had one version (Fixtures/python-v1: the Python client
    /// as it was then, kept unchanged; it refuses any byte it does not expect) asks for version 1
    /// and is answered in version 1's layout on every channel it speaks; each decision is the
    /// broker's, as the audit shows.
    @Test func aVersionOneClientIsAnsweredInVersionOnesLayoutOnEveryChannel() throws {
        // The client's manifest installed beside the sample apps, and the client run under it as
        // a developer's program (a script claims no installed app by itself): the broker then
        // routes a document and a URL to it.
        let fm = FileManager.default
        let apps = NSTemporaryDirectory() + "mamlab-v1-apps-\(UUID().uuidString.prefix(8))"
        defer { try? fm.removeItem(atPath: apps) }
        for app in try fm.contentsOfDirectory(atPath: BrokerHarness.root + "/Apps")
        where fm.fileExists(atPath: "\(BrokerHarness.root)/Apps/\(app)/Info.plist") {
            try fm.createDirectory(atPath: "\(apps)/\(app)", withIntermediateDirectories: true)
            try fm.copyItem(atPath: "\(BrokerHarness.root)/Apps/\(app)/Info.plist", toPath: "\(apps)/\(app)/Info.plist")
        }
        try fm.createDirectory(atPath: apps + "/PyHello", withIntermediateDirectories: true)
        try fm.copyItem(atPath: BrokerHarness.root + "/clients/python/Info.plist", toPath: apps + "/PyHello/Info.plist")
        let b = try BrokerHarness(apps: apps)
        defer { b.stop() }
        // Docs takes the URL, then stays while the share is decided. Notes (unmanaged) answers the
        // client's import, imports from it, shares a document with it and opens a URL in it: the
        // frames the broker starts reach the version-1 client too.
        let docs = try b.launch("Docs", ["hello", "wait-url", "sleep", "2000"])
        let notes = try b.launch("Notes", ["hello", "serve-export", "v1-import.txt", "served to a version-1 client",
                                           "import", "com.example.pyhello", "public.plain-text",
                                           "share", "com.example.pyhello", "public.plain-text", "v1-in.txt", "shared with a version-1 client",
                                           "open-url", "pyhello://from-notes", "sleep", "2000"])
        docs.waitForLines(1)
        notes.waitForLines(1)
        let r = try ChildProcess.run(BrokerHarness.bin + "/mamlaunch", ["run", "--manifest", "clients/python/Info.plist", "--developer", "--broker", b.launcherSocket,
                                                                       "--containers", b.device + "-containers", "--", Self.python,
                                                                       "Tests/MAMBrokerTests/Fixtures/python-v1/every_channel.py", "com.contoso.docs", "com.example.notes"],
                                     directory: BrokerHarness.root, input: "")
        _ = docs.finish()
        let notesSaid = notes.finish()
        #expect(r.status == 0, "\(r.out)\n\(r.err)")
        // Notes got what the version-1 client exported.
        #expect(notesSaid.step("import")["content"] as? String == "exported by a version-1 client", "\(notesSaid)")
        var said: [String: [String: Any]] = [:]
        for line in r.out.split(separator: "\n") {
            if let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], let c = o["channel"] as? String { said[c] = o }
        }
        #expect(said["error"] == nil, "\(said["error"] ?? [:])")
        #expect(said["hello"]?["version"] as? Int == 1 && said["hello"]?["app"] as? String == "com.example.pyhello", "\(r.out)")
        let channels = ["identity", "open-url", "paste", "share", "save", "open", "import"]
        for c in channels { #expect(said[c]?["outcome"] is String, "\(c): \(r.out)\n\(r.err)") }
        #expect(said["import"]?["content"] as? String == "served to a version-1 client", "\(r.out)")
        #expect(said["export"]?["type"] as? String == "public.plain-text", "\(r.out)")
        #expect(said["document"]?["name"] as? String == "v1-in.txt" && said["document"]?["content"] as? String == "shared with a version-1 client", "\(r.out)")
        #expect(said["url"]?["url"] as? String == "pyhello://from-notes", "\(r.out)")
        #expect(said["can-open"]?["result"] is Bool && (said["targets"]?["targets"] as? [Any])?.isEmpty == false, "\(r.out)")
        #expect(said["paste"]?["text"] as? String == "from a version-1 client" && said["open"]?["content"] as? String == "saved by a version-1 client",
                "\(r.out)")
        #expect(said["bye"] != nil, "\(r.out)")
        // The same decisions the broker audited, in order.
        let audited = b.auditRecords.filter { ($0["source"] as? [String: Any])?["app"] as? String == "com.example.pyhello"
            || ($0["target"] as? [String: Any])?["app"] as? String == "com.example.pyhello" }
        for (c, channel) in [("open-url", "open-url"), ("paste", "paste"), ("share", "open-in"), ("save", "save-to"), ("open", "open-from"),
                             ("import", "import")] {
            let record = audited.first { $0["channel"] as? String == channel }
            #expect(record?["outcome"] as? String == said[c]?["outcome"] as? String, "\(c): \(record ?? [:]) vs \(said[c] ?? [:])")
        }
    }

    @Test func theExampleAppRunsAsAShebangScript() throws {
        let b = try BrokerHarness()
        defer { b.stop() }
        let r = try Self.runExample(b, ["hello", "copy x", "paste", "bye"], asScript: true)
        #expect(r.status == 0, "\(r.err)")
        let byCommand = Self.results(r.out)
        #expect(byCommand["hello"]?["app"] as? String == "com.example.pyhello", "\(r.out)\(r.err)")
        #expect(byCommand["paste"]?.outcome == "allowed" && byCommand["paste"]?["text"] as? String == "x", "\(r.out)")
        #expect(byCommand["bye"]?["ok"] as? Bool == true)
    }
}
