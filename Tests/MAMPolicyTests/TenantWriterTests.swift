import Foundation
import MAMCatalog
import MAMPolicy
import Testing

/// The one tenant writer: what it writes loads back into the tenant it was given, so the broker
/// the live matrix starts decides by the tenant the prediction decides by.
@Suite("The tenant writer")
struct TenantWriterTests {
    static let root = ModuleMapTests.root

    static func written(_ tenant: Tenant, _ access: ConditionalAccessSettings? = nil) throws -> (Tenant, ConditionalAccessSettings) {
        let object = try #require(TenantFile.write(tenant, conditionalAccess: access).propertyListObject)
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        let loaded = try TenantFile.load(data, file: "written.json") { ref in throw LoadFailure([Diagnostic(.error, file: ref, path: "", message: "no file")]) }
        #expect(loaded.warnings.isEmpty, "\(loaded.warnings)")
        let back = try ConditionalAccessFile.load(data, file: "written.json", tenant: loaded.tenant).settings
        return (loaded.tenant, back)
    }

    static func expectSame(_ a: Tenant, _ b: Tenant) {
        #expect(a.name == b.name && a.users == b.users && a.groups == b.groups && a.personalAccounts == b.personalAccounts)
        #expect(a.device == b.device)
        #expect(a.policies.count == b.policies.count)
        for (p, q) in zip(a.policies, b.policies) {
            #expect(p.id == q.id && p.displayName == q.displayName, "\(p.displayName)")
            #expect(p.settings == q.settings, "the settings of \(p.displayName) load back as they were")
            #expect(p.targetedApps == q.targetedApps && p.appGroup == q.appGroup, "\(p.displayName)")
            #expect(p.includedGroups == q.includedGroups && p.excludedGroups == q.excludedGroups && p.allUsers == q.allUsers)
        }
        #expect(a.appConfigurations == b.appConfigurations && a.appConfigurationDefault == b.appConfigurationDefault)
        // The same policy for every user and app.
        for app in a.managedApps {
            for (i, u) in a.users.enumerated() {
                let account = Account(userIndex: i, upn: u.upn, oid: u.oid)
                #expect(a.policy(app: app, account: account)?.id == b.policy(app: app, account: account)?.id, "\(app) \(u.upn)")
            }
        }
    }

    static func expectSame(_ a: ConditionalAccessSettings, _ b: ConditionalAccessSettings) {
        #expect(a.tenantId == b.tenantId && a.policies.count == b.policies.count)
        for (p, q) in zip(a.policies, b.policies) {
            #expect(p.id == q.id && p.displayName == q.displayName && p.state == q.state && p.requiresAppProtection == q.requiresAppProtection)
            #expect(p.includesAllUsers == q.includesAllUsers && p.includedUsers == q.includedUsers && p.excludedUsers == q.excludedUsers)
            #expect(p.includedGroups == q.includedGroups && p.excludedGroups == q.excludedGroups)
        }
        #expect(a.forced.mapValues { [$0.silent, $0.interactive] } == b.forced.mapValues { [$0.silent, $0.interactive] })
    }

    @Test(arguments: ["Policies/contoso/tenant.json", "Policies/graph-export/fabrikam-export.json"])
    func aTenantFileLoadsBackAsItWas(path: String) throws {
        let file = Self.root.appendingPathComponent(path).path
        let tenant = try Catalog.loadTenant(file).tenant
        let access = try ConditionalAccessFile.load(try Catalog.read(file), file: path, tenant: tenant).settings
        let (back, backAccess) = try Self.written(tenant, access)
        Self.expectSame(tenant, back)
        Self.expectSame(access, backAccess)
    }

    /// Every sample and framework policy, Graph JSON and debug plist alike: a setting the Graph
    /// form cannot carry would reach the broker at its default.
    @Test func everyPolicyFileKeepsEverySetting() throws {
        let folders = ["Policies/contoso/policies", "Policies/frameworks"]
        var files: [String] = []
        for folder in folders {
            let url = Self.root.appendingPathComponent(folder)
            files += try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
                .filter { $0.hasSuffix(".json") || $0.hasSuffix(".plist") }.map { url.appendingPathComponent($0).path }
        }
        #expect(files.count >= 12)
        let sample = try Catalog.loadTenant(Self.root.appendingPathComponent("Policies/contoso/tenant.json").path).tenant
        for file in files {
            var tenant = sample
            let policy = try #require(try Catalog.loadPolicyFile(file).first?.policy)
            for i in tenant.policies.indices { tenant.policies[i].settings = policy.settings }
            tenant.reindex()
            let (back, _) = try Self.written(tenant)
            Self.expectSame(tenant, back)
        }
    }

