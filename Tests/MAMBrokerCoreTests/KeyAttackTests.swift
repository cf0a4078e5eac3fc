import Foundation
import MAMBroker
import MAMBrokerCore
import MAMCatalog
import MAMPolicy
import MAMWire
import Testing

/// Hostile apps after the managed account's key (`keyRequest`): the key may reach only an app
/// that is managed under that account now, never one whose enrollment was wiped or removed, one
/// that came in through the public socket, or one that has not said hello.
@Suite("Broker core: attacks on the account key")
struct KeyAttackTests {
    static let adele = "adele@contoso.com"

    func gotKey(_ got: [CoreLab.Delivered]) -> Bool {
        got.contains { if case .accountKey = $0.frame.message { return true } else { return false } }
    }

    @Test func aWipedMultiIdentityAppGetsNoKeyForTheWipedAccount() {
        var lab = CoreLab()
        let mail = lab.launch("com.contoso.mail")
        lab.send(mail, .enroll(account: Self.adele))
        #expect(gotKey(lab.send(mail, .keyRequest(account: Self.adele))), "enrolled: the key")
        lab.run(lab.core.handle(.wipe(account: Self.adele, app: nil)))
        // The tenant still targets Mail for Adele, but this app was wiped: the key is gone for it.
        let got = lab.send(mail, .keyRequest(account: Self.adele))
        #expect(!gotKey(got) && got.error == .notAllowed, "\(got.map(\.frame))")
        #expect(lab.audits.last?.channel == "key" && lab.audits.last?.outcome == "blocked")
    }

    @Test func aWipedAppCannotTakeTheWipedAccountBackAsItsIdentity() {
        var lab = CoreLab()
        let mail = lab.launch("com.contoso.mail")
        lab.send(mail, .enroll(account: Self.adele))
        lab.run(lab.core.handle(.wipe(account: Self.adele, app: nil)))
        let got = lab.send(mail, .setIdentity(account: Self.adele))
        #expect(lab.core.party(of: mail)?.isManaged == false, "\(got.map(\.frame))")
        #expect(!gotKey(lab.send(mail, .keyRequest(account: Self.adele))))
    }

    @Test func anAccountOutsideTheDevicesAllowedAccountsHasNoKey() {
        var tenant = CoreLab.sampleTenant
        tenant.device.allowedAccounts = [tenant.identity(named: "ben@contoso.com").account!]
        var lab = CoreLab(tenant: tenant)
        // Mail asks for Adele, refused with 211; Docs is started for her by the launcher.
        let mail = lab.launch("com.contoso.mail")
        lab.send(mail, .enroll(account: Self.adele))
        let docs = lab.launch("com.contoso.docs", account: Self.adele)
        for app in [mail, docs] {
            let got = lab.send(app, .keyRequest(account: Self.adele))
            #expect(!gotKey(got), "\(got.map(\.frame))")
        }
    }

    @Test func anAppThatUnenrolledGetsNoKey() {
        for wipe in [false, true] {
            var lab = CoreLab()
            let mail = lab.launch("com.contoso.mail")
            lab.send(mail, .enroll(account: Self.adele))
            lab.send(mail, .unenroll(account: Self.adele, wipe: wipe))
            let got = lab.send(mail, .keyRequest(account: Self.adele))
            #expect(!gotKey(got) && got.error == .notAllowed, "wipe \(wipe): \(got.map(\.frame))")
        }
    }

    @Test func anAccountThatIsLicensedButNotTargetedHasNoKey() {
        let t = CoreLab.sampleTenant
        let carol = TenantUser(upn: "carol@contoso.com", oid: "c0c0c0c0-0000-4000-8000-000000000001", groups: [])
        var lab = CoreLab(tenant: Tenant(name: t.name, users: t.users + [carol], groups: t.groups, device: t.device, policies: t.policies))
        let mail = lab.launch("com.contoso.mail")
        lab.send(mail, .enroll(account: "carol@contoso.com"))
        #expect(!gotKey(lab.send(mail, .keyRequest(account: "carol@contoso.com"))))
        let docs = lab.launch("com.contoso.docs", account: "carol@contoso.com")
        #expect(!gotKey(lab.send(docs, .keyRequest(account: "carol@contoso.com"))))
        #expect(lab.audits.last?.channel == "key" && lab.audits.last?.outcome == "blocked")
    }

