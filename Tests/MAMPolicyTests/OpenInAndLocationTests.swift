import MAMPolicy
import Testing

@Suite("4.5 open-in types")
struct OpenInTests {
    @Test func shareTargetsDeclareTheTypeOrItsTwin() {
        let lab = Lab(settings: .managedOnly)
        let targets = lab.engine.openInTargets(type: "com.adobe.pdf", from: lab.party("mail"),
                                               candidates: Lab.apps.map { lab.party(String($0.bundleID.split(separator: ".").last!)) })
        let ids = targets.map(\.target.app.bundleID).sorted()
        // Chat declares only images; Files takes any item; Mail (the sender) is left out.
        #expect(ids == ["com.contoso.docs", "com.contoso.legacy", "com.example.files", "com.example.notes"])
    }

    @Test func filteringOffersOnlyAppsDeclaringTheTwin() {
        let lab = Lab(settings: .with { $0.send = .managedApps; $0.filterOpenInToOnlyManagedApps = true })
        let docs = lab.engine.openIn(type: "com.adobe.pdf", from: lab.party("mail"), to: lab.party("docs"))
        #expect(docs.outcome == .allowed)
        let legacy = lab.engine.openIn(type: "com.adobe.pdf", from: lab.party("mail"), to: lab.party("legacy"))
        #expect(legacy.outcome == .filtered && legacy.rule == .openInFilterNeedsTwin)
    }

    @Test func managedItemsTravelAsTheTwinAndAreStrippedBySDKReceivers() {
        let lab = Lab(settings: .managedOnly)
        let d = lab.engine.openIn(type: "com.adobe.pdf", from: lab.party("mail"), to: lab.party("docs"))
        #expect(d.deliveredType == "com.adobe.pdf")
        let e = lab.engine.openIn(type: "com.adobe.pdf", from: lab.party("mail"), to: lab.party("notes"))
        #expect(e.deliveredType == "com.microsoft.intune.mam.com.adobe.pdf")
        // Personal data travels in clear with its own type.
        let p = lab.engine.openIn(type: "com.adobe.pdf", from: lab.party("mail", "personal"), to: lab.party("notes"))
        #expect(p.outcome == .allowed && p.deliveredType == "com.adobe.pdf")
        #expect(ContentType.stripped("com.microsoft.intune.mam.public.jpeg") == "public.jpeg")
        #expect(ContentType.twin(of: "com.microsoft.intune.mam.x") == "com.microsoft.intune.mam.x")
    }

    @Test func aTargetThatDeclaresNeitherIsNotOffered() {
        let lab = Lab(settings: PolicySettings())
        let d = lab.engine.openIn(type: "com.adobe.pdf", from: lab.party("notes"), to: lab.party("chat"))
        #expect(d.outcome == .filtered && d.rule == .openInTypeNotDeclared)
    }
}

@Suite("4.6 save-to and open-from")
struct LocationTests {
    let saveSettings = PolicySettings.with {
        $0.send = .managedApps
        $0.saveAsBlocked = true
        $0.allowedSaveLocations = SaveLocations([.oneDriveForBusiness, .sharePoint, .localDrive])
    }

    func adele(_ lab: Lab) -> Account { lab.engine.tenant.knownAccount(named: Lab.adele)! }

    @Test func saveFollowsTheAllowedLocationsAndTheirAccount() {
        let lab = Lab(settings: saveSettings)
        let owner = lab.party("mail")
        let a = adele(lab)
        #expect(lab.engine.saveTo(.oneDriveForBusiness, account: a, owner: owner).outcome == .allowed)
        // UPN and OID name the same account, in any case.
        let byOID = lab.engine.tenant.knownAccount(named: Lab.adeleOID.lowercased())
        #expect(lab.engine.saveTo(.sharePoint, account: byOID, owner: owner).outcome == .allowed)
        #expect(lab.engine.saveTo(.oneDriveForBusiness, account: nil, owner: owner).rule == .saveWrongAccount)
        #expect(lab.engine.saveTo(.oneDriveForBusiness, account: Account(unknown: "me@outlook.com"), owner: owner).outcome == .blocked)
        #expect(lab.engine.saveTo(.localDrive, account: nil, owner: owner).outcome == .allowed)
        #expect(lab.engine.saveTo(.box, account: nil, owner: owner).rule == .saveLocationNotAllowed)
        #expect(lab.engine.saveTo(.cameraRoll, account: nil, owner: owner).outcome == .blocked)
        #expect(lab.engine.saveTo(.other, account: a, owner: owner).rule == .saveOther)
        let doc = lab.engine.saveTo(.accountDocument, account: a, owner: owner)
        #expect(doc.outcome == .allowed && doc.tag == .chosen)
        let blocked = lab.engine.saveTo(.box, account: nil, owner: owner)
        #expect(blocked.message == "Sharing not allowed: Your organization does not allow this sharing.")
    }

