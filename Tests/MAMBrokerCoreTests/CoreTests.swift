import MAMBroker
import MAMBrokerCore
import MAMPolicy
import MAMWire
import Testing

/// The broker's core, message by message, with no process: Mail and Docs are adele's managed
/// apps under "Managed only"; Notes and Chat have no SDK.
@Suite("Broker core: one message type at a time")
struct CoreTests {
    let mail = "com.contoso.mail", docs = "com.contoso.docs", notes = "com.example.notes"

    @Test func helloNamesTheManagedAccountTheBrokerEstablished() {
        var lab = CoreLab()
        let m = lab.launch(mail)
        let n = lab.launch(notes)
        guard case let .welcome(_, bundle, account)? = lab.received(m).first?.frame.message,
              case let .welcome(_, _, none)? = lab.received(n).first?.frame.message else { Issue.record("no welcome"); return }
        #expect(bundle == mail && account == "adele@contoso.com")
        #expect(none == nil)
    }

    @Test func anSDKAppThatSaysItRunsWithoutTheSDKIsUnmanaged() {
        var lab = CoreLab()
        let m = lab.launch(mail, sdk: false)
        guard case let .welcome(_, _, account)? = lab.received(m).first?.frame.message else { Issue.record("no welcome"); return }
        #expect(account == nil)
        #expect(lab.send(m, .setIdentity(account: "adele@contoso.com")).decision?.rule == Rule.identityNoSDK.id)
    }

    // Issue 9 item 4: identity comes from the broker, never from the app.
    @Test func identityChangesAreEngineDecisionsAndOnlyToSignedInAccounts() {
        var lab = CoreLab()
        let n = lab.launch(notes)
        let refused = lab.send(n, .setIdentity(account: "adele@contoso.com"))
        #expect(refused.outcome == "blocked" && refused.decision?.rule == Rule.identityNoSDK.id)
        let m = lab.launch(mail)
        let ben = lab.send(m, .setIdentity(account: "ben@contoso.com"))
        #expect(ben.outcome == "blocked" && ben.decision?.rule == Rule.identityNotSignedIn.id)
        #expect(lab.send(m, .setIdentity(account: "")).outcome == "allowed")
        #expect(lab.send(m, .setIdentity(account: "ADELE@contoso.com")).outcome == "allowed")
        // Each answer was audited once, as the reply said.
        let identity = lab.audits.filter { $0.channel == "identity" }
        #expect(identity.map(\.outcome) == ["blocked", "blocked", "allowed", "allowed"])
    }

    @Test func aSecondManagedAccountInOneAppIsRefusedAs227() {
        let engine = PolicyEngine(tenant: CoreLab.sampleTenant, apps: CoreLab.sampleApps)
        let manifest = engine.apps["com.contoso.mail"]!
        let adele = engine.tenant.identity(named: "adele@contoso.com").account!
        let ben = engine.tenant.identity(named: "ben@contoso.com").account!
        let party = engine.party(manifest, identity: .account(adele))
        #expect(engine.setIdentity(.account(ben), for: party, signedIn: [adele, ben]).rule == .identitySecondManaged)
    }

    @Test func aPasteFromAnEmptyPasteboardIsADecisionToo() {
        var lab = CoreLab()
        let n = lab.launch(notes)
        let got = lab.send(n, .paste)
        guard case let .pasteResult(d, text)? = got.first?.frame.message else { Issue.record("no paste result"); return }
        #expect(d.rule == Rule.pasteboardEmpty.id && text.isEmpty)
        #expect(lab.audits.count == 1 && lab.audits[0].rule == Rule.pasteboardEmpty.id)
    }

    @Test func orgTextPastesIntoManagedAppsAndIsReplacedElsewhere() {
        var lab = CoreLab()
        let m = lab.launch(mail), d = lab.launch(docs), n = lab.launch(notes)
        lab.send(m, .copy(text: "Q3 plan", types: ["public.utf8-plain-text"]))
        guard case let .pasteResult(ok, text)? = lab.send(d, .paste).first?.frame.message,
              case let .pasteResult(no, replaced)? = lab.send(n, .paste).first?.frame.message else { Issue.record("no paste"); return }
        #expect(ok.allowed && text == "Q3 plan")
        #expect(!no.allowed && replaced == UserMessage.paste)
        #expect(lab.audits.map(\.outcome) == ["allowed", "blocked"])
    }

