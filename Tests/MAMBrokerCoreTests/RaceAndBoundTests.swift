import MAMBroker
import MAMBrokerCore
import MAMPolicy
import MAMWire
import Testing

/// Attacks a review of the rewritten broker found (each failed before its fix): decisions made
/// for one party and carried out for another, races between a save and an open, bounds that
/// several instances or a fast app could outrun, and frames no client could read.
@Suite("Broker core: races, bounds and second chances")
struct RaceAndBoundTests {
    let mail = "com.contoso.mail", docs = "com.contoso.docs", notes = "com.example.notes"

    func urlDeliveries(_ lab: CoreLab, _ id: SessionID) -> [String] {
        lab.received(id).compactMap { if case let .urlDelivery(u, _) = $0.frame.message { return u } else { return nil } }
    }

    @Test func aURLWaitingForItsTargetIsDecidedAgainForTheAppThatReallyStarted() {
        var lab = CoreLab()
        let d = lab.launch(docs)
        #expect(lab.send(d, .openURL(url: "contosomail://inbox/secret"), frameID: 5).isEmpty)
        // The started Mail says it runs without the SDK: it is unmanaged, and gets nothing.
        let m = lab.launch(mail, sdk: false)
        #expect(urlDeliveries(lab, m).isEmpty)
        #expect(lab.received(d).filter { $0.frame.id == 5 }.outcome == "blocked")
        #expect(lab.audits.last?.outcome == "blocked" && lab.audits.last?.target?.managed == false)
    }

    @Test func anOpenWhileTheSameFileIsBeingWrittenIsRefusedNotDecidedOnTheOldOwner() {
        var lab = CoreLab()
        let adele = "adele@contoso.com"
        let m = lab.launch(mail), n = lab.launch(notes, account: adele)
        #expect(lab.send(n, .saveTo(location: 1, account: adele, name: "x.txt"), lab.document("personal")).outcome == "allowed")
        lab.deferJobs = true
        lab.send(m, .saveTo(location: 1, account: adele, name: "x.txt"), lab.document("ORG SECRET"), frameID: 70)
        #expect(lab.send(n, .openFrom(location: 1, account: adele, name: "x.txt"), frameID: 71).error == .limitReached)
        #expect(lab.send(n, .saveTo(location: 1, account: adele, name: "x.txt"), lab.document("mine")).error == .limitReached)
        lab.flushJobs()
        #expect(!lab.received(n).contains { $0.content?.text == "ORG SECRET" })
        #expect(lab.send(n, .openFrom(location: 1, account: adele, name: "x.txt")).outcome == "blocked")
        #expect(lab.heldDescriptors == 0)
    }

    @Test func savesInFlightCountAgainstTheQuotaAndEveryInstanceSharesTheAppsBounds() {
        var limits = BrokerLimits()
        limits.quotaPerApp = 250
        limits.maximumFileSize = 100
        var lab = CoreLab(limits: limits)
        let n = lab.launch(notes), n2 = lab.launch(notes)
        lab.deferJobs = true
        var refused = 0
        for i in 0..<8 {
            let who = i % 2 == 0 ? n : n2
            if lab.send(who, .saveTo(location: 32, account: nil, name: "f\(i)"), lab.document(String(repeating: "a", count: 100))).error == .limitReached { refused += 1 }
        }
        lab.flushJobs()
        let total = lab.core.storedFiles.filter { $0.app == notes }.map(\.size).reduce(0, +)
        #expect(total <= limits.quotaPerApp && refused == 6)
        #expect(lab.heldDescriptors == 0)
    }

    @Test func aSourceAnsweringAfterItsImporterLeftKeepsItsConnection() {
        var lab = CoreLab()
        let m = lab.launch(mail), d = lab.launch(docs)
        lab.send(d, .importRequest(source: mail, contentType: "com.adobe.pdf"))
        guard let request = lab.received(m).last?.frame, case .exportRequest = request.message else { Issue.record("no export request"); return }
        lab.run(lab.core.handle(.disconnected(d)))
        let reply = lab.send(m, .exportReply(contentType: "com.adobe.pdf", name: "q.pdf"), lab.document("x"), frameID: request.id)
        #expect(reply.isEmpty && !lab.closed.contains(m) && lab.heldDescriptors == 0)
    }

    @Test func exportRequestsToOneSourceAreBoundedAcrossImporters() {
        var limits = BrokerLimits()
        limits.pendingExportsPerSource = 3
        var lab = CoreLab(limits: limits)
        _ = lab.launch(mail)
        let importers = (0..<4).map { _ in lab.launch(docs) }
        let answers = importers.map { lab.send($0, .importRequest(source: mail, contentType: "a")) }
        #expect(answers.filter { $0.error == .limitReached }.count == 1)
    }

