import Glibc
import MAMWire
import SystemPackage
import Testing

let sample = DecisionRecord(allowed: false, outcome: 1, rule: "4.1.4", tag: 0,
                            message: "Your organization only allows you to transfer its data to other managed apps.", detail: "",
                            ruleName: "sendToUnmanagedBlocked", decidedAt: "Sources/MAMPolicy/Decisions/Transfer.swift:58")

/// One of every message, with values at the edges (empty, non-ASCII, nil and present).
let everyMessage: [Message] = [
    .hello(minVersion: 1, maxVersion: 3, integratesSDK: true), .welcome(version: 1, bundleID: "com.contoso.mail", managedAccount: "adele@contoso.com"),
    .welcome(version: 1, bundleID: "com.example.notes", managedAccount: nil), .error(code: .truncated, detail: "at byte 7"), .bye,
    .setIdentity(account: ""),
    .conditionalLaunch(account: "adele@contoso.com", action: 2, rule: "launchOfflineAccess", message: "Connect to the internet.", detail: "offline 12 h 1 min"),
    .conditionalLaunch(account: "", action: 0, rule: "", message: "", detail: ""), .setViewIdentities(accounts: ["adele@contoso.com", ""]), .canOpenURL(url: "contosodocs://x"), .canOpenURLResult(false), .openURL(url: "https://contoso.com/é"),
    .urlDelivery(url: "contosodocs://x", senderAccount: "adele@contoso.com"), .decision(sample),
    .copy(text: "Q3 forecast 🇫🇷", types: ["public.utf8-plain-text"]), .copied(changeCount: 42), .paste,
    .pasteResult(decision: sample, text: "Your organization's data cannot be pasted here."), .listTargets(contentType: "com.adobe.pdf"),
    .targets([ShareTarget(bundleID: "com.contoso.docs", outcome: 0), ShareTarget(bundleID: "com.example.notes", outcome: 2)]),
    .share(target: "com.contoso.docs", contentType: "com.adobe.pdf", name: "q3.pdf"),
    .document(contentType: "com.microsoft.intune.mam.com.adobe.pdf", name: "q3.pdf", owner: nil, encrypted: true),
    .importRequest(source: "com.contoso.docs", contentType: "public.plain-text"), .exportRequest(contentType: "public.plain-text"),
    .exportReply(contentType: "public.plain-text", name: "notes.txt"), .saveTo(location: 1, account: "adele@contoso.com", name: "a.docx"),
    .openFrom(location: 4, account: nil, name: "photo.jpg"), .file(name: "photo.jpg", owner: "adele@contoso.com"), .file(name: "p.jpg", owner: nil),
    .enroll(account: "adele@contoso.com"), .loginAndEnroll, .unenroll(account: "adele@contoso.com", wipe: true),
    .enrollmentNotice(kind: 1, account: "adele@contoso.com", status: 227), .restartRequest(account: "adele@contoso.com"),
    .signedIn(account: "ben@contoso.com"),
    .restartReply(restartsItself: false), .allowedAccountsRequest, .allowedAccounts(restricted: true, accounts: ["adele@contoso.com", "ben@contoso.com"]),
    .allowedAccounts(restricted: false, accounts: []),
    .wipeRequest(account: "adele@contoso.com"), .appConfigRequest(account: "adele@contoso.com"),
    .appConfigData(account: "adele@contoso.com", json: "[{\"a\":\"1\"}]"), .appConfigChanged(account: "adele@contoso.com"),
    .acquireToken(account: "ben@contoso.com"), .token(outcome: 1, homeAccountID: "9a8b.72f9", detail: "x"),
    .remediateCompliance(account: "9a8b", silent: true), .remediationAccepted(outcome: 1, detail: "queued"),
    .complianceStatus(account: "9a8b", status: 0, title: "t", message: "m"), .remediationInProgress(account: "9a8b"),
    .remediationProgress(state: 2, position: 1),
    .policyRequest, .policySnapshot(json: "{\"app\":{}}"), .keyRequest(account: "adele@contoso.com"),
    .accountKey(account: "adele@contoso.com", key: (0..<32).map { UInt8($0 * 7) }),
]