    // A sender cannot choose the identity a URL arrives with.
    @Test func identityClaimsInAURLAreRemovedAndTheRealSenderIsSet() {
        var lab = CoreLab()
        let m = lab.launch(mail)
        let n = lab.launch(notes)
        let forged = "contosomail-intunemam://" + URLText.percentEncode("contosomail://inbox")
            + "?com.microsoft.intune.mam.identity=ben%40contoso.com&com.microsoft.intune.mam.policy=1"
        let got = lab.send(n, .openURL(url: forged))
        #expect(got.outcome == "allowed")
        let delivered = lab.received(m).compactMap { d -> (String, String?)? in
            if case let .urlDelivery(url, sender) = d.frame.message { return (url, sender) }
            return nil
        }
        #expect(delivered.count == 1)
        #expect(delivered.first?.0 == "contosomail://inbox" && delivered.first?.1 == nil)
        #expect(URLText.withoutIdentityClaims("x://a?b=1&com.microsoft.intune.mam.identity=e&c=2") == "x://a?b=1&c=2")
    }

    /// Claims hidden from a character-wise reading but plain to a receiver that reads bytes or
    /// decodes keys: a prepended mark (U+0600) joins the `?` into one character; a key can be
    /// percent-encoded; some parsers split on `;`.
    @Test(arguments: [
        "contosomail://inbox\u{600}?com.microsoft.intune.mam.identity=ben%40contoso.com",
        "contosomail://inbox?a=1&\u{600}&com.microsoft.intune.mam.identity=ben%40contoso.com",
        "contosomail://inbox?com%2Emicrosoft%2Eintune%2Emam%2Eidentity=ben%40contoso.com",
        "contosomail://inbox?COM.Microsoft.Intune.MAM.Identity=ben%40contoso.com",
        "contosomail://inbox?a=1;com.microsoft.intune.mam.identity=ben%40contoso.com",
        "contosomail-intunemam://" + URLText.percentEncode("contosomail://inbox\u{600}?com.microsoft.intune.mam.identity=ben%40contoso.com"),
    ])
    func hiddenIdentityClaimsInAURLAreRemovedToo(forged: String) {
        var lab = CoreLab()
        let m = lab.launch(mail)
        let n = lab.launch(notes)
        #expect(lab.send(n, .openURL(url: forged)).outcome == "allowed")
        let delivered = lab.received(m).compactMap { d -> String? in
            if case let .urlDelivery(url, _) = d.frame.message { return url }
            return nil
        }
        #expect(delivered.count == 1)
        for url in delivered {
            let decoded = URLText.percentDecode(Substring(url))?.lowercased() ?? url.lowercased()
            #expect(!decoded.contains("com.microsoft.intune.mam."), "delivered \(url.debugDescription)")
            #expect(url.hasPrefix("contosomail://inbox"))
        }
    }

    @Test func broadcastFramesCarryBrokerIdsThatCannotCollideWithTheApps() {
        var lab = CoreLab()
        let n = lab.launch(notes)
        let m = lab.launch(mail)
        lab.send(n, .openURL(url: "contosomail://inbox"), frameID: 7)
        let delivery = lab.received(m).last!.frame
        #expect(delivery.id >= 0x8000_0000)
    }

