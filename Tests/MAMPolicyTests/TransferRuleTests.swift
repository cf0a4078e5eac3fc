import MAMPolicy
import Testing

@Suite("4.1 send and 4.2 receive")
struct TransferRuleTests {
    @Test func unmanagedSenderIsNeverRestricted() {
        let lab = Lab(settings: .with { $0.send = .none; $0.receive = .none })
        let d = lab.engine.send(from: lab.party("notes"), to: lab.party("chat"), mode: .push)
        #expect(d.outcome == .allowed && d.rule == .senderUnmanaged && d.rule.id == "4.1.1")
    }

    @Test func sendAllAppsAllowsAnyTarget() {
        let lab = Lab(settings: .with { $0.send = .allApps })
        let d = lab.engine.send(from: lab.party("mail"), to: lab.party("notes"), mode: .push)
        #expect(d.rule == .sendAllApps && d.outcome == .allowed && d.rule.id == "4.1.2")
    }

    @Test func sendNoneBlocksEvenManagedTargets() {
        let lab = Lab(settings: .with { $0.send = .none })
        let d = lab.engine.send(from: lab.party("mail"), to: lab.party("docs"), mode: .push)
        #expect(d.outcome == .blocked && d.rule == .sendNone)
        #expect(d.message == UserMessage.sendNone)
        // seed 000 §'Copy To' actions: with sharing to unmanaged apps prohibited the share sheet
        // has no Copy-to actions, and None prohibits every app: not offered, even a managed one;
        // pulled by an import it is blocked.
        let openIn = lab.engine.openIn(type: "com.adobe.pdf", from: lab.party("mail"), to: lab.party("docs"))
        #expect(openIn.outcome == .filtered && openIn.rule == .sendNoneOpenInFiltered && openIn.rule.id == "4.1.3")
        #expect(openIn.message == UserMessage.sendNone && openIn.deliveredType == nil)
        #expect(lab.engine.openInTargets(type: "com.adobe.pdf", from: lab.party("mail"), candidates: [lab.party("docs"), lab.party("notes")])
            .allSatisfy { $0.decision.outcome == .filtered })
        let imported = lab.engine.openIn(type: "com.adobe.pdf", from: lab.party("mail"), to: lab.party("docs"), mode: .import)
        #expect(imported.outcome == .blocked && imported.rule == .sendNone)
    }

    @Test func pushToAppWithAccountEnrolledSwitchesIt() {
        let lab = Lab(settings: .managedOnly)
        let d = lab.engine.send(from: lab.party("docs"), to: lab.party("mail", "personal"), mode: .push)
        #expect(d.outcome == .switched)
        #expect(d.receivingIdentity?.account?.upn == Lab.adele)
    }

    @Test func importNeedsTheImporterToActUnderTheAccount() {
        let lab = Lab(settings: .managedOnly)
        let d = lab.engine.send(from: lab.party("docs"), to: lab.party("mail", "personal"), mode: .import)
        #expect(d.outcome == .blocked && d.rule == .sendImportIdentityMismatch)
    }

    @Test func anotherUsersManagedAppIsNotATarget() {
        // Ben's Docs is managed, but by ben: adele's org data may not go there.
        let lab = Lab(settings: .managedOnly, ben: .managedOnly)
        let d = lab.engine.transfer(from: lab.party("mail", Lab.adele), to: lab.party("docs", Lab.ben), mode: .push)
        #expect(d.outcome == .blocked && d.rule == .sendToUnmanagedBlocked)
    }

    @Test func openInToUnmanagedIsEncryptedFilteredOrClear() {
        let encrypted = Lab(settings: .managedOnly)
        let e = encrypted.engine.openIn(type: "com.adobe.pdf", from: encrypted.party("mail"), to: encrypted.party("notes"))
        #expect(e.outcome == .encrypted && e.rule == .sendOpenInEncrypted)
        #expect(e.deliveredType == "com.microsoft.intune.mam.com.adobe.pdf")
        #expect(e.message.isEmpty)

        let filtered = Lab(settings: .with { $0.send = .managedApps; $0.filterOpenInToOnlyManagedApps = true })
        let f = filtered.engine.openIn(type: "com.adobe.pdf", from: filtered.party("mail"), to: filtered.party("notes"))
        #expect(f.outcome == .filtered)

        var device = Device()
        device.mdmEnrolled = true
        device.mdmManagedApps = ["com.example.notes"]
        let os = Lab({ $0.send = .managedApps; $0.disableProtectionOfManagedOutboundOpenInData = true }, device: device)
        let o = os.engine.openIn(type: "com.adobe.pdf", from: os.party("mail"), to: os.party("notes"))
        #expect(o.outcome == .allowed && o.rule == .sendOpenInOSSharing && o.deliveredType == "com.adobe.pdf")

        // OS sharing needs both an MDM-enrolled device and an MDM-managed target.
        var unenrolled = device
        unenrolled.mdmEnrolled = false
        let noMDM = Lab({ $0.send = .managedApps; $0.disableProtectionOfManagedOutboundOpenInData = true }, device: unenrolled)
        #expect(noMDM.engine.openIn(type: "com.adobe.pdf", from: noMDM.party("mail"), to: noMDM.party("notes")).outcome == .encrypted)
    }

    @Test func receiveAllAppsAcceptsAnything() {
        let lab = Lab(settings: .with { $0.receive = .allApps })
        let d = lab.engine.transfer(from: lab.party("notes"), to: lab.party("mail"), mode: .push)
        #expect(d.outcome == .allowed && d.rule == .receiveAllApps && d.rule.id == "4.2.2")
    }

    @Test func unknownSourceDataIsTaggedWithTheMDMUserOnAnEnrolledDevice() throws {
        var device = Device()
        device.mdmEnrolled = true
        let probe = Lab(settings: PolicySettings())
        device.mdmUser = probe.engine.tenant.knownAccount(named: Lab.adele)
        let lab = Lab({ $0.receive = .allApps; $0.protectInboundDataFromUnknownSources = true }, device: device)
        let d = lab.engine.transfer(from: lab.party("notes"), to: lab.party("mail"), mode: .push)
        #expect(d.rule == .receiveAllAppsTagged && d.outcome == .allowed)
        #expect(d.receivingIdentity?.account?.upn == Lab.adele)
    }

    @Test func receiveNoneBlocksWithItsMessage() {
        let lab = Lab(settings: .with { $0.receive = .none })
        let d = lab.engine.transfer(from: lab.party("notes"), to: lab.party("docs"), mode: .push)
        #expect(d.outcome == .blocked && d.rule == .receiveNone)
        #expect(d.message == UserMessage.receiveNone)
        // A multi-identity receiver with a personal account takes it as personal instead.
        let m = lab.engine.transfer(from: lab.party("notes"), to: lab.party("mail", alsoPersonal: true), mode: .push)
        #expect(m.outcome == .switched && m.receivingIdentity == .personal)
        // An active import never switches.
        let i = lab.engine.transfer(from: lab.party("notes"), to: lab.party("mail", alsoPersonal: true), mode: .import)
        #expect(i.outcome == .blocked && i.rule == .receiveImportBlocked)
    }

    @Test func senderWithNoTargetedPolicyIsUnmanaged() {
        // Ben has no policy in this lab: his identity in an SDK app is unmanaged.
        let lab = Lab(settings: .with { $0.send = .none })
        let ben = lab.party("docs", Lab.ben)
        #expect(!ben.isManaged)
        #expect(lab.engine.send(from: ben, to: lab.party("notes"), mode: .push).rule == .senderUnmanaged)
    }
}