@Suite("MAMWire frames")
struct CodecTests {
    @Test func everyMessageRoundTrips() throws {
        for (i, m) in everyMessage.enumerated() {
            let frame = Frame(id: UInt32(i * 7919), m)
            #expect(try Wire.decode(Wire.encode(frame)) == frame, "\(m)")
        }
        #expect(Set(everyMessage.map(Wire.type(of:))) == Wire.knownTypes, "one sample of every type")
    }

    @Test func anAccountKeyIsExactlyThirtyTwoBytes() {
        let frame = Wire.encode(Frame(id: 3, .accountKey(account: "a", key: [UInt8](repeating: 9, count: 32))))
        #expect(frame.count == 12 + 3 + 32)
        #expect(error(Array(frame.dropLast()))?.code == .truncated)
        #expect(error(frame + [0])?.code == .trailingBytes)
        // A snapshot may be as long as pasteboard text, no longer.
        let long = Wire.encode(Frame(id: 1, .policySnapshot(json: String(repeating: "x", count: Wire.maximumPasteText + 1))))
        #expect(error(long)?.code == .fieldOutOfRange)
    }

    @Test func theHeaderIsAsDocumented() {
        let bytes = Wire.encode(Frame(id: 0x0102_0304, .paste))
        #expect(bytes == [0x4D, 0x57, 3, 0x32, 0x04, 0x03, 0x02, 0x01, 0, 0, 0, 0])
        let hello = Wire.encode(Frame(id: 1, .hello(minVersion: 1, maxVersion: 1, integratesSDK: false)))
        #expect(Array(hello[12...]) == [1, 1, 0])
        let text = Wire.encode(Frame(id: 1, .setIdentity(account: "é")))
        #expect(Array(text[12...]) == [2, 0, 0xC3, 0xA9])
    }

    func error(_ bytes: [UInt8]) -> WireError? {
        do { _ = try Wire.decode(bytes); return nil } catch { return error }
    }

    @Test func eachBadFrameNamesItsProblem() {
        let good = Wire.encode(Frame(id: 9, .setIdentity(account: "adele")))
        #expect(error(Array(good.prefix(5)))?.code == .truncated)
        #expect(error(Array(good.prefix(5)))?.detail == "frame of 5 bytes is shorter than the 12-byte header")
        #expect(error(Array(good.dropLast()))?.detail == "header announces 7 payload bytes; 6 arrived")
        #expect(error(good + [0])?.code == .trailingBytes)
        var magic = good; magic[0] = 0x4E
        #expect(error(magic)?.detail == "bytes 0-1 are 0x4E57; a frame starts with \"MW\" (0x4D57)")
        var version = good; version[2] = 9
        #expect(error(version)?.code == .unsupportedVersion)
        var type = good; type[3] = 0x99
        #expect(error(type)?.detail == "byte 3: unknown message type 0x99")
        #expect(error([UInt8](repeating: 0, count: Wire.maximumFrame + 1))?.code == .oversized)
        // A flag that is neither 0 nor 1.
        var flag = Wire.encode(Frame(id: 1, .canOpenURLResult(true))); flag[12] = 2
        #expect(error(flag)?.detail == "field result at byte 12 is 2; a flag is 0 or 1")
        // An outcome past the table.
        var outcome = Wire.encode(Frame(id: 1, .decision(sample))); outcome[13] = 9
        #expect(error(outcome)?.detail == "field outcome at byte 13 is 9; allowed 0...5")
        // A location that is not one bit.
        var location = Wire.encode(Frame(id: 1, .saveTo(location: 1, account: nil, name: "a"))); location[12] = 3
        #expect(error(location)?.code == .fieldOutOfRange)
        // Invalid UTF-8.
        var utf = Wire.encode(Frame(id: 1, .setIdentity(account: "ab"))); utf[14] = 0xFF
        #expect(error(utf)?.detail == "field account at byte 14 is not valid UTF-8")
        // A text longer than its limit.
        let long = Wire.encode(Frame(id: 1, .setIdentity(account: String(repeating: "a", count: Wire.maximumText + 1))))
        #expect(error(long)?.detail == "field account at byte 12 is 4097 bytes long; the limit is 4096")
        // An unknown error code.
        var code = Wire.encode(Frame(id: 1, .error(code: .truncated, detail: ""))); code[12] = 0xEE
        #expect(error(code)?.code == .fieldOutOfRange)
    }