    // Issue 9 item 6: a URL flood to an app that never says hello starts it once, then fails.
    @Test func aURLFloodToAnAppBeingStartedStartsItOnceAndIsBounded() {
        var limits = BrokerLimits()
        limits.pendingURLsPerTarget = 4
        var lab = CoreLab(limits: limits)
        let n = lab.launch(notes)
        var answers: [[CoreLab.Delivered]] = []
        for i in 0..<6 { answers.append(lab.send(n, .openURL(url: "contosomail://m\(i)"))) }
        #expect(lab.started == ["com.contoso.mail"])
        #expect(answers.prefix(4).allSatisfy { $0.isEmpty }, "no answer before the app said hello")
        let refused: [WireErrorCode?] = answers.suffix(2).map { $0.error }
        #expect(refused == [WireErrorCode.limitReached, WireErrorCode.limitReached])
        #expect(lab.audits.isEmpty)
        lab.clock.advance(by: .seconds(16))
        lab.run(lab.core.handle(.tick))
        let errors = lab.received(n).filter { if case .error(.unknownTarget, _) = $0.frame.message { return true } else { return false } }
        #expect(errors.count == 4)
        #expect(lab.audits.isEmpty, "nothing was delivered, so nothing was decided for good")
    }

    @Test func urlsWaitingForAStartedAppAreDeliveredAndAuditedOnItsHello() {
        var lab = CoreLab()
        let n = lab.launch(notes)
        #expect(lab.send(n, .openURL(url: "contosomail://one")).isEmpty)
        let m = lab.launch(mail)
        #expect(lab.received(m).contains { if case .urlDelivery("contosomail://one", _) = $0.frame.message { return true } else { return false } })
        #expect(lab.received(n).decision?.allowed == true)
        #expect(lab.audits.count == 1 && lab.audits[0].channel == "open-url")
    }

    // Issue 14: a document sent to an app that is not running starts it, and waits for it.
    @Test func aDocumentForAnAppThatIsNotRunningStartsItAndArrivesOnItsHello() {
        var lab = CoreLab()
        let m = lab.launch(mail)
        #expect(lab.send(m, .share(target: docs, contentType: "com.adobe.pdf", name: "a.pdf"), lab.document("minutes")).isEmpty)
        #expect(lab.started == [docs])
        #expect(lab.audits.isEmpty, "decided only once the app is there")
        let d = lab.launch(docs)
        let got = lab.received(d).filter { if case .document = $0.frame.message { return true } else { return false } }
        #expect(got.count == 1 && got.first?.content?.text == "minutes", "\(lab.received(m))")
        #expect(lab.received(m).decision?.allowed == true)
        #expect(lab.audits.map(\.channel) == ["open-in"])
        #expect(lab.heldDescriptors == 0)
    }

    @Test func documentsWaitingForAStartThatNeverComesAreReleasedAndRefused() {
        var limits = BrokerLimits()
        limits.pendingURLsPerTarget = 2
        var lab = CoreLab(limits: limits)
        let n = lab.launch(notes)
        let answers = (0..<3).map { i in lab.send(n, .share(target: docs, contentType: "com.adobe.pdf", name: "\(i).pdf"), lab.document("x\(i)")) }
        #expect(lab.started == [docs], "one start however many documents wait")
        #expect(answers[0].isEmpty && answers[1].isEmpty && answers[2].error == .limitReached)
        // Another spelling of the installed id is the installed app, whose queue is full; an app
        // that is not installed is not started.
        #expect(lab.send(n, .share(target: "COM.CONTOSO.DOCS", contentType: "com.adobe.pdf", name: "y.pdf"), lab.document("y")).error == .limitReached)
        #expect(lab.send(n, .share(target: "com.example.nowhere", contentType: "com.adobe.pdf", name: "z.pdf"), lab.document("z")).error == .unknownTarget)
        lab.clock.advance(by: .seconds(16))
        lab.run(lab.core.handle(.tick))
        #expect(lab.received(n).filter { if case .error(.unknownTarget, _) = $0.frame.message { return true } else { return false } }.count == 3)
        #expect(lab.heldDescriptors == 0, "every waiting document's descriptor is let go")
        #expect(lab.audits.isEmpty)
    }