    @Test func aProcessOnThePublicSocketClaimingAManagedBundleGetsNoKey() {
        var lab = CoreLab()
        let fake = lab.connect(Peer(bundleID: "com.contoso.docs", pid: 4242, account: Self.adele, fromLauncher: false))
        lab.send(fake, .hello(minVersion: 1, maxVersion: 1, integratesSDK: true))
        #expect(lab.send(fake, .keyRequest(account: Self.adele)).error == .notAllowed)
        #expect(lab.send(fake, .policyRequest).error == .notAllowed)
    }

    @Test func aKeyRequestBeforeHelloIsRefused() {
        var lab = CoreLab()
        let early = lab.connect(Peer(bundleID: "com.contoso.docs", pid: 4243, account: Self.adele, fromLauncher: true))
        let got = lab.send(early, .keyRequest(account: Self.adele))
        #expect(!gotKey(got) && got.error != nil, "\(got.map(\.frame))")
    }

    @Test func theKeyIsNotHandedOutUnderAnotherSpellingOfAnotherAccount() {
        var lab = CoreLab()
        let docs = lab.launch("com.contoso.docs", account: Self.adele)
        // Ben's object id, his UPN in capitals, padded: all name Ben, who Docs is not enrolled with.
        for name in ["9A8B7C6D-5E4F-4A3B-8C2D-1E0F9A8B7C6D", "BEN@CONTOSO.COM", " ben@contoso.com", "dana@outlook.com", "personal", ""] {
            #expect(!gotKey(lab.send(docs, .keyRequest(account: name))), "\(name)")
        }
        // Adele by her object id is Adele.
        #expect(gotKey(lab.send(docs, .keyRequest(account: "5F1C7A2E-3B4D-4E6F-8A9B-0C1D2E3F4A5B"))))
    }
}

/// An app whose bundle id is an installed app's in another spelling is an unknown app (the
/// broker matches installed apps exactly): what the MAM service says to the installed app must
/// not make it managed.
@Suite("Broker core: an installed app's bundle id in another spelling")
struct SpellingAttackTests {
    @Test func anotherSpellingGetsNeitherTheEnrollmentNorItsData() {
        var lab = CoreLab()
        let impostor = lab.launch("COM.CONTOSO.MAIL")
        let mail = lab.launch("com.contoso.mail")
        lab.send(mail, .enroll(account: "adele@contoso.com"))
        #expect(lab.core.party(of: mail)?.isManaged == true)
        #expect(lab.core.party(of: impostor)?.isManaged == false, "\(String(describing: lab.core.party(of: impostor)))")
        #expect(lab.send(impostor, .keyRequest(account: "adele@contoso.com")).error == .notAllowed)
        // Nor does a wipe or a restart meant for Mail reach it.
        let told = lab.received(impostor).filter {
            switch $0.frame.message {
            case .enrollmentNotice, .restartRequest, .wipeRequest: return true
            default: return false
            }
        }
        #expect(told.isEmpty, "\(told.map(\.frame))")
    }

