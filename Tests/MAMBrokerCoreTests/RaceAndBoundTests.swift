import MAMBroker
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

    @Test func theCopierIsStillTheCopierAfterAReload() {
        var lab = CoreLab()
        let m = lab.launch(mail), n = lab.launch(notes)
        lab.send(m, .copy(text: "Q3 plan", types: ["public.utf8-plain-text"]))
        let before = lab.send(n, .paste).outcome
        lab.core.reload(CoreLab.sampleTenant)
        #expect(before == "blocked" && lab.send(n, .paste).outcome == "blocked")
    }
}