    @Test func theConversationKeepsItsOrder() throws {
        var c = Conversation()
        #expect(throws: WireError(.outOfOrder, "openURL before hello")) { try c.accept(Frame(id: 1, .openURL(url: "x:")), hasDescriptor: false) }
        try c.accept(Frame(id: 1, .hello(minVersion: 1, maxVersion: 1, integratesSDK: true)), hasDescriptor: false)
        #expect(throws: WireError(.outOfOrder, "hello twice")) { try c.accept(Frame(id: 2, .hello(minVersion: 1, maxVersion: 1, integratesSDK: true)), hasDescriptor: false) }
        #expect(throws: WireError(.outOfOrder, "welcome is sent by the broker, not to it")) {
            try c.accept(Frame(id: 3, .welcome(version: 1, bundleID: "x", managedAccount: nil)), hasDescriptor: false)
        }
        #expect(throws: WireError(.missingDescriptor, "share must carry one descriptor (SCM_RIGHTS)")) {
            try c.accept(Frame(id: 4, .share(target: "a", contentType: "b", name: "c")), hasDescriptor: false)
        }
        #expect(throws: WireError(.unexpectedDescriptor, "paste carries no descriptor")) { try c.accept(Frame(id: 5, .paste), hasDescriptor: true) }
        try c.accept(Frame(id: 6, .paste), hasDescriptor: false)
        try c.accept(Frame(id: 7, .bye), hasDescriptor: false)
        #expect(throws: WireError(.outOfOrder, "message after bye")) { try c.accept(Frame(id: 8, .paste), hasDescriptor: false) }
        var newer = Conversation()
        #expect(throws: WireError(.unsupportedVersion, "the app speaks versions 4...5; the broker speaks 1...3")) {
            try newer.accept(Frame(id: 1, .hello(minVersion: 4, maxVersion: 5, integratesSDK: false)), hasDescriptor: false)
        }
    }

    /// A hello agrees on the newest version both ends speak (docs/PROTOCOL.md, "Versions").
    @Test(arguments: [(UInt8(1), UInt8(1), UInt8(1)), (1, 2, 2), (2, 2, 2), (1, 9, 3), (2, 9, 3), (3, 3, 3), (0, 1, 1)])
    func aHelloAgreesOnTheNewestVersionBothSpeak(min: UInt8, max: UInt8, agreed: UInt8) throws {
        var c = Conversation()
        try c.accept(Frame(id: 1, .hello(minVersion: min, maxVersion: max, integratesSDK: true)), hasDescriptor: false)
        #expect(c.version == agreed)
    }

    /// Version 1's layouts, as a client written before version 2 reads them: a decision without
    /// `ruleName` and `decidedAt`, and no `setViewIdentities`. A frame of another version than the
    /// agreed one is refused.
    @Test func eachVersionHasItsOwnLayout() throws {
        let v1 = Wire.encode(Frame(id: 7, .decision(sample)), version: 1)
        let v2 = Wire.encode(Frame(id: 7, .decision(sample)), version: 2)
        #expect(v1[2] == 1 && v2[2] == 2)
        #expect(v2.count - v1.count == 4 + sample.ruleName.utf8.count + sample.decidedAt.utf8.count)
        #expect(Array(v1[12...]) == Array(v2[12..<v1.count]), "version 2 appends; it does not reorder")
        guard case let .decision(read) = try Wire.decode(v1).message else { Issue.record("not a decision"); return }
        #expect(read.rule == sample.rule && read.detail == sample.detail && read.ruleName == "" && read.decidedAt == "")
        #expect(try Wire.decode(v2, agreed: 2).message == .decision(sample))
        #expect(throws: WireError(.unsupportedVersion, "byte 2: version 2; this connection agreed on version 1")) { try Wire.decode(v2, agreed: 1) }
        // Version 2's bytes read as version 1: the two texts are bytes too many.
        var relabelled = v2; relabelled[2] = 1
        #expect(error(relabelled)?.code == .trailingBytes)
        let view = Wire.encode(Frame(id: 8, .setViewIdentities(accounts: ["adele@contoso.com"])), version: 1)
        #expect(throws: WireError(.unknownType, "byte 3: message type 0x11 is new in version 2; this frame is version 1")) { try Wire.decode(view) }
    }
}