    @Test func anotherSpellingDoesNotSwallowAWipeMeantForTheInstalledApp() {
        var lab = CoreLab()
        let mail = lab.launch("com.contoso.mail")
        lab.send(mail, .enroll(account: "adele@contoso.com"))
        lab.run(lab.core.handle(.disconnected(mail)))
        // The admin wipes Adele from Mail while Mail is not running; an impostor runs meanwhile.
        let impostor = lab.launch("COM.CONTOSO.MAIL")
        lab.run(lab.core.handle(.wipe(account: "adele@contoso.com", app: "com.contoso.mail")))
        #expect(!lab.received(impostor).contains { if case .wipeRequest = $0.frame.message { return true } else { return false } })
        // Mail, when it starts, still gets its wipe.
        let again = lab.launch("com.contoso.mail")
        #expect(lab.received(again).contains { $0.frame.message == .wipeRequest(account: "adele@contoso.com") },
                "\(lab.received(again).map(\.frame))")
    }

    @Test func anotherSpellingDoesNotTakeAShareMeantForTheInstalledApp() {
        var lab = CoreLab()
        let impostor = lab.launch("COM.CONTOSO.DOCS")
        let mail = lab.launch("com.contoso.mail", account: "adele@contoso.com"), docs = lab.launch("com.contoso.docs", account: "adele@contoso.com")
        let answer = lab.send(mail, .share(target: "com.contoso.docs", contentType: "com.adobe.pdf", name: "q3.pdf"), lab.document("Q3"))
        #expect(answer.outcome == "allowed")
        #expect(!lab.received(impostor).contains { if case .document = $0.frame.message { return true } else { return false } })
        #expect(lab.received(docs).contains { if case .document = $0.frame.message { return true } else { return false } })
        #expect(lab.heldDescriptors == 0)
    }

    @Test func anotherSpellingDoesNotTakeTheURLsWaitingForTheInstalledApp() {
        var lab = CoreLab()
        let docs = lab.launch("com.contoso.docs", account: "adele@contoso.com")
        #expect(lab.send(docs, .openURL(url: "contosomail://compose?to=ben")).isEmpty, "waits for Mail to start")
        #expect(lab.started == ["com.contoso.mail"])
        let impostor = lab.launch("COM.CONTOSO.MAIL")
        #expect(!lab.received(impostor).contains { if case .urlDelivery = $0.frame.message { return true } else { return false } })
        let mail = lab.launch("com.contoso.mail", account: "adele@contoso.com")
        #expect(lab.received(mail).contains { if case .urlDelivery = $0.frame.message { return true } else { return false } })
    }
}

/// Issue 19 in the core: an account is signed in to an instance by the user (the launcher's
/// `--user`, or the tenant's default enrollment the user has not signed out), never by an app
/// naming it; and one account is one account whatever its spelling.
@Suite("Broker core: accounts are signed in, not claimed")
struct SignInCoreTests {
    static let ben = "ben@contoso.com", benOID = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
    static let adele = "adele@contoso.com", adeleOID = "5F1C7A2E-3B4D-4E6F-8A9B-0C1D2E3F4A5B"

    func gotKey(_ got: [CoreLab.Delivered]) -> Bool {
        got.contains { if case .accountKey = $0.frame.message { return true } else { return false } }
    }

    @Test func anAccountTheAppOnlyNamesIsNeitherEnrolledNorGivenAKeyTokenOrConfiguration() {
        var lab = CoreLab(conditionalAccess: CoreLab.sampleAccess)
        let dialer = lab.launch("com.contoso.dialer")
        for name in [Self.ben, Self.benOID, "BEN@contoso.com"] {
            #expect(lab.send(dialer, .enroll(account: name)).error == .notAllowed, "\(name)")
            #expect(lab.audits.last?.outcome == "notSignedIn" && lab.audits.last?.channel == "enrollment")
            #expect(!gotKey(lab.send(dialer, .keyRequest(account: name))))
            #expect(lab.send(dialer, .remediateCompliance(account: name, silent: true)).error == .notAllowed)
            #expect(lab.send(dialer, .acquireToken(account: name)).error == .notAllowed)
            #expect(lab.send(dialer, .appConfigRequest(account: name)).error == .notAllowed)
        }
        let notes = lab.launch("com.example.notes", sdk: false)
        #expect(lab.send(notes, .acquireToken(account: Self.benOID)).error == .notAllowed)
        #expect(lab.core.party(of: dialer)?.enrolled?.upn != Self.ben)
    }

    @Test func anUnenrollUnderAnotherSpellingTouchesOnlyTheAppsOwnRow() {
        var lab = CoreLab()
        let mail = lab.launch("com.contoso.mail", account: Self.adele)
        lab.send(mail, .enroll(account: Self.adele))
        let dialer = lab.launch("com.contoso.dialer", account: Self.adele)
        lab.send(dialer, .enroll(account: Self.adeleOID))
        lab.send(dialer, .unenroll(account: Self.adeleOID, wipe: true))
        // Her key stays: Mail still has her.
        #expect(!lab.persisted.contains { if case .destroyKey = $0 { return true } else { return false } }, "\(lab.persisted)")
        #expect(gotKey(lab.send(mail, .keyRequest(account: Self.adele))))
        #expect(lab.core.party(of: mail)?.isManaged == true)
    }