    /// What a file can say beyond the samples: forced remediations, allowed accounts, an MDM
    /// user, a policy that excludes a group, an app group with the apps it resolved to.
    @Test func theRarerPartsLoadBackToo() throws {
        var tenant = Tenant(name: "fabrikam", users: [
            TenantUser(upn: "ana@fabrikam.com", oid: "11111111-2222-3333-4444-555555555555", groups: ["sales"],
                       credential: "pbkdf2-sha256:600000:2a3c1c3f8c0b6618b0704bc3db51943a:5f815358746801bd2acb76192f2c95413b0572142ab347eb2f6916373897fa22"),
            TenantUser(upn: "raj@fabrikam.com", groups: ["execs", "sales"]),
        ], groups: ["sales", "execs"])
        tenant.personalAccounts = ["ana@outlook.com"]
        let ana = try #require(tenant.knownAccount(named: "ana@fabrikam.com"))
        tenant.device.mdmEnrolled = true
        tenant.device.mdmUser = ana
        tenant.device.enrollments = ["com.microsoft.office.outlook": ana]
        tenant.device.mdmManagedApps = ["com.microsoft.office.outlook"]
        tenant.device.allowedAccounts = [ana]
        tenant.device.profile = DeviceProfile(os: Version("12.4")!, model: "iPad13,1", jailbroken: true, threatLevel: .medium,
                                              biometrics: true, passcode: false, offlineSince: Date(timeIntervalSince1970: 1_790_000_000))
        var p = Policy(id: "p1", displayName: "Sales, not execs")
        p.targetedApps = ["com.microsoft.office.outlook", "com.microsoft.office.word"]
        p.appGroup = .allCoreMicrosoftApps
        p.includedGroups = ["sales"]
        p.excludedGroups = ["execs"]
        p.settings.send = .none
        p.settings.applyCouplings()  // as every loaded policy has them
        p.settings.launch.os = .init(warning: Version("16"), required: Version("15.1"), wipe: Version("12.4.6"))
        p.settings.launch.sdk.required = Version("19.0")
        p.settings.launch.complianceAction = .wipe
        p.settings.launch.maximumThreatLevel = .low
        p.settings.launch.threatAction = .warn
        p.settings.launch.allowedModels = ["iPhone15", "iPad13,1"]
        p.settings.launch.offlineWipeMinutes = 30 * 1440
        // The debug form's Local Storage bit, which Graph has no value for.
        p.settings.allowedIngestionLocations = OpenLocations([.oneDriveForBusiness, .localStorage])
        tenant.policies = [p]
        tenant.appConfigurations = [AppConfiguration(id: "c1", displayName: "Outlook", settings: [AppConfigSetting(name: "Signature", value: "Sent from ☁")],
                                                     targetedApps: ["com.microsoft.office.outlook"], includedGroups: ["sales"])]
        tenant.reindex()
        var access = ConditionalAccessSettings()
        access.tenantId = "8c3f6a2e-1d4b-4f7a-9e2c-5b6d7e8f9a0b"
        var ca = ConditionalAccessPolicy(displayName: "Require app protection", state: .enabled, requiresAppProtection: true, origin: Origin(file: "", path: ""))
        ca.includedGroups = ["sales"]
        ca.excludedUsers = [1]
        access.policies = [ca]
        access.forced = [0: ForcedRemediation(silent: .interactionRequired, interactive: .compliant, origin: Origin(file: "", path: ""))]
        let (back, backAccess) = try Self.written(tenant, access)
        Self.expectSame(tenant, back)
        Self.expectSame(access, backAccess)
    }

    /// An app group resolved through the catalog can make two policies target one user and
    /// app in a tenant that loaded clean (the vendor's Graph export: a pilot policy for all core
    /// Microsoft apps beside a sales policy naming four of them). The first decides; the file
    /// written for the broker says so by leaving the second policy those apps, for the users
    /// the first decides for, out.
    @Test func aConflictAnAppGroupMadeIsWrittenAsTheFirstPolicyDecidingIt() throws {
        let file = Self.root.appendingPathComponent("Policies/graph-export/fabrikam-export.json").path
        var tenant = try Catalog.loadTenant(file).tenant
        let entries = try Catalog.loadCatalog(Self.root.appendingPathComponent("Policies/catalog/apps.json").path)
        let notes = Catalog.resolveAppGroups(&tenant, entries: entries, installed: [])
        let conflicts = tenant.reindex()
        #expect(!conflicts.isEmpty, "the sample export's groups overlap once resolved")
        #expect(notes.contains { $0.contains("once app groups are resolved; \"Fabrikam sales: enhanced data protection\" decides") }, "\(notes)")
        let (cut, left) = tenant.withEffectiveTargets()
        #expect(left.isEmpty)
        let (back, _) = try Self.written(cut)
        for app in tenant.managedApps {
            for (i, u) in tenant.users.enumerated() {
                let account = Account(userIndex: i, upn: u.upn, oid: u.oid)
                #expect(tenant.policy(app: app, account: account)?.id == back.policy(app: app, account: account)?.id, "\(app) \(u.upn)")
            }
        }
    }

    /// A policy that decides an app for one of its users and loses it to another policy for
    /// another user has no file form: the conflict is returned, not written away.
    @Test func aConflictNoFileCanSayIsReturned() {
        var tenant = Tenant(name: "t", users: [TenantUser(upn: "a@t.com", groups: ["x"]), TenantUser(upn: "b@t.com", groups: ["x", "y"])],
                            groups: ["x", "y"])
        var first = Policy(id: "1", displayName: "y only")
        first.targetedApps = ["com.example.mail"]
        first.includedGroups = ["y"]
        var second = Policy(id: "2", displayName: "x")
        second.targetedApps = ["com.example.mail"]
        second.includedGroups = ["x"]
        tenant.policies = [first, second]
        tenant.reindex()
        let (_, left) = tenant.withEffectiveTargets()
        #expect(left.count == 1 && left.first?.app == "com.example.mail" && left.first?.user == 1)
    }
}