@Suite("MAMWire over a socket")
struct SocketTests {
    @Test func framesAndSealedDocumentsCrossARealSocketPair() throws {
        let (a, b) = try WireSocket.pair()
        defer { a.close(); b.close() }
        let content = Array("quarterly numbers".utf8)
        let doc = try SealedDocument.create(content)
        #expect(SealedDocument.isSealed(FileDescriptor(rawValue: doc.rawValue)))
        // Sealed: nobody, not even the sender, can change it after the decision.
        #expect(content.withUnsafeBytes { pwrite(doc.rawValue, $0.baseAddress, $0.count, 0) } == -1)
        #expect(ftruncate(doc.rawValue, 1) == -1)
        try a.send(Frame(id: 5, .share(target: "com.contoso.docs", contentType: "com.adobe.pdf", name: "q3.pdf")), descriptor: FileDescriptor(rawValue: doc.rawValue))
        doc.close()
        guard var got = b.receive() else { Issue.record("nothing arrived"); return }
        #expect(try got.frame.get() == Frame(id: 5, .share(target: "com.contoso.docs", contentType: "com.adobe.pdf", name: "q3.pdf")))
        guard let received = got.descriptor.take() else { Issue.record("no descriptor came with the share"); return }
        #expect(SealedDocument.read(FileDescriptor(rawValue: received.rawValue)) == content)
        #expect(SealedDocument.isSealed(FileDescriptor(rawValue: received.rawValue)))
    }

    /// Each end of a connection speaks the version of the welcome it sent or received: a hello
    /// goes out in version 1 (every broker reads it), everything after the welcome in its version,
    /// and a frame of another version is refused.
    @Test func aConnectionSpeaksTheVersionItsWelcomeNamed() throws {
        let (app, broker) = try WireSocket.pair()
        try app.send(Frame(id: 1, .hello(minVersion: 1, maxVersion: 1, integratesSDK: false)))
        guard let hello = broker.receiveRaw() else { Issue.record("no hello"); return }
        let helloVersion = hello.bytes[2]
        #expect(helloVersion == 1)
        #expect(app.agreed == nil && broker.agreed == nil)
        try broker.send(Frame(id: 1, .welcome(version: 1, bundleID: "com.example.old", managedAccount: nil)))
        #expect(broker.agreed == 1)
        try broker.send(Frame(id: 2, .decision(sample)))
        guard case .welcome? = try? app.receive()?.frame.get().message else { Issue.record("no welcome"); return }
        #expect(app.agreed == 1)
        guard case let .decision(d)? = try? app.receive()?.frame.get().message else { Issue.record("no decision"); return }
        #expect(d.rule == sample.rule && d.ruleName == "")
        try broker.sendRaw(Wire.encode(Frame(id: 3, .decision(sample)), version: 2))
        #expect(throws: WireError(.unsupportedVersion, "byte 2: version 2; this connection agreed on version 1")) { try app.receive()?.frame.get() }
    }

    @Test func oversizedAndMalformedFramesAreReportedNotTrusted() throws {
        let (a, b) = try WireSocket.pair()
        defer { a.close(); b.close() }
        try a.sendRaw([UInt8](repeating: 7, count: Wire.maximumFrame + 100))
        guard let big = b.receive() else { Issue.record("the oversized frame ended the stream"); return }
        let bigFrame = big.frame
        #expect(throws: WireError.self) { try bigFrame.get() }
        if case let .failure(e) = bigFrame { #expect(e.code == .oversized) }
        try a.sendRaw([0x4D, 0x57, 1, 0x99, 0, 0, 0, 0, 0, 0, 0, 0])
        if case let .failure(e)? = b.receive()?.frame { #expect(e.code == .unknownType) } else { Issue.record("accepted an unknown type") }
        // The pair still carries good frames after bad ones.
        try a.send(Frame(id: 1, .paste))
        #expect(try b.receive()?.frame.get() == Frame(id: 1, .paste))
        a.close()
        let ended = b.receive() == nil
        #expect(ended)
    }

    @Test func aPlainFileCannotPassAsASealedDocument() throws {
        let path = "/tmp/mamwire-\(getpid()).txt"
        let fd = open(path, O_CREAT | O_RDWR, 0o600)
        defer { Glibc.close(fd); unlink(path) }
        #expect(!SealedDocument.isSealed(FileDescriptor(rawValue: fd)))
        #expect(!SealedDocument.seal(FileDescriptor(rawValue: fd)))
    }
}
