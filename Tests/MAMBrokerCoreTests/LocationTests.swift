import MAMBroker
import MAMBrokerCore
import MAMPolicy
import MAMWire
import Testing

/// Storage locations in the core: names, accounts and owners (issue 9 items 1, 2 and 6).
@Suite("Broker core: storage locations")
struct LocationTests {
    let mail = "com.contoso.mail", notes = "com.example.notes", docs = "com.contoso.docs"
    // Save bits: 1 OneDrive, 8 Dropbox, 32 local drive. Open bits: 1 OneDrive, 8 local storage.

    @Test(arguments: ["../../../../etc", "..", ".", "a/b", "/etc/passwd", "nul\u{0}byte", "line\nbreak", "esc\u{1B}[2J",
                      "del\u{7F}", String(repeating: "x", count: 256), ""])
    func aNameThatIsNotOnePlainComponentIsRefused(_ name: String) {
        var lab = CoreLab()
        let n = lab.launch(notes)
        #expect(lab.send(n, .saveTo(location: 8, account: nil, name: name), lab.document("x")).error == .invalidName)
        #expect(lab.send(n, .openFrom(location: 8, account: nil, name: name)).error == .invalidName)
        #expect(lab.disk.isEmpty && lab.heldDescriptors == 0 && !lab.closed.contains(n))
    }

    @Test func theLongestNameIsAccepted() {
        var lab = CoreLab()
        let n = lab.launch(notes)
        let name = String(repeating: "é", count: 127) + "x"
        #expect(lab.send(n, .saveTo(location: 8, account: nil, name: name), lab.document("x")).outcome == "allowed")
    }

    @Test func anAccountTheAppHasNotSignedInIsRefused() {
        var lab = CoreLab()
        let n = lab.launch(notes)
        let got = lab.send(n, .openFrom(location: 1, account: "adele@contoso.com", name: "plan.txt"))
        #expect(got.error == .notAllowed)
        #expect(lab.send(n, .saveTo(location: 1, account: "mallory@evil.example", name: "x"), lab.document("x")).error == .notAllowed)
        #expect(lab.send(n, .saveTo(location: 1, account: "../../etc", name: "x"), lab.document("x")).error == .notAllowed)
    }

    @Test func accountFoldersAreTheTenantUsersObjectIds() {
        var lab = CoreLab()
        let m = lab.launch(mail)
        #expect(lab.send(m, .saveTo(location: 1, account: "adele@contoso.com", name: "plan.txt"), lab.document("the plan")).outcome == "allowed")
        #expect(lab.disk.keys.map(\.relativePath) == ["oneDriveForBusiness/5f1c7a2e-3b4d-4e6f-8a9b-0c1d2e3f4a5b/plan.txt"])
        let opened = lab.send(m, .openFrom(location: 1, account: "adele@contoso.com", name: "plan.txt"))
        #expect(opened.outcome == "allowed")
        guard case let .file(name, owner)? = opened.last?.frame.message else { Issue.record("no file"); return }
        #expect(name == "plan.txt" && owner == "adele@contoso.com" && opened.last?.content?.text == "the plan")
    }

    @Test func descriptorsThatAreNotSealedSparseOrTooLargeAreRefusedBeforeAnyCopy() {
        var limits = BrokerLimits()
        limits.maximumFileSize = 1000
        limits.quotaPerApp = 1500
        var lab = CoreLab(limits: limits)
        let n = lab.launch(notes)
        #expect(lab.send(n, .saveTo(location: 8, account: nil, name: "a"), lab.document("x", sealed: false)).error == .notAllowed)
        #expect(lab.send(n, .saveTo(location: 8, account: nil, name: "b"), lab.document("x", size: 1001)).error == .limitReached)
        #expect(lab.send(n, .saveTo(location: 8, account: nil, name: "c"), lab.document("x", size: 1 << 30, allocated: 4096)).error == .limitReached)
        #expect(lab.send(n, .saveTo(location: 8, account: nil, name: "d"), lab.document("x", size: 900)).outcome == "allowed")
        #expect(lab.send(n, .saveTo(location: 8, account: nil, name: "e"), lab.document("x", size: 900)).error == .limitReached, "quota")
        // Replacing its own file does not count twice.
        #expect(lab.send(n, .saveTo(location: 8, account: nil, name: "d"), lab.document("x", size: 950)).outcome == "allowed")
        #expect(lab.disk.count == 1 && lab.heldDescriptors == 0 && lab.audits.count == 2)
    }

