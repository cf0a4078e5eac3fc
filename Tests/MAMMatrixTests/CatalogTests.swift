import Foundation
import MAMCatalog
import MAMMatrix
import MAMPolicy
import Testing

@Suite("App catalog and stand-ins; parties from the policies")
struct CatalogTests {
    static let builtIn = try! Catalog.loadCatalog(Catalog.builtInCatalogPath(root: Fixture.root))

    @Test("the built-in catalog loads and covers the framework policies' apps, each fact with a source")
    func builtInCoversTheFrameworkApps() throws {
        let ids = Set(Self.builtIn.map { $0.bundleID.lowercased() })
        let l2 = try Catalog.loadPolicyFile(Fixture.root.appendingPathComponent("Policies/frameworks/level-2-enterprise-enhanced-data-protection-iOS.json").path)
        let targeted = l2.first!.policy.targetedApps
        #expect(targeted.count == 11)
        for app in targeted { #expect(ids.contains(app), "\(app)") }
        #expect(Self.builtIn.allSatisfy { !$0.sources.isEmpty })
        // A personal mail app, a messenger and the system browser, without the SDK.
        let unmanaged = Self.builtIn.filter { !$0.sdk }
        #expect(unmanaged.count >= 3)
        #expect(unmanaged.contains { $0.browser })
    }

    @Test("hostile catalog values are refused with file, line and key path")
    func hostileValuesAreRefused() throws {
        let text = """
            {"apps": [
              {"name": "Evil", "bundleId": "../../etc", "sources": ["x"]},
              {"name": "Bad scheme", "bundleId": "com.example.a", "urlSchemes": ["java script:"], "sources": ["x"]},
              {"name": "Twin", "bundleId": "com.example.b", "urlSchemes": ["b-intunemam"], "sources": ["x"]},
              {"name": "Type", "bundleId": "com.example.c", "opens": ["<plist>"], "sources": ["x"]},
              {"name": "a/b", "bundleId": "com.example.d", "sources": ["x"]},
              {"name": "Ok", "bundleId": "com.example.ok", "sources": ["x"]},
              {"name": "Dup", "bundleId": "COM.example.OK", "sources": ["x"]},
              {"name": "NoSDK", "bundleId": "com.example.e", "sdk": false, "multiIdentity": true, "sources": ["x"]},
              {"name": "Extra", "bundleId": "com.example.f", "program": "/bin/sh", "sources": ["x"]}
            ]}
            """
        do {
            _ = try AppCatalogFile.load(Data(text.utf8), file: "evil.json")
            Issue.record("the catalog loaded")
        } catch {
            let lines = error.diagnostics.map(\.description)
            #expect(lines.contains { $0.hasPrefix("evil.json:2:") && $0.contains("$.apps[0].bundleId") && $0.contains("reverse-DNS") })
            #expect(lines.contains { $0.hasPrefix("evil.json:3:") && $0.contains("$.apps[1].urlSchemes[0]") && $0.contains("not a URL scheme") })
            #expect(lines.contains { $0.contains("$.apps[2].urlSchemes[0]") && $0.contains("twin") })
            #expect(lines.contains { $0.contains("$.apps[3].opens[0]") && $0.contains("not a document type") })
            #expect(lines.contains { $0.contains("$.apps[4].name") })
            #expect(lines.contains { $0.contains("$.apps[6].bundleId") && $0.contains("a second entry") })
            #expect(lines.contains { $0.contains("$.apps[7].multiIdentity") })
            #expect(lines.contains { $0.contains("$.apps[8].program") && $0.contains("unknown key") })
        }
    }

    @Test("a stand-in's manifest: its bundle id and schemes, SDK twins added, a sample program chosen by MAMLab")
    func standInManifest() throws {
        let outlook = Self.builtIn.first { $0.bundleID == "com.microsoft.office.outlook" }!
        let made = Catalog.standIns(for: ["com.microsoft.office.outlook", "com.apple.mobilesafari", "com.example.uncatalogued"],
                                    installed: Fixture.apps, catalog: Self.builtIn)
        #expect(made.apps.count == 3)
        let m = made.apps[0].manifest
        #expect(m.bundleID == "com.microsoft.office.outlook")
        #expect(m.integratesSDK && m.isMultiIdentity == outlook.multiIdentity)
        #expect(m.handles(scheme: "ms-outlook") && m.handles(scheme: "ms-outlook-intunemam"))
        #expect(m.executable == "Mail")
        #expect(made.apps[0].standIn == outlook)
        let safari = made.apps[1].manifest
        #expect(!safari.integratesSDK && safari.handles(scheme: "https") && safari.executable == "Notes")
        #expect(made.apps[2].manifest.executable == "Docs")
        #expect(made.notes.contains { $0.contains("com.example.uncatalogued") })
    }

    @Test("the Office stand-ins open the legacy Office types too (.doc, .xls, .ppt), so a share of one is not filtered as an undeclared type")
    func officeStandInsOpenLegacyTypes() throws {
        let office = ["com.microsoft.office.word": "com.microsoft.word.doc", "com.microsoft.office.excel": "com.microsoft.excel.xls",
                      "com.microsoft.office.powerpoint": "com.microsoft.powerpoint.ppt"]
        let made = Catalog.standIns(for: office.keys.sorted(), installed: Fixture.apps, catalog: Self.builtIn)
        #expect(made.apps.count == 3)
        for app in made.apps {
            let types = Set(app.manifest.documentTypes.flatMap(\.contentTypes).map { $0.lowercased() })
            let legacy = office[app.manifest.bundleID]
            #expect(legacy.map(types.contains) == true, "\(app.manifest.bundleID): \(types.sorted())")
            #expect(types.contains("org.openxmlformats.wordprocessingml.document"))
        }
    }

    @Test("an installed app is never stood in for, whatever a catalog says")
    func installedAppsAreNotStoodIn() throws {
        let mail = Fixture.apps.first { $0.name == "Mail" }!.manifest.bundleID
        let impostor = CatalogEntry(name: "Fake Mail", bundleID: mail.uppercased(), sdk: true, multiIdentity: true, sources: ["x"])
        let made = Catalog.standIns(for: [mail, "com.microsoft.msedge"], installed: Fixture.apps, catalog: [impostor] + Self.builtIn)
        #expect(made.apps.isEmpty)
    }

    @Test("policy-apps: a party per targeted app and per policy that reaches a user, signed in as that user, then the unmanaged apps")
    func policyAppsParties() throws {
        var tenant = Fixture.tenant
        let l3 = try Catalog.loadPolicyFile(Fixture.root.appendingPathComponent("Policies/frameworks/level-3-enterprise-high-data-protection-iOS.json").path)
        for i in tenant.policies.indices { tenant.policies[i].targetedApps = l3.first!.policy.targetedApps }
        tenant.reindex()
        let targeted = PolicyApps.targetedApps([tenant])
        #expect(targeted.count == 11)
        var apps: [String: PolicyApps.App] = [:]
        for e in Self.builtIn { apps[e.bundleID.lowercased()] = PolicyApps.App(bundleID: e.bundleID, name: e.name, sdk: e.sdk) }
        let unmanaged = Self.builtIn.filter { !$0.sdk }.map { PolicyApps.App(bundleID: $0.bundleID, name: $0.name, sdk: false) }
        let result = PolicyApps.parties(tenant: tenant, targeted: targeted, apps: apps, unmanaged: unmanaged)
        // Adele (sales) and ben (finance) are under two policies of other settings: a party each.
        #expect(result.parties.count == 2 * 11 + unmanaged.count)
        let outlook = result.parties.filter { $0.app == "com.microsoft.office.outlook" }
        #expect(outlook.map(\.name) == ["Outlook (adele)", "Outlook (ben)"] && outlook.map(\.accounts) == [["adele@contoso.com"], ["ben@contoso.com"]])
        // Under one policy's settings for everyone, the first user stands for the others.
        for i in tenant.policies.indices { tenant.policies[i].settings = tenant.policies[0].settings }
        tenant.reindex()
        #expect(PolicyApps.parties(tenant: tenant, targeted: targeted, apps: apps, unmanaged: unmanaged).parties.count == 11 + unmanaged.count)
        #expect(result.parties.suffix(unmanaged.count).allSatisfy { $0.accounts.isEmpty })
        #expect(Set(result.parties.map(\.name)).count == result.parties.count)
    }

    @Test("an experiment file: parties policy-apps, policies by sample label, an unknown policy at its line and key")
    func experimentFilePolicyAppsAndLabels() throws {
        let text = """
            {"name": "x", "parties": "policy-apps", "channels": ["paste"],
             "policies": ["managed-only",
                          "nowhere"]}
            """
        let resolve: (String) -> Result<String, ExperimentFile.PolicyLookupFailure> = {
            $0 == "managed-only" ? .success("/p/managed-only.json") : .failure(.init("no policy file \"\($0)\""))
        }
        do {
            _ = try ExperimentFile.load(Data(text.utf8), file: "x.json", knownApp: Fixture.knownApp, policy: resolve)
            Issue.record("loaded")
        } catch {
            #expect(error.description.contains("x.json:3:") && error.description.contains("$.policies[1]") && error.description.contains("no policy file \"nowhere\""))
        }
        let good = try ExperimentFile.load(Data(text.replacingOccurrences(of: ",\n              \"nowhere\"", with: "").utf8),
                                           file: "x.json", knownApp: Fixture.knownApp, policy: resolve)
        #expect(good.policyApps && good.parties.isEmpty)
        #expect(good.policies == [.file("/p/managed-only.json")])
    }
}
