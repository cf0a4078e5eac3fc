import MAMBroker
import MAMBrokerCore
import MAMPolicy
import MAMService
import MAMWire
import Testing

/// Enrollment through the broker's core (issue 12, first part): the service's answers reach the
/// app as the delegate's callbacks, audited; time comes from the injected clock.
@Suite("Broker core: enrollment through the MAM service")
struct EnrollmentCoreTests {
    func notices(_ got: [CoreLab.Delivered]) -> [String] {
        got.compactMap {
            switch $0.frame.message {
            case let .enrollmentNotice(kind, account, status): return "\(["enrollment", "policy", "unenrollment"][Int(kind)]) \(account) \(status)"
            case let .restartRequest(account): return "restart \(account)"
            case let .wipeRequest(account): return "wipe \(account)"
            default: return nil
            }
        }
    }

    @Test func enrollingAnswersWithTheFirstPolicyAndAsksForARestart() {
        var lab = CoreLab()
        let m = lab.launch("com.contoso.mail")
        let got = lab.send(m, .enroll(account: "adele@contoso.com"), frameID: 9)
        #expect(notices(got) == ["enrollment adele@contoso.com 100"], "the answer carries the request's id")
        #expect(notices(lab.received(m)).contains("restart adele@contoso.com"))
        #expect(lab.audits.last?.channel == "enrollment" && lab.audits.last?.outcome == "newPoliciesReceived")
        #expect(lab.core.party(of: m)?.isManaged == true)
    }

    @Test func aSecondManagedAccountIsRefusedAndAnAppWithoutTheSDKHasNoEnrollment() {
        var lab = CoreLab()
        let m = lab.launch("com.contoso.mail"), n = lab.launch("com.example.notes")
        lab.send(m, .enroll(account: "adele@contoso.com"))
        // Ben is not signed in to this instance: naming him is refused before the service is asked.
        #expect(lab.send(m, .enroll(account: "ben@contoso.com"), frameID: 10).error == .notAllowed)
        // Signed in to a second instance by the user, he is the app's second managed account: 227.
        let second = lab.launch("com.contoso.mail", account: "ben@contoso.com")
        #expect(notices(lab.send(second, .enroll(account: "ben@contoso.com"), frameID: 11)) == ["enrollment ben@contoso.com 227"])
        #expect(lab.send(n, .enroll(account: "adele@contoso.com")).error == .notAllowed)
    }

    @Test func unenrollingWithWipeAsksTheAppToWipeAndLeavesItUnmanaged() {
        var lab = CoreLab()
        let m = lab.launch("com.contoso.mail")
        lab.send(m, .enroll(account: "adele@contoso.com"))
        let got = lab.send(m, .unenroll(account: "adele@contoso.com", wipe: true), frameID: 12)
        #expect(notices(lab.received(m)).suffix(2) == ["wipe adele@contoso.com", "unenrollment adele@contoso.com 104"])
        #expect(!got.isEmpty)
        #expect(lab.core.party(of: m)?.isManaged == false)
    }

    @Test func policyIsCheckedInAfter8VirtualHours() {
        var lab = CoreLab()
        let m = lab.launch("com.contoso.mail")
        lab.send(m, .enroll(account: "adele@contoso.com"))
        let before = lab.received(m).count
        lab.clock.advance(by: .seconds(7 * 3600))
        lab.run(lab.core.handle(.tick))
        #expect(lab.received(m).count == before)
        lab.clock.advance(by: .seconds(3600))
        lab.run(lab.core.handle(.tick))
        #expect(notices(Array(lab.received(m).dropFirst(before))) == ["policy adele@contoso.com 101"])
    }

    // Seed 000, enrollment retries: they stop while another user holds the app, and begin again
    // on the same 24-hour interval once that user is unenrolled.
    @Test func anAccountRefusedWhileAnotherHeldTheAppIsEnrolledAtTheFirstRetryAfterThatOneLeft() {
        var lab = CoreLab()
        let m = lab.launch("com.contoso.mail")
        lab.send(m, .enroll(account: "adele@contoso.com"))
        let second = lab.launch("com.contoso.mail", account: "ben@contoso.com")
        #expect(notices(lab.send(second, .enroll(account: "ben@contoso.com"))) == ["enrollment ben@contoso.com 227"])
        let hour = Duration.seconds(3600)
        func benEnrolled() -> Bool { notices(lab.received(second)).contains("enrollment ben@contoso.com 100") }
        // Adele still holds the app at the first retry: nothing is tried.
        lab.clock.advance(by: hour * 24)
        lab.run(lab.core.handle(.tick))
        #expect(!benEnrolled())
        lab.send(m, .unenroll(account: "adele@contoso.com", wipe: false))
        // Not before the next retry on the 24-hour grid (48 hours after the refusal)...
        lab.clock.advance(by: hour * 12)
        lab.run(lab.core.handle(.tick))
        #expect(!benEnrolled())
        // ...and then he is enrolled and managed.
        lab.clock.advance(by: hour * 12)
        lab.run(lab.core.handle(.tick))
        #expect(benEnrolled())
        #expect(lab.core.party(of: second)?.isManaged == true)
    }