    @Test func aPersonalUserDoesNotHaveTheTenantsDefaultAccountSignedIn() {
        var lab = CoreLab()
        let mail = lab.launch("com.contoso.mail", account: "dana@outlook.com")
        #expect(!gotKey(lab.send(mail, .keyRequest(account: Self.adele))))
        lab.send(mail, .setIdentity(account: Self.adele))
        #expect(lab.core.party(of: mail)?.identity.account?.upn != Self.adele)
    }

    @Test func aSecondInstanceRunForAnotherUserDoesNotGetItsKeyWhileTheAppIsEnrolledWithTheFirst() {
        var lab = CoreLab()
        let first = lab.launch("com.contoso.docs", account: Self.adele)
        lab.send(first, .enroll(account: Self.adele))
        let second = lab.launch("com.contoso.docs", account: Self.ben)
        #expect(!gotKey(lab.send(second, .keyRequest(account: Self.ben))))
        #expect(gotKey(lab.send(first, .keyRequest(account: Self.adele))))
    }

    @Test func aWipedAccountStaysSignedOutOfTheAppUntilTheUserSignsItIn() {
        var lab = CoreLab()
        let mail = lab.launch("com.contoso.mail", account: Self.adele)
        lab.send(mail, .enroll(account: Self.adele))
        lab.run(lab.core.handle(.wipe(account: Self.adeleOID, app: nil)))
        #expect(lab.send(mail, .enroll(account: Self.adele)).error == .notAllowed)
        // A relaunch with nobody signed in does not bring her back; one with --user does.
        let alone = lab.launch("com.contoso.mail")
        #expect(lab.send(alone, .enroll(account: Self.adele)).error == .notAllowed)
        #expect(!gotKey(lab.send(alone, .keyRequest(account: Self.adele))))
        let signedIn = lab.launch("com.contoso.mail", account: Self.adele)
        #expect(lab.send(signedIn, .enroll(account: Self.adele)).error == nil)
        #expect(gotKey(lab.send(signedIn, .keyRequest(account: Self.adele))))
    }
}

/// The emulated identity provider: a sign-in from a launcher other than the app's is proven
/// with the account's password (the sample tenant's credentials, docs/POLICIES.md).
@Suite("Broker core: an interactive sign-in is proven with a credential")
struct CredentialSignInTests {
    static let ben = "ben@contoso.com"

    @Test func aSignInFromAnotherLauncherNeedsTheAccountsPassword() {
        var lab = CoreLab()
        let mail = lab.launch("com.contoso.mail")
        for secret in [nil, "", "contoso-adele", "Contoso-Ben", "contoso-ben "] as [String?] {
            lab.run(lab.core.handle(.signIn(mail, account: Self.ben, secret: secret, sameLauncher: false)))
            #expect(lab.send(mail, .enroll(account: Self.ben)).error == .notAllowed, "\(String(describing: secret))")
            // Past the wait wrong passwords earn (SignInThrottle), so each is checked.
            lab.clock.advance(by: .seconds(600))
        }
        #expect(lab.audits.contains { $0.channel == "signIn" && $0.outcome == "badCredential" })
        func told() -> [String] { lab.received(mail).compactMap { if case let .signedIn(a) = $0.frame.message { return a } else { return nil } } }
        #expect(told().isEmpty, "a refused sign-in is not told")
        lab.run(lab.core.handle(.signIn(mail, account: "9A8B7C6D-5E4F-4A3B-8C2D-1E0F9A8B7C6D", secret: "contoso-ben", sameLauncher: false)))
        #expect(lab.audits.last?.channel == "signIn" && lab.audits.last?.outcome == "signedIn")
        // The app is told, under the account's canonical name (not the object id the sign-in used).
        #expect(told() == [Self.ben])
        #expect(lab.send(mail, .enroll(account: Self.ben)).error == nil)
    }

    @Test func theLauncherThatStartedTheAppSignsInWithoutAPasswordButAWrongOneIsRefused() {
        var lab = CoreLab()
        let mail = lab.launch("com.contoso.mail")
        lab.run(lab.core.handle(.signIn(mail, account: Self.ben, secret: "guess", sameLauncher: true)))
        #expect(lab.send(mail, .enroll(account: Self.ben)).error == .notAllowed)
        lab.run(lab.core.handle(.signIn(mail, account: Self.ben, secret: nil, sameLauncher: true)))
        #expect(lab.send(mail, .enroll(account: Self.ben)).error == nil)
    }