    @Test func aURLThatWouldNotFitAsDeliveredIsRefusedBeforeAnythingIsSent() {
        var lab = CoreLab()
        let m = lab.launch(mail), d = lab.launch(docs)
        let answer = lab.send(m, .openURL(url: "contosodocs://" + String(repeating: "!", count: 4000)))
        #expect(answer.error == .limitReached)
        #expect(urlDeliveries(lab, d).isEmpty && lab.audits.isEmpty)
        for f in lab.received(m) + lab.received(d) { #expect((try? Wire.decode(Wire.encode(f.frame))) != nil) }
    }

    // Found in review (S1): flooding another app used to get that app disconnected.
    @Test func aReceiverThatIsNotReadingKeepsItsConnectionAndTheSenderIsTold() {
        var lab = CoreLab()
        let m = lab.launch(mail), d = lab.launch(docs), n = lab.launch(notes)
        lab.notReading = [d, m]
        let url = lab.send(n, .openURL(url: "contosomail://x"))
        let push = lab.send(m, .share(target: docs, contentType: "com.adobe.pdf", name: "q.pdf"), lab.document("q"))
        #expect(url.error == .limitReached && push.error == .limitReached)
        #expect(lab.closed.isEmpty && lab.audits.isEmpty && lab.heldDescriptors == 0)
    }

    // Issue 20: an import whose export request could not be delivered was answered limitReached
    // and then, at the time-out, unknownTarget under the same frame id.
    @Test func anImportWhoseSourceIsNotReadingIsAnsweredOnceAndFreesItsSlot() {
        var limits = BrokerLimits()
        limits.pendingImportsPerApp = 1
        var lab = CoreLab(limits: limits)
        let m = lab.launch(mail), d = lab.launch(docs)
        lab.notReading = [m]
        #expect(lab.send(d, .importRequest(source: mail, contentType: "a"), frameID: 7).error == .limitReached)
        lab.clock.advance(by: .seconds(31))
        lab.run(lab.core.handle(.tick))
        lab.run(lab.core.handle(.disconnected(m)))
        #expect(lab.received(d).filter { $0.frame.id == 7 }.count == 1, "\(lab.received(d).map(\.frame))")
        // Its slot is free again: another import may wait (for a source that is there).
        let n = lab.launch(notes)
        #expect(lab.send(d, .importRequest(source: notes, contentType: "a"), frameID: 8).isEmpty)
        _ = n
    }

    @Test func theCopierIsStillTheCopierAfterAReload() {
        var lab = CoreLab()
        let m = lab.launch(mail), n = lab.launch(notes)
        lab.send(m, .copy(text: "Q3 plan", types: ["public.utf8-plain-text"]))
        let before = lab.send(n, .paste).outcome
        lab.core.reload(CoreLab.sampleTenant)
        #expect(before == "blocked" && lab.send(n, .paste).outcome == "blocked")
    }
}

@Suite("Broker core: more second chances")
struct MoreBoundTests {
    @Test func aBundleIDSpelledOtherwiseThanTheInstalledAppIsAnUnknownUnmanagedApp() {
        var lab = CoreLab()
        let fake = lab.launch("COM.CONTOSO.MAIL")
        #expect(lab.core.party(of: fake)?.isManaged == false && lab.core.party(of: fake)?.integratesSDK == false)
    }

    @Test func aSourceThatNeverAnswersFreesTheImportersSlotsAfterItsTime() {
        var limits = BrokerLimits()
        limits.pendingImportsPerApp = 1
        var lab = CoreLab(limits: limits)
        let m = lab.launch("com.contoso.mail"), d = lab.launch("com.contoso.docs")
        #expect(lab.send(d, .importRequest(source: "com.contoso.mail", contentType: "a"), frameID: 1).isEmpty)
        #expect(lab.send(d, .importRequest(source: "com.contoso.mail", contentType: "a"), frameID: 2).error == .limitReached)
        lab.clock.advance(by: .seconds(31))
        lab.run(lab.core.handle(.tick))
        #expect(lab.received(d).filter { $0.frame.id == 1 }.error == .unknownTarget)
        #expect(lab.send(d, .importRequest(source: "com.contoso.mail", contentType: "a"), frameID: 3).isEmpty)
        // The late answer to the first request is dropped; the source keeps its connection.
        guard let first = lab.received(m).first(where: { if case .exportRequest = $0.frame.message { return true } else { return false } })?.frame else {
            Issue.record("no export request"); return
        }
        #expect(lab.send(m, .exportReply(contentType: "a", name: "a"), lab.document("late"), frameID: first.id).isEmpty)
        #expect(!lab.closed.contains(m) && lab.heldDescriptors == 0)
    }

    @Test func everyProcessOnThePublicSocketSharesOneQuota() {
        var limits = BrokerLimits()
        limits.quotaPerApp = 150
        var lab = CoreLab(limits: limits)
        var answers: [[CoreLab.Delivered]] = []
        for pid in 1...3 {
            let u = lab.connect(Peer(bundleID: "unknown.pid\(pid)", pid: Int32(pid), fromLauncher: false))
            lab.send(u, .hello(minVersion: 1, maxVersion: 1, integratesSDK: false))
            answers.append(lab.send(u, .saveTo(location: 32, account: nil, name: "f\(pid)"), lab.document(String(repeating: "x", count: 60))))
        }
        #expect(answers.map(\.outcome) == ["allowed", "allowed", nil])
        #expect(answers[2].error == .limitReached)
    }

    @Test func anErrorThatRepeatsWhatTheAppSentStillFitsAnyClient() {
        var lab = CoreLab()
        let n = lab.launch("com.example.notes")
        let account = String(repeating: "a", count: 4000) + "@contoso.com"
        let got = lab.send(n, .openFrom(location: 1, account: account, name: "x"))
        #expect(got.error == .notAllowed)
        for d in got { #expect((try? Wire.decode(Wire.encode(d.frame))) != nil) }
    }
}

@Suite("Broker core: its own log")
struct CoreLogTests {
    @Test func aFloodOfRefusedRequestsIsLoggedByCountNotLineForLine() {
        var lab = CoreLab()
        let n = lab.launch("com.example.notes")
        for _ in 0..<1000 { lab.send(n, .share(target: "com.nowhere.app", contentType: "a", name: "b"), lab.document("x")) }
        let refused = lab.logs.filter { $0.message == "request refused" }
        #expect(refused.map { $0.metadata["refusals"] ?? "" } == (1...10).map(String.init) + ["100", "1000"])
        #expect(lab.heldDescriptors == 0)
    }
}