    // Issue 9 item 3: `encrypted` means ciphertext.
    @Test func anEncryptedPushDeliversCiphertextAndAnswersOnceItIsMade() {
        var lab = CoreLab()
        let m = lab.launch(mail), n = lab.launch(notes)
        let doc = lab.document("Q3 numbers")
        lab.deferJobs = true
        let early = lab.send(m, .share(target: notes, contentType: "com.adobe.pdf", name: "q3.pdf"), doc)
        #expect(early.isEmpty && lab.audits.isEmpty, "no answer before the ciphertext exists")
        lab.flushJobs()
        let got = lab.received(n).filter { if case .document = $0.frame.message { return true } else { return false } }
        #expect(got.count == 1 && got[0].content == CoreLab.Content(text: "Q3 numbers", encrypted: true))
        #expect(lab.received(m).outcome == "encrypted")
        #expect(lab.audits.map(\.outcome) == ["encrypted"])
        #expect(lab.heldDescriptors == 0)
    }

    // Issue 9 item 10: the broker and `explain` agree: an import into an unmanaged app is blocked.
    @Test func anImportFromAManagedAppIntoAnUnmanagedOneIsBlocked() {
        var lab = CoreLab()
        let m = lab.launch(mail), n = lab.launch(notes)
        lab.send(n, .importRequest(source: mail, contentType: "com.adobe.pdf"), frameID: 3)
        guard let request = lab.received(m).last?.frame, case .exportRequest = request.message else { Issue.record("no export request"); return }
        lab.send(m, .exportReply(contentType: "com.adobe.pdf", name: "q3.pdf"), lab.document("secret"), frameID: request.id)
        let answer = lab.received(n).filter { $0.frame.id == 3 }
        #expect(answer.outcome == "blocked" && answer.count == 1)
        #expect(lab.heldDescriptors == 0)
    }

    @Test func importsWaitingForTheirSourceAreBounded() {
        var limits = BrokerLimits()
        limits.pendingImportsPerApp = 2
        var lab = CoreLab(limits: limits)
        let m = lab.launch(mail), d = lab.launch(docs)
        #expect(lab.send(d, .importRequest(source: mail, contentType: "a")).isEmpty)
        #expect(lab.send(d, .importRequest(source: mail, contentType: "a")).isEmpty)
        #expect(lab.send(d, .importRequest(source: mail, contentType: "a")).error == .limitReached)
        _ = m
    }

    @Test func anExportReplyToNoRequestClosesTheConnection() {
        var lab = CoreLab()
        let m = lab.launch(mail)
        #expect(lab.send(m, .exportReply(contentType: "a", name: "b"), lab.document("x"), frameID: 0x8000_0100).error == .outOfOrder)
        #expect(lab.closed.contains(m) && lab.heldDescriptors == 0)
    }
}

@Suite("Broker core: who may connect")
struct ConnectionTests {
    @Test func unknownAppsOnThePublicSocketAreBoundedAndFreeTheirPlaceOnLeaving() {
        var limits = BrokerLimits()
        limits.publicConnections = 2
        var lab = CoreLab(limits: limits)
        let a = lab.connect(Peer(bundleID: "unknown.pid1", pid: 1, fromLauncher: false))
        _ = lab.connect(Peer(bundleID: "unknown.pid2", pid: 2, fromLauncher: false))
        let c = lab.connect(Peer(bundleID: "unknown.pid3", pid: 3, fromLauncher: false))
        #expect(lab.closed == [c])
        lab.run(lab.core.handle(.disconnected(a)))
        let d = lab.connect(Peer(bundleID: "unknown.pid4", pid: 4, fromLauncher: false))
        #expect(!lab.closed.contains(d))
        // The launcher's apps do not count against unknown ones.
        let m = lab.launch("com.contoso.mail")
        #expect(!lab.closed.contains(m))
    }

    @Test(arguments: ["../dev", "com.contoso.mail/../../x", "a b", "com.contoso.mail\n", "", ".hidden", "a..b"])
    func theLauncherCannotHandOverAnAppWithAPathForABundleID(_ bundle: String) {
        var lab = CoreLab()
        let id = lab.connect(Peer(bundleID: bundle, pid: 9, fromLauncher: true))
        #expect(lab.closed.contains(id))
        #expect(lab.core.party(of: id) == nil)
    }
}

@Suite("Broker core: the remaining message types")
struct MoreMessageTests {
    let mail = "com.contoso.mail", docs = "com.contoso.docs", notes = "com.example.notes"

