import Foundation
import MAMCatalog
import MAMMatrix
import MAMPolicy
import Testing

/// A policy that targets its apps by Graph's `appGroupType` (the vendor's Level 1 export names
/// none, only `allCoreMicrosoftApps`): the group is resolved through the app catalog, the same
/// way for the matrix, `explain`, `check` and mambroker.
@Suite("Policies that target an app group")
struct AppGroupTests {
    static let level1 = Fixture.root.appendingPathComponent("Policies/frameworks/level-1-enterprise-basic-data-protection-iOS.json").path
    static let level2 = Fixture.root.appendingPathComponent("Policies/frameworks/level-2-enterprise-enhanced-data-protection-iOS.json").path

    static func policy(_ json: String) throws -> Policy {
        try #require(try PolicyFile.load(Data(json.utf8), file: "p.json").first).policy
    }

    @Test("the vendor's Level 1 export lists no app and names its group, with where")
    func level1NamesItsGroup() throws {
        let p = try #require(try Catalog.loadPolicyFile(Self.level1).first).policy
        #expect(p.targetedApps.isEmpty)
        #expect(p.appGroup == .allCoreMicrosoftApps)
        #expect(p.appGroupOrigin?.path == "$.appGroupType" && p.appGroupOrigin?.position != nil)
    }

    @Test("the core Microsoft apps are the eleven apps the Level 2 export lists; every group holds SDK apps only")
    func groupsResolveThroughTheCatalog() throws {
        let entries = CatalogTests.builtIn
        let core = Catalog.members(of: .allCoreMicrosoftApps, entries: entries, installed: [])
        let l2 = try #require(try Catalog.loadPolicyFile(Self.level2).first).policy.targetedApps
        #expect(Set(core.map { $0.lowercased() }) == Set(l2))
        #expect(Set(Catalog.members(of: .allMicrosoftApps, entries: entries, installed: [])).isSuperset(of: core))
        let installed = Catalog.loadApps(in: Fixture.root.appendingPathComponent("Apps")).apps
        let all = Set(Catalog.members(of: .allApps, entries: entries, installed: installed).map { $0.lowercased() })
        #expect(all.contains("com.contoso.mail") && all.isSuperset(of: core.map { $0.lowercased() }))
        // Gmail, WhatsApp and Safari have no SDK: no group targets them.
        #expect(!all.contains("com.google.gmail") && !all.contains("com.apple.mobilesafari"))
        #expect(Catalog.members(of: .selectedPublicApps, entries: entries, installed: installed).isEmpty)
    }

    @Test("a tenant's group policy targets the group and the apps it lists, and says how it was resolved")
    func resolvingATenantAddsTheMembersOnce() throws {
        var p = try Self.policy("""
            {"@odata.type": "#microsoft.graph.iosManagedAppProtection", "displayName": "Core",
             "appGroupType": "allCoreMicrosoftApps",
             "apps": [{"mobileAppIdentifier": {"@odata.type": "#microsoft.graph.iosMobileAppIdentifier", "bundleId": "com.contoso.mail"}},
                      {"mobileAppIdentifier": {"@odata.type": "#microsoft.graph.iosMobileAppIdentifier", "bundleId": "com.microsoft.office.outlook"}}]}
            """)
        p.includedGroups = ["sales"]
        var tenant = Tenant(name: "contoso.com", users: [], policies: [p])
        let notes = Catalog.resolveAppGroups(&tenant, entries: CatalogTests.builtIn, installed: [])
        let targets = tenant.policies[0].targetedApps
        #expect(targets.count == 12 && Set(targets).count == 12 && targets.contains("com.contoso.mail"))
        #expect(notes.count == 1 && notes[0].contains("p.json:") && notes[0].contains("$.appGroupType")
            && notes[0].contains("resolved through the app catalog to 12 apps: the 2 it lists and "), "\(notes)")
        // Resolved twice, nothing more is added.
        #expect(Catalog.resolveAppGroups(&tenant, entries: CatalogTests.builtIn, installed: []).count == 1)
        #expect(tenant.policies[0].targetedApps == targets)
    }

    @Test("an unknown group is an error naming the allowed values, at its line")
    func anUnknownGroupIsRefused() throws {
        do {
            _ = try Self.policy(##"{"@odata.type": "#microsoft.graph.iosManagedAppProtection", "displayName": "x", "appGroupType": "allCoreApps"}"##)
            Issue.record("an unknown appGroupType was read")
        } catch {
            let text = "\(error)"
            #expect(text.contains("p.json:1:") && text.contains("$.appGroupType")
                && text.contains("allowed values: selectedPublicApps, allCoreMicrosoftApps, allMicrosoftApps, allApps"), "\(text)")
        }
    }

    @Test("apps listed beside a tenant's $ref are its targets, whatever group the referenced file names")
    func appsBesideTheReferenceReplaceTheGroup() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-group-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let tenant = """
            {"tenant": "contoso.com", "users": [], "groups": ["sales"],
             "policies": [{"$ref": "\(Self.level1)",
                           "apps": [{"mobileAppIdentifier": {"@odata.type": "#microsoft.graph.iosMobileAppIdentifier", "bundleId": "com.contoso.mail"}}],
                           "assignments": [{"target": {"@odata.type": "#microsoft.graph.groupAssignmentTarget", "groupId": "sales"}}]}]}
            """
        let path = folder.appendingPathComponent("tenant.json").path
        try Data(tenant.utf8).write(to: URL(fileURLWithPath: path))
        var loaded = try Catalog.loadTenant(path).tenant
        #expect(loaded.policies[0].appGroup == nil && loaded.policies[0].targetedApps == ["com.contoso.mail"])
        #expect(Catalog.resolveAppGroups(&loaded, entries: CatalogTests.builtIn, installed: []).isEmpty)
        #expect(loaded.policies[0].targetedApps == ["com.contoso.mail"])
    }
}