    @Test func anOpenOfAFileThatDoesNotExistIsAnErrorNotADecision() {
        var lab = CoreLab()
        let n = lab.launch(notes)
        #expect(lab.send(n, .openFrom(location: 8, account: nil, name: "passwd")).error == .unknownTarget)
        #expect(lab.audits.isEmpty)
    }

    /// A tenant where adele's policy lets her save anywhere but still sends org data to managed apps only.
    static func saveAnywhere() -> CoreLab {
        var tenant = CoreLab.sampleTenant
        for i in tenant.policies.indices where tenant.policies[i].displayName == "Managed only" {
            tenant.policies[i].settings.saveAsBlocked = false
            tenant.policies[i].settings.blockDataIngestionIntoOrganizationDocuments = false
        }
        return CoreLab(tenant: tenant)
    }

    // Issue 9 item 2: a stored file keeps its owner; opening it is decided with the owner's data as org data.
    @Test func orgDataSavedToALocalDriveCannotBeOpenedByAnUnmanagedApp() {
        var lab = Self.saveAnywhere()
        let m = lab.launch(mail), n = lab.launch(notes), d = lab.launch(docs)
        #expect(lab.send(m, .saveTo(location: 32, account: nil, name: "q3.txt"), lab.document("Q3 numbers")).outcome == "allowed")
        let notesOpen = lab.send(n, .openFrom(location: 8, account: nil, name: "q3.txt"))
        #expect(notesOpen.outcome == "blocked" && notesOpen.count == 1)
        #expect(notesOpen.decision?.rule == Rule.sendToUnmanagedBlocked.id, "decided on the owner's send setting")
        let docsOpen = lab.send(d, .openFrom(location: 8, account: nil, name: "q3.txt"))
        #expect(docsOpen.outcome == "allowed" && docsOpen.last?.content?.text == "Q3 numbers")
        // Personal data saved by Notes opens anywhere.
        #expect(lab.send(n, .saveTo(location: 32, account: nil, name: "mine.txt"), lab.document("mine")).outcome == "allowed")
        #expect(lab.send(n, .openFrom(location: 8, account: nil, name: "mine.txt")).outcome == "allowed")
    }

    @Test func anotherAccountsFileIsNotOverwritten() {
        var lab = Self.saveAnywhere()
        let m = lab.launch(mail), n = lab.launch(notes)
        #expect(lab.send(m, .saveTo(location: 32, account: nil, name: "q3.txt"), lab.document("Q3")).outcome == "allowed")
        #expect(lab.send(n, .saveTo(location: 32, account: nil, name: "q3.txt"), lab.document("gone")).error == .notAllowed)
        #expect(lab.disk.values.first?.text == "Q3")
    }

    @Test func aSaveIsAnsweredAndAuditedOnlyOnceTheFileLanded() {
        var lab = CoreLab()
        let n = lab.launch(notes)
        lab.deferJobs = true
        #expect(lab.send(n, .saveTo(location: 8, account: nil, name: "n.txt"), lab.document("mine"), frameID: 5).isEmpty)
        #expect(lab.audits.isEmpty)
        lab.flushJobs()
        #expect(lab.received(n).filter { $0.frame.id == 5 }.outcome == "allowed")
        #expect(lab.audits.count == 1 && lab.heldDescriptors == 0)
    }
}