    @Test func aFailedEnrollmentIsRetriedAfter24VirtualHours() {
        var lab = CoreLab()
        // The user signed Carol in; the tenant does not know her yet.
        let m = lab.launch("com.contoso.mail", account: "carol@contoso.com")
        #expect(notices(lab.send(m, .enroll(account: "carol@contoso.com"))) == ["enrollment carol@contoso.com 200"])
        let t = CoreLab.sampleTenant
        let carol = TenantUser(upn: "carol@contoso.com", oid: "c0c0c0c0-0000-4000-8000-000000000001", groups: t.users[0].groups)
        lab.core.reload(Tenant(name: t.name, users: t.users + [carol], groups: t.groups, device: t.device, policies: t.policies))
        lab.clock.advance(by: .seconds(24 * 3600))
        lab.run(lab.core.handle(.tick))
        #expect(notices(lab.received(m)).contains("enrollment carol@contoso.com 100"))
    }
}

@Suite("Broker core: the admin's wipe and sync")
struct AdminCommandTests {
    func wipes(_ got: [CoreLab.Delivered]) -> [String] {
        got.compactMap { if case let .wipeRequest(a) = $0.frame.message { return a } else { return nil } }
    }

    @Test func aWipeReachesARunningAppAtOnceAndDestroysTheAccountsKey() {
        var lab = CoreLab()
        let m = lab.launch("com.contoso.mail")
        lab.send(m, .enroll(account: "adele@contoso.com"))
        var effects = lab.core.handle(.wipe(account: "adele@contoso.com", app: nil))
        #expect(effects.contains(.persist(.destroyKey("5f1c7a2e-3b4d-4e6f-8a9b-0c1d2e3f4a5b"))))
        lab.run(effects)
        #expect(wipes(lab.received(m)) == ["adele@contoso.com"])
        #expect(lab.core.party(of: m)?.isManaged == false)
        effects = lab.core.handle(.sync)
        #expect(!effects.contains { if case .send(m, _, _) = $0 { return true } else { return false } }, "nothing left to check in")
    }

    @Test func aWipeIssuedWhileTheAppIsNotRunningArrivesWhenItStarts() {
        var lab = CoreLab()
        let m = lab.launch("com.contoso.mail")
        lab.send(m, .enroll(account: "adele@contoso.com"))
        lab.run(lab.core.handle(.disconnected(m)))
        lab.run(lab.core.handle(.wipe(account: "adele@contoso.com", app: "com.contoso.mail")))
        let again = lab.launch("com.contoso.mail")
        #expect(wipes(lab.received(again)) == ["adele@contoso.com"])
    }

    @Test func syncTellsRunningAppsAChangedPolicyAtOnce() {
        var lab = CoreLab()
        let m = lab.launch("com.contoso.mail")
        lab.send(m, .enroll(account: "adele@contoso.com"))
        var tenant = CoreLab.sampleTenant
        for i in tenant.policies.indices { tenant.policies[i].settings.clipboard = .blocked }
        lab.core.reload(tenant)
        let before = lab.received(m).count
        lab.run(lab.core.handle(.sync))
        let told = lab.received(m).dropFirst(before).compactMap { d -> UInt16? in
            if case let .enrollmentNotice(1, _, status) = d.frame.message { return status } else { return nil }
        }
        #expect(told == [100])
    }
}

@Suite("Broker core: app configuration")
struct AppConfigurationCoreTests {
    func data(_ got: [CoreLab.Delivered]) -> String? {
        for d in got { if case let .appConfigData(_, json) = d.frame.message { return json } }
        return nil
    }

    @Test func anEnrolledAccountGetsItsFullDataAndNothingBefore() {
        var lab = CoreLab()
        let m = lab.launch("com.contoso.mail")
        #expect(data(lab.send(m, .appConfigRequest(account: "adele@contoso.com"))) == "[]", "empty until enrolled, as the SDK's")
        lab.send(m, .enroll(account: "adele@contoso.com"))
        let json = data(lab.send(m, .appConfigRequest(account: "adele@contoso.com"))) ?? ""
        #expect(json.contains("com.contoso.supportURL") && json.contains("__IsDefault"), "\(json)")
        #expect(lab.send(lab.launch("com.example.notes"), .appConfigRequest(account: "adele@contoso.com")).error == .notAllowed)
    }