    @Test func saveIsFreeWhenUnmanagedOrNotBlocked() {
        let lab = Lab(settings: saveSettings)
        #expect(lab.engine.saveTo(.other, account: nil, owner: lab.party("mail", "personal")).rule == .saveOwnerUnmanaged)
        let open = Lab(settings: .with { $0.send = .managedApps; $0.saveAsBlocked = false })
        #expect(open.engine.saveTo(.dropbox, account: nil, owner: open.party("mail")).rule == .saveAllowedByPolicy)
        let all = Lab(settings: .with { $0.send = .allApps; $0.saveAsBlocked = true })
        #expect(all.engine.saveTo(.dropbox, account: nil, owner: all.party("mail")).outcome == .allowed)
        var none = PolicySettings.with { $0.send = .none }
        none.applyCouplings()
        let noneLab = Lab(settings: none)
        #expect(noneLab.engine.saveTo(.oneDriveForBusiness, account: adele(noneLab), owner: noneLab.party("mail")).rule == .saveSendNone)
    }

    @Test func openFromFollowsTheIngestionLocations() {
        let lab = Lab(settings: .with {
            $0.receive = .managedApps
            $0.blockDataIngestionIntoOrganizationDocuments = true
            $0.allowedIngestionLocations = OpenLocations([.oneDriveForBusiness, .camera])
        })
        let me = lab.party("mail")
        let a = adele(lab)
        #expect(lab.engine.openFrom(.oneDriveForBusiness, account: a, receiver: me).outcome == .allowed)
        #expect(lab.engine.openFrom(.oneDriveForBusiness, account: nil, receiver: me).rule == .openWrongAccount)
        #expect(lab.engine.openFrom(.camera, account: nil, receiver: me).outcome == .allowed)
        #expect(lab.engine.openFrom(.sharePoint, account: a, receiver: me).rule == .openLocationNotAllowed)
        #expect(lab.engine.openFrom(.photos, account: nil, receiver: me).outcome == .blocked)
        #expect(lab.engine.openFrom(.localStorage, account: nil, receiver: me).rule == .openLocationNotAllowed)
        #expect(lab.engine.openFrom(.other, account: nil, receiver: me).outcome == .blocked)
        #expect(lab.engine.openFrom(.accountDocument, account: a, receiver: me).outcome == .allowed)
        #expect(lab.engine.openFrom(.localStorage, account: nil, receiver: lab.party("mail", "personal")).outcome == .allowed)
    }

    // seed 000 §Supported open locations: local storage is a location the admin may select.
    @Test func localStorageOpensWhereTheAdminAllowsIt() {
        let lab = Lab(settings: .with {
            $0.receive = .managedApps
            $0.blockDataIngestionIntoOrganizationDocuments = true
            $0.allowedIngestionLocations = OpenLocations([.localStorage])
        })
        let d = lab.engine.openFrom(.localStorage, account: nil, receiver: lab.party("mail"))
        #expect(d.outcome == .allowed && d.rule == .openLocationAllowed)
        let other = lab.engine.openFrom(.other, account: adele(lab), receiver: lab.party("mail"))
        #expect(other.outcome == .blocked && other.rule == .openOther && other.source == .seed(0, "Unknown or unlisted locations"))
    }

    @Test func openFromByReceiveLevel() {
        let all = Lab(settings: .with { $0.receive = .allApps })
        #expect(all.engine.openFrom(.other, account: nil, receiver: all.party("mail")).rule == .openReceiveAllApps)
        let none = Lab(settings: .with { $0.receive = .none })
        #expect(none.engine.openFrom(.camera, account: nil, receiver: none.party("mail")).rule == .openReceiveNone)
        let open = Lab(settings: .with { $0.receive = .managedApps; $0.blockDataIngestionIntoOrganizationDocuments = false })
        #expect(open.engine.openFrom(.localStorage, account: nil, receiver: open.party("mail")).rule == .openIngestionAllowed)
    }
}

@Suite("storage location names")
struct StorageLocationNameTests {
    /// Each name is spelled out (no reflection per call): it must stay the case's own name, the
    /// SDK's spelling that scripts, experiments and the audit use, and find its location again.
    @Test func everyLocationIsNamedAsItsCaseAndFoundByThatName() {
        for l in SaveLocation.allCases {
            #expect(l.name == String(describing: l))
            #expect(SaveLocation(name: l.name.uppercased()) == l)
        }
        for l in OpenLocation.allCases {
            #expect(l.name == String(describing: l))
            #expect(OpenLocation(name: l.name.lowercased()) == l)
        }
    }
}
