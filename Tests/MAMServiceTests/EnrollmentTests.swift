import Foundation
import MAMCatalog
import MAMPolicy
import MAMService
import Testing

/// Enrollment, check-in and wipe on a virtual clock: 24 hours pass in a microsecond.
@Suite("MAMService: enrollment")
struct EnrollmentTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let tenant = try! Catalog.loadTenant(root.appendingPathComponent("Policies/contoso/tenant.json").path).tenant
    static let apps = Catalog.loadApps(in: root.appendingPathComponent("Apps")).apps.map(\.manifest)
    static let engine = PolicyEngine(tenant: tenant, apps: apps)
    static let mail = engine.apps["com.contoso.mail"]!
    let hour: Duration = .seconds(3600)

    func statuses(_ notices: [EnrollmentNotice]) -> [Int] {
        notices.compactMap {
            switch $0 {
            case let .enrollment(_, _, s), let .policy(_, _, s), let .unenrollment(_, _, s): return s.rawValue
            default: return nil
            }
        }
    }

    @Test func theFirstPolicyEnrollsAndAsksTheAppToRestart() {
        var service = EnrollmentService()
        let got = service.registerAndEnroll(app: Self.mail, accountName: "adele@contoso.com", engine: Self.engine, now: .zero)
        #expect(got == [.enrollment(app: "com.contoso.mail", account: "adele@contoso.com", .newPoliciesReceived),
                        .restart(app: "com.contoso.mail", account: "adele@contoso.com")])
        #expect(service.enrolledAccount(in: "com.contoso.mail") == "adele@contoso.com")
        #expect(statuses(service.registerAndEnroll(app: Self.mail, accountName: "adele@contoso.com", engine: Self.engine, now: .zero)) == [208])
    }

    // Seed 002 §Exit criteria, the login/logout table.
    @Test func seed002LogInManagedFirstThenASecondManagedAccountIsRefused() {
        var service = EnrollmentService()
        _ = service.registerAndEnroll(app: Self.mail, accountName: "adele@contoso.com", engine: Self.engine, now: .zero)
        #expect(statuses(service.registerAndEnroll(app: Self.mail, accountName: "ben@contoso.com", engine: Self.engine, now: .zero)) == [227])
    }

    @Test func seed002LogInUnmanagedFirstThenManaged() {
        var service = EnrollmentService()
        #expect(statuses(service.registerAndEnroll(app: Self.mail, accountName: "dana@outlook.com", engine: Self.engine, now: .zero)) == [200])
        #expect(statuses(service.registerAndEnroll(app: Self.mail, accountName: "adele@contoso.com", engine: Self.engine, now: .zero)) == [100])
    }

    @Test func seed002LogOutManagedWipesOnlyItsDataAndLogOutUnmanagedKeepsTheManagedPolicy() {
        var service = EnrollmentService()
        _ = service.registerAndEnroll(app: Self.mail, accountName: "dana@outlook.com", engine: Self.engine, now: .zero)
        _ = service.registerAndEnroll(app: Self.mail, accountName: "adele@contoso.com", engine: Self.engine, now: .zero)
        #expect(statuses(service.deregister(app: "com.contoso.mail", accountName: "dana@outlook.com", wipe: false)) == [104])
        #expect(service.enrolledAccount(in: "com.contoso.mail") == "adele@contoso.com")
        let out = service.deregister(app: "com.contoso.mail", accountName: "adele@contoso.com", wipe: true)
        #expect(out == [.wipe(app: "com.contoso.mail", account: "adele@contoso.com"),
                        .unenrollment(app: "com.contoso.mail", account: "adele@contoso.com", .unenrollmentSuccess)])
        #expect(service.enrolledAccount(in: "com.contoso.mail") == nil)
    }

    @Test func aFailedEnrollmentIsRetriedEvery24Hours() {
        var service = EnrollmentService()
        #expect(statuses(service.registerAndEnroll(app: Self.mail, accountName: "carol@contoso.com", engine: Self.engine, now: .zero)) == [200])
        // The admin adds carol to the tenant, in adele's group.
        let t = Self.tenant
        let carol = TenantUser(upn: "carol@contoso.com", oid: "c0c0c0c0-0000-4000-8000-000000000001", groups: t.users[0].groups)
        let later = PolicyEngine(tenant: Tenant(name: t.name, users: t.users + [carol], groups: t.groups, device: t.device, policies: t.policies),
                                 apps: Self.apps)
        #expect(service.tick(engine: later, now: hour * 23).isEmpty, "not before 24 hours")
        #expect(statuses(service.tick(engine: later, now: hour * 24)) == [100])
        #expect(service.enrolledAccount(in: "com.contoso.mail") == "carol@contoso.com")
    }

    @Test func policyIsCheckedInEvery8HoursAndAChangeIsTold() {
        var service = EnrollmentService()
        _ = service.registerAndEnroll(app: Self.mail, accountName: "adele@contoso.com", engine: Self.engine, now: .zero)
        #expect(service.tick(engine: Self.engine, now: hour * 7).isEmpty)
        #expect(statuses(service.tick(engine: Self.engine, now: hour * 8)) == [101])
        var tenant = Self.tenant
        for i in tenant.policies.indices { tenant.policies[i].settings.clipboard = .blocked }
        let changed = PolicyEngine(tenant: tenant, apps: Self.apps)
        #expect(statuses(service.tick(engine: changed, now: hour * 12)).isEmpty, "next check-in at 16 hours")
        #expect(statuses(service.sync(engine: changed, now: hour * 12)) == [100], "mamlaunch sync: at once")
    }

    @Test func eachElapsedCheckInIntervalIsACheckInOfItsOwn() {
        var service = EnrollmentService()
        let running: Set<String> = ["com.contoso.mail"]
        _ = service.registerAndEnroll(app: Self.mail, accountName: "adele@contoso.com", engine: Self.engine, now: .zero)
        #expect(service.tick(engine: Self.engine, now: hour, running: running).isEmpty)
        // The clock skips 24 hours while Mail runs: the check-ins due at 8, 16 and 24 hours.
        #expect(statuses(service.tick(engine: Self.engine, now: hour * 25, running: running)) == [101, 101, 101])
        #expect(service.tick(engine: Self.engine, now: hour * 31, running: running).isEmpty, "next at 32 hours")
        #expect(statuses(service.tick(engine: Self.engine, now: hour * 32, running: running)) == [101])
        // Mail stops for two days and starts again: one check-in when it starts, 8 hours on from then.
        #expect(service.tick(engine: Self.engine, now: hour * 40, running: []).isEmpty)
        #expect(statuses(service.tick(engine: Self.engine, now: hour * 80, running: running)) == [101])
        #expect(service.tick(engine: Self.engine, now: hour * 87, running: running).isEmpty)
        #expect(statuses(service.tick(engine: Self.engine, now: hour * 88, running: running)) == [101])
    }

    @Test func anAccountNoPolicyTargetsIsLicensedNotTargetedAndUnmanaged() {
        var service = EnrollmentService()
        let notes = AppManifest(bundleID: "com.example.notes")
        #expect(statuses(service.registerAndEnroll(app: notes, accountName: "adele@contoso.com", engine: Self.engine, now: .zero)) == [225])
        #expect(service.enrolledAccount(in: "com.example.notes") == nil)
    }

    // seed 000 FAQ on retries: not targeted (225) is a failed enrollment; the 8-hour check-ins
    // are for enrolled apps, so a policy added meanwhile arrives with the 24-hour retry.
    @Test func aNotTargetedEnrollmentIsRetriedAfter24HoursAndNotCheckedIn() {
        var service = EnrollmentService()
        let chat = Self.engine.apps["com.example.chat"]!
        #expect(statuses(service.registerAndEnroll(app: chat, accountName: "adele@contoso.com", engine: Self.engine, now: .zero)) == [225])
        var policies = Self.tenant.policies
        policies[0].targetedApps.append("com.example.chat")
        let t = Self.tenant
        let later = PolicyEngine(tenant: Tenant(name: t.name, users: t.users, groups: t.groups, device: t.device, policies: policies), apps: Self.apps)
        for h in [8, 16, 23] { #expect(service.tick(engine: later, now: hour * h).isEmpty, "nothing at \(h) h") }
        #expect(service.sync(engine: later, now: hour * 23).isEmpty, "a sync is a check-in: not for a failed enrollment")
        #expect(service.tick(engine: later, now: hour * 24) == [.enrollment(app: "com.example.chat", account: "adele@contoso.com", .newPoliciesReceived),
                                                                 .restart(app: "com.example.chat", account: "adele@contoso.com")])
    }

    @Test func anAdminWipeIsDeliveredAtTheNextCheckIn() {
        var service = EnrollmentService()
        _ = service.registerAndEnroll(app: Self.mail, accountName: "adele@contoso.com", engine: Self.engine, now: .zero)
        service.issueWipe(account: "adele@contoso.com", app: nil)
        let out = service.sync(engine: Self.engine, now: hour)
        #expect(out == [.wipe(app: "com.contoso.mail", account: "adele@contoso.com"),
                        .unenrollment(app: "com.contoso.mail", account: "adele@contoso.com", .wipeReceived)])
        #expect(service.enrolledAccount(in: "com.contoso.mail") == nil && service.pendingWipes.isEmpty)
    }

    @Test func everyStatusCodeHasItsRawValueAndAMeaning() {
        #expect(EnrollmentStatus.allCases.count == 33)
        #expect(EnrollmentStatus.singleManagedAccountMode.rawValue == 227 && EnrollmentStatus.unsupportedAPI.rawValue == 223)
        #expect(EnrollmentStatus.allCases.allSatisfy { !$0.meaning.isEmpty })
    }
}