    /// The sample tenant with every default app-configuration value changed.
    static func withChangedDefaultConfiguration(sourceLocation: SourceLocation = #_sourceLocation) -> Tenant? {
        var tenant = CoreLab.sampleTenant
        guard var defaults = tenant.appConfigurationDefault else {
            Issue.record("the sample tenant has no default configuration", sourceLocation: sourceLocation)
            return nil
        }
        defaults.settings = defaults.settings.map { var x = $0; x.value = x.value + "-changed"; return x }
        tenant.appConfigurationDefault = defaults
        return tenant
    }

    @Test func aReloadThatChangesTheConfigurationTellsTheRunningApp() {
        var lab = CoreLab()
        let m = lab.launch("com.contoso.mail")
        lab.send(m, .enroll(account: "adele@contoso.com"))
        guard let tenant = Self.withChangedDefaultConfiguration() else { return }
        lab.run(lab.core.reload(tenant))
        #expect(lab.received(m).contains { if case .appConfigChanged("adele@contoso.com") = $0.frame.message { return true } else { return false } })
    }

    /// A second Mail run for Ben beside Mail enrolled as Adele heard that Adele's configuration
    /// changed: a notice about an account reaches only the instances it is signed in to.
    @Test func aConfigurationChangeIsNotToldToAnotherUsersInstance() {
        var lab = CoreLab()
        let m = lab.launch("com.contoso.mail", account: "adele@contoso.com")
        lab.send(m, .enroll(account: "adele@contoso.com"))
        let ben = lab.launch("com.contoso.mail", account: "ben@contoso.com")
        guard let tenant = Self.withChangedDefaultConfiguration() else { return }
        lab.run(lab.core.reload(tenant))
        #expect(lab.received(m).contains { if case .appConfigChanged("adele@contoso.com") = $0.frame.message { return true } else { return false } })
        #expect(!lab.received(ben).contains { if case .appConfigChanged = $0.frame.message { return true } else { return false } },
                "\(lab.received(ben).map(\.frame.message))")
    }
}

@Suite("Broker core: the settings table's launch keys")
struct LaunchKeyTests {
    /// Mail's manifest with these IntuneMAMSettings flags set.
    static func mail(_ flags: [String]) -> [AppManifest] {
        CoreLab.sampleApps.map { m in
            guard m.bundleID == "com.contoso.mail", case var .object(entries)? = m.mamSettings?.value else { return m }
            for f in flags { entries.append((key: f, value: Node(.bool(true)))) }
            var changed = m
            changed.mamSettings = Node(.object(entries))
            return changed
        }
    }

    @Test func autoEnrollOnLaunchEnrollsTheSignedInUserAtHello() {
        var lab = CoreLab(apps: Self.mail(["AutoEnrollOnLaunch"]))
        let m = lab.launch("com.contoso.mail", account: "adele@contoso.com")
        #expect(lab.received(m).contains { if case .enrollmentNotice(0, "adele@contoso.com", 100) = $0.frame.message { return true } else { return false } })
    }

    /// Mail with AutoEnrollOnLaunch taken out of its manifest.
    static func mailWithoutAutoEnroll() -> [AppManifest] {
        CoreLab.sampleApps.map { m in
            guard m.bundleID == "com.contoso.mail", case let .object(entries)? = m.mamSettings?.value else { return m }
            var changed = m
            changed.mamSettings = Node(.object(entries.filter { $0.key != "AutoEnrollOnLaunch" }))
            return changed
        }
    }