    @Test func canOpenURLAnswersFromTheQueriesListAndThePolicy() {
        var lab = CoreLab()
        let m = lab.launch(mail)
        guard case let .canOpenURLResult(known)? = lab.send(m, .canOpenURL(url: "contosodocs://x")).first?.frame.message,
              case let .canOpenURLResult(unknown)? = lab.send(m, .canOpenURL(url: "nosuchscheme://x")).first?.frame.message else {
            Issue.record("no answer"); return
        }
        #expect(known, "Mail queries contosodocs and its twin, and Docs handles it")
        #expect(!unknown)
        #expect(lab.audits.isEmpty, "a question, not a decision about data")
    }

    @Test func theShareSheetListsOtherRunningAppsWithTheOutcomeAPushWouldHave() {
        var lab = CoreLab()
        let m = lab.launch(mail)
        _ = lab.launch(docs)
        _ = lab.launch(notes)
        guard case let .targets(list)? = lab.send(m, .listTargets(contentType: "com.adobe.pdf")).first?.frame.message else {
            Issue.record("no targets"); return
        }
        let outcomes = Dictionary(uniqueKeysWithValues: list.map { ($0.bundleID, $0.outcome) })
        #expect(outcomes[docs] == 0 && outcomes[notes] == 2, "\(outcomes)")
        #expect(outcomes[mail] == nil, "never itself")
    }

    @Test func aShareBetweenManagedAppsPassesTheSealedDescriptorUntouchedWithItsOwner() {
        var lab = CoreLab()
        let m = lab.launch(mail), d = lab.launch(docs)
        let answer = lab.send(m, .share(target: docs, contentType: "com.adobe.pdf", name: "q3.pdf"), lab.document("Q3"))
        #expect(answer.outcome == "allowed")
        guard let delivered = lab.received(d).last, case let .document(type, name, owner, encrypted) = delivered.frame.message else {
            Issue.record("nothing delivered"); return
        }
        #expect(type == "com.adobe.pdf" && name == "q3.pdf" && owner == "adele@contoso.com" && !encrypted)
        #expect(delivered.content == CoreLab.Content(text: "Q3"))
        #expect(lab.heldDescriptors == 0)
    }

    @Test func aShareToAnAppThatIsNotInstalledIsRefusedWithoutADecision() {
        var lab = CoreLab()
        let m = lab.launch(mail)
        #expect(lab.send(m, .share(target: "com.example.elsewhere", contentType: "com.adobe.pdf", name: "q.pdf"), lab.document("x")).error == .unknownTarget)
        #expect(lab.started.isEmpty)
        #expect(lab.audits.isEmpty && lab.heldDescriptors == 0)
    }

    @Test func byeEndsTheConversationAndWhatFollowsIsOutOfOrder() {
        var lab = CoreLab()
        let n = lab.launch(notes)
        lab.send(n, .bye)
        #expect(lab.closed.contains(n))
        #expect(lab.core.party(of: n) == nil)
    }

    @Test func anImportWhoseSourceLeavesIsAnsweredUnknownTarget() {
        var lab = CoreLab()
        let m = lab.launch(mail), d = lab.launch(docs)
        lab.send(d, .importRequest(source: mail, contentType: "com.adobe.pdf"), frameID: 4)
        lab.run(lab.core.handle(.disconnected(m)))
        #expect(lab.received(d).filter { $0.frame.id == 4 }.error == .unknownTarget)
    }

    @Test func aReloadChangesLaterDecisionsOnly() {
        var lab = CoreLab()
        let m = lab.launch(mail), n = lab.launch(notes)
        lab.send(m, .copy(text: "Q3 plan", types: ["public.utf8-plain-text"]))
        #expect(lab.send(n, .paste).outcome == "blocked")
        var open = CoreLab.sampleTenant
        for i in open.policies.indices { open.policies[i].settings.clipboard = .allApps }
        lab.core.reload(open)
        #expect(lab.send(n, .paste).outcome == "allowed")
        #expect(lab.audits.map(\.revision) == [1, 2])
    }
}