    @Test func aCredentialMatchesOnlyItsPassword() {
        let salt: [UInt8] = Array(0..<16)
        let stored = Credential.make(password: "correct horse", salt: salt)
        #expect(Credential.matches(stored, password: "correct horse"))
        for wrong in ["correct hors", "correct horse ", "", "Correct horse"] { #expect(!Credential.matches(stored, password: wrong)) }
        #expect(!Credential.matches("sha256:00:zz", password: "x") && !Credential.matches("md5:00:" + String(repeating: "0", count: 64), password: "x"))
        // PBKDF2-HMAC-SHA256 (RFC 8018) with its rounds stored beside it; the old one-SHA-256 form is no credential.
        #expect(stored.hasPrefix("pbkdf2-sha256:\(Credential.defaultRounds):000102030405060708090a0b0c0d0e0f:"))
        let old = "sha256:e4a107be1889b9b1a2621b91b58a5760:f278283be816566f65cf878555280af2b765ddc8bc963ae51a4e5e0dd723b514"
        #expect(!Credential.matches(old, password: "contoso-adele"))
    }

    /// The password is checked by the shell's worker (`checkCredential`), not in the core's
    /// turn: while it runs, other apps are answered and nobody is signed in; the answer signs
    /// in only the app that is still there.
    @Test func thePasswordIsCheckedOffTheLoopAndOnlyItsAppIsSignedIn() {
        var lab = CoreLab()
        let mail = lab.launch("com.contoso.mail"), docs = lab.launch("com.contoso.docs")
        lab.deferJobs = true
        lab.run(lab.core.handle(.signIn(mail, account: Self.ben, secret: "contoso-ben", sameLauncher: false)))
        #expect(lab.pendingJobs.count == 1)
        #expect(lab.send(docs, .policyRequest).isEmpty == false, "another app is answered meanwhile")
        #expect(lab.send(mail, .enroll(account: Self.ben)).error == .notAllowed, "not signed in before the check ends")
        lab.flushJobs()
        #expect(lab.send(mail, .enroll(account: Self.ben)).error == nil)
        // An app that quits while its sign-in is checked: the answer signs nobody in.
        let dialer = lab.launch("com.contoso.dialer")
        lab.run(lab.core.handle(.signIn(dialer, account: Self.ben, secret: "contoso-ben", sameLauncher: false)))
        lab.send(dialer, .bye)
        let audited = lab.audits.count
        lab.flushJobs()
        #expect(!lab.audits.dropFirst(audited).contains { $0.channel == "signIn" && $0.outcome == "signedIn" })
    }
}

extension SignInCoreTests {
    @Test func aWipedMDMUserIsNotEnrolledAgainByTheAppItself() {
        var tenant = CoreLab.sampleTenant
        tenant.device.mdmEnrolled = true
        tenant.device.mdmUser = tenant.identity(named: Self.adele).account
        var lab = CoreLab(tenant: tenant)
        let mail = lab.launch("com.contoso.mail")
        lab.send(mail, .loginAndEnroll)
        lab.run(lab.core.handle(.wipe(account: Self.adele, app: nil)))
        let again = lab.launch("com.contoso.mail")
        let got = lab.send(again, .loginAndEnroll)
        let statuses = got.compactMap { d -> UInt16? in if case let .enrollmentNotice(0, _, s) = d.frame.message { return s } else { return nil } }
        #expect(statuses == [203], "\(got.map(\.frame))")
        #expect(!gotKey(lab.send(again, .keyRequest(account: Self.adele))))
    }
}

extension SignInCoreTests {
    @Test func theSnapshotListsEachSignedInAccountOnce() throws {
        var lab = CoreLab()
        let mail = lab.launch("com.contoso.mail", account: Self.adele)
        lab.send(mail, .enroll(account: Self.adele))
        lab.send(mail, .enroll(account: Self.adeleOID))
        guard case let .policySnapshot(json)? = lab.send(mail, .policyRequest).first?.frame.message else {
            Issue.record("no snapshot")
            return
        }
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        let signedIn = object?["signedIn"] as? [[String: Any]] ?? []
        #expect(signedIn.count == 1 && signedIn.first?["upn"] as? String == Self.adele, "\(signedIn)")
    }
}