    /// Seed 001: AutoEnrollOnLaunch defaults to NO. Without it the app is unmanaged at launch,
    /// even with a targeted user signed in, until it enrolls the account itself; the engine (as
    /// explain and the matrix ask it) says the same.
    @Test func withoutAutoEnrollOnLaunchTheAppIsUnmanagedUntilItEnrolls() throws {
        let apps = Self.mailWithoutAutoEnroll()
        var lab = CoreLab(apps: apps)
        let m = lab.launch("com.contoso.mail", account: "adele@contoso.com")
        #expect(!lab.received(m).contains { if case .enrollmentNotice = $0.frame.message { return true } else { return false } })
        #expect(lab.core.party(of: m)?.isManaged == false)
        let mail = try #require(apps.first { $0.bundleID == "com.contoso.mail" })
        let adele = try #require(CoreLab.sampleTenant.identity(named: "adele@contoso.com").account)
        let engine = PolicyEngine(tenant: CoreLab.sampleTenant, apps: apps)
        #expect(!engine.party(mail, identity: .account(adele)).isManaged && engine.defaultIdentity(for: mail) == .personal)
        #expect(engine.party(mail, identity: .account(adele), enrolled: adele).isManaged)
        // The app enrolls her itself (registerAndEnrollAccount): managed from then on.
        let got = lab.send(m, .enroll(account: "adele@contoso.com"), frameID: 31)
        #expect(got.contains { if case .enrollmentNotice(0, "adele@contoso.com", 100) = $0.frame.message { return true } else { return false } })
        #expect(lab.core.party(of: m)?.isManaged == true)
        // With the flag, the same launch is managed at once (the sample apps').
        var auto = CoreLab()
        let a = auto.launch("com.contoso.mail", account: "adele@contoso.com")
        #expect(auto.core.party(of: a)?.isManaged == true)
    }

    @Test func mamPolicyRequiredBlocksAnAppWithoutAPolicyFromStarting() {
        // With adele signed in, AutoEnrollOnLaunch gives it a policy and it starts.
        var lab = CoreLab(apps: Self.mail(["AutoEnrollOnLaunch", "MAMPolicyRequired"]))
        let m = lab.launch("com.contoso.mail", account: "adele@contoso.com")
        #expect(!lab.closed.contains(m))
        // Seed 000: enrolled before it finished launching, it does not handle a restart after
        // enrolling, so none is asked (an app with AutoEnrollOnLaunch alone is asked).
        #expect(lab.received(m).contains { if case .enrollmentNotice(0, "adele@contoso.com", 100) = $0.frame.message { return true } else { return false } })
        #expect(!lab.received(m).contains { if case .restartRequest = $0.frame.message { return true } else { return false } })
        var auto = CoreLab(apps: Self.mail(["AutoEnrollOnLaunch"]))
        let a = auto.launch("com.contoso.mail", account: "adele@contoso.com")
        #expect(auto.received(a).contains { if case .restartRequest = $0.frame.message { return true } else { return false } })
        // dana is no tenant user: no policy, so the app may not start.
        var plain = CoreLab(apps: Self.mail(["MAMPolicyRequired"]))
        let p = plain.connect(Peer(bundleID: "com.contoso.mail", pid: 1, account: "dana@outlook.com", fromLauncher: true))
        plain.send(p, .hello(minVersion: 1, maxVersion: 1, integratesSDK: true))
        #expect(plain.received(p).contains { if case .error(.notAllowed, _) = $0.frame.message { return true } else { return false } })
        #expect(plain.closed.contains(p))
    }

    @Test func mamPolicyWarnAbsentWarnsAndLetsTheAppRun() {
        var lab = CoreLab(apps: Self.mail(["MAMPolicyWarnAbsent"]))
        let p = lab.connect(Peer(bundleID: "com.contoso.mail", pid: 1, account: "dana@outlook.com", fromLauncher: true))
        lab.send(p, .hello(minVersion: 1, maxVersion: 1, integratesSDK: true))
        #expect(lab.received(p).contains { if case .enrollmentNotice(1, "", 103) = $0.frame.message { return true } else { return false } })
        #expect(!lab.closed.contains(p))
    }
}

@Suite("Broker core: sign-in without an account")
struct LoginAndEnrollTests {
    @Test func withoutAnMDMEnrolledDeviceTheAppIsAskedToSignIn() {
        var lab = CoreLab()
        let m = lab.launch("com.contoso.mail")
        let got = lab.send(m, .loginAndEnroll, frameID: 21)
        #expect(got.contains { if case .enrollmentNotice(0, "", 203) = $0.frame.message { return true } else { return false } })
    }

    @Test func onAnMDMEnrolledDeviceTheMDMUserIsEnrolled() {
        var tenant = CoreLab.sampleTenant
        tenant.device.mdmEnrolled = true
        tenant.device.mdmUser = tenant.identity(named: "adele@contoso.com").account
        var lab = CoreLab(tenant: tenant)
        let m = lab.launch("com.contoso.mail")
        // Mail enrolled the MDM user at launch already (AutoEnrollOnLaunch); signing in names her again.
        #expect(lab.received(m).contains { if case .enrollmentNotice(0, "adele@contoso.com", 100) = $0.frame.message { return true } else { return false } })
        let got = lab.send(m, .loginAndEnroll, frameID: 22)
        #expect(got.contains { if case .enrollmentNotice(0, "adele@contoso.com", 208) = $0.frame.message { return true } else { return false } })
    }
}
