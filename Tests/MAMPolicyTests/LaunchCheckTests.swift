import Foundation
import MAMCatalog
@testable import MAMPolicy
import Testing

/// Conditional launch (docs/SEMANTICS.md §9) under the vendor's three framework exports: what
/// opens, what is blocked and what is wiped, on a device described in the tenant file, at times
/// given by the test (the engine reads no clock).
@Suite("Conditional launch under the vendor's levels")
struct LaunchCheckTests {
    static let root = ModuleMapTests.root
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let outlook = "com.microsoft.office.outlook"

    /// The sample tenant with every policy's settings those of framework level `level`.
    static func engine(level: Int) throws -> (PolicyEngine, Account) {
        let folder = root.appendingPathComponent("Policies/frameworks")
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.path).first { $0.hasPrefix("level-\(level)-") })
        let policy = try #require(try Catalog.loadPolicyFile(folder.appendingPathComponent(file).path).first?.policy)
        var tenant = try Catalog.loadTenant(root.appendingPathComponent("Policies/contoso/tenant.json").path).tenant
        for i in tenant.policies.indices {
            tenant.policies[i].settings = policy.settings
            tenant.policies[i].targetedApps.append(outlook)
        }
        tenant.reindex()
        let adele = try #require(tenant.knownAccount(named: "adele@contoso.com"))
        return (PolicyEngine(tenant: tenant), adele)
    }

    static func device(_ change: (inout DeviceProfile) -> Void = { _ in }) -> DeviceProfile {
        var d = DeviceProfile.standard
        change(&d)
        return d
    }

    static func offline(minutes: Int) -> DeviceProfile { device { $0.offlineSince = now.addingTimeInterval(-Double(minutes) * 60) } }

    /// (level, device, the action, the deciding rule): the lifecycle the levels differ on.
    static let table: [(Int, String, DeviceProfile, LaunchAction?, Rule)] = [
        (1, "a current iPhone, online", device(), nil, .launchAllowed),
        (3, "a current iPhone, online", device(), nil, .launchAllowed),
        (2, "offline 12 h", offline(minutes: 720), nil, .launchAllowed),
        (3, "offline 12 h 1 min", offline(minutes: 721), .block, .launchOfflineAccess),
        // Every export sets periodOfflineBeforeAccessCheck to PT12H: Level 2 blocks as Level 3 does.
        (2, "offline 12 h 1 min", offline(minutes: 721), .block, .launchOfflineAccess),
        (1, "offline 90 days", offline(minutes: 90 * 1440), .block, .launchOfflineAccess),
        (3, "offline 90 days and a minute", offline(minutes: 90 * 1440 + 1), .wipe, .launchOfflineWipe),
        (1, "offline 90 days and a minute", offline(minutes: 90 * 1440 + 1), .wipe, .launchOfflineWipe),
        (3, "jailbroken", device { $0.jailbroken = true }, .wipe, .launchJailbroken),
        (2, "jailbroken", device { $0.jailbroken = true }, .block, .launchJailbroken),
        (1, "jailbroken", device { $0.jailbroken = true }, .block, .launchJailbroken),
        (3, "iOS 12.4.4", device { $0.os = Version("12.4.4")! }, .block, .launchOSVersion),
        (2, "iOS 12.4.4", device { $0.os = Version("12.4.4")! }, .block, .launchOSVersion),
        (1, "iOS 12.4.4", device { $0.os = Version("12.4.4")! }, nil, .launchAllowed),
        (3, "iOS 12.4.6", device { $0.os = Version("12.4.6")! }, nil, .launchAllowed),
        (3, "threat level low", device { $0.threatLevel = .low }, .block, .launchThreatLevel),
        (2, "threat level high", device { $0.threatLevel = .high }, nil, .launchAllowed),
        // Jailbroken and old: Level 3 wipes (the stronger action), naming both.
        (3, "jailbroken on iOS 11", device { $0.jailbroken = true; $0.os = Version("11")! }, .wipe, .launchJailbroken),
    ]

    @Test("each level opens, blocks or wipes the device as its export says", arguments: table.indices)
    func levelsDecideTheDevice(_ i: Int) throws {
        let (level, what, device, action, rule) = Self.table[i]
        let (engine, adele) = try Self.engine(level: level)
        let v = engine.launchCheck(app: Self.outlook, account: adele, device: device, now: Self.now)
        #expect(v.action == action && v.rule == rule, "Level \(level), \(what): \(v.action?.rawValue ?? "opens") by \(v.rule)")
        #expect(v.opens == (action == nil || action == .warn))
        if action != nil { #expect(v.findings.contains { $0.rule == rule && $0.action == action }) }
    }

    @Test("every failing check is listed; an account no policy targets is not checked")
    func findingsAndUnmanaged() throws {
        let (engine, adele) = try Self.engine(level: 3)
        let worst = Self.device { $0.jailbroken = true; $0.os = Version("11")!; $0.threatLevel = .high
            $0.offlineSince = Self.now.addingTimeInterval(-13 * 3600) }
        let v = engine.launchCheck(app: Self.outlook, account: adele, device: worst, now: Self.now)
        #expect(v.findings.map(\.rule) == [.launchOSVersion, .launchJailbroken, .launchThreatLevel, .launchOfflineAccess])
        #expect(engine.launchCheck(app: Self.outlook, account: nil, device: worst, now: Self.now).rule == .launchUnmanaged)
        #expect(engine.launchCheck(app: "com.example.unknown", account: adele, device: worst, now: Self.now).rule == .launchUnmanaged)
    }

    @Test("minimums: the strongest one the version is below decides; versions compare as numbers")
    func versionMinimums() throws {
        var s = PolicySettings()
        s.launch.os = .init(warning: Version("16"), required: Version("15.1"), wipe: Version("12.4.6"))
        s.launch.allowedModels = ["iPhone15"]
        s.launch.modelAction = .warn
        var tenant = Tenant(name: "t", users: [TenantUser(upn: "a@t.com")])
        var p = Policy(id: "p", displayName: "p", settings: s)
        p.targetedApps = ["com.t.app"]
        p.allUsers = true
        tenant.policies = [p]
        tenant.reindex()
        let engine = PolicyEngine(tenant: tenant)
        let a = try #require(tenant.knownAccount(named: "a@t.com"))
        func action(_ os: String, model: String = "iPhone15,2") -> LaunchAction? {
            engine.launchCheck(app: "com.t.app", account: a, device: DeviceProfile(os: Version(os)!, model: model), now: Self.now).action
        }
        #expect(action("17.0") == nil)
        #expect(action("15.10") == .warn, "15.10 is newer than 15.1 and older than 16")
        #expect(action("15.1.0") == .warn)
        #expect(action("15.0.9") == .block)
        #expect(action("12.4.5") == .wipe)
        #expect(action("17.0", model: "iPhone14,5") == .warn)
        #expect(Version("12.4") == Version("12.4.0") && Version("12.10")! > Version("12.9")!)
        for bad in ["", "12.", ".4", "12.x", "-1", "1.2.3.4.5.6.7.8.9", "1234567890"] { #expect(Version(bad) == nil, "\(bad)") }
    }

    @Test("the Graph properties read, refuse a bad value at its key path, and write back")
    func graphProperties() throws {
        let text = """
        {"@odata.type": "#microsoft.graph.iosManagedAppProtection", "displayName": "p",
         "minimumRequiredOsVersion": "12.4.6", "minimumWarningOsVersion": null, "appActionIfDeviceComplianceRequired": "wipe",
         "maximumAllowedDeviceThreatLevel": "low", "allowedIosDeviceModels": "iPhone15;iPad13",
         "periodOfflineBeforeWipeIsEnforced": "P30D"}
        """
        let loaded = try #require(try PolicyFile.load(Data(text.utf8), file: "p.json").first)
        let l = loaded.policy.settings.launch
        #expect(l.os.required == Version("12.4.6") && l.os.warning == nil && l.complianceAction == .wipe)
        #expect(l.maximumThreatLevel == .low && l.allowedModels == ["iPhone15", "iPad13"] && l.offlineWipeMinutes == 30 * 1440)
        #expect(loaded.warnings.isEmpty, "\(loaded.warnings)")
        let bad = """
        {"@odata.type": "#microsoft.graph.iosManagedAppProtection", "displayName": "p",
         "minimumRequiredOsVersion": "twelve", "mobileThreatDefenseRemediationAction": "shout"}
        """
        do {
            _ = try PolicyFile.load(Data(bad.utf8), file: "bad.json")
            Issue.record("a bad version and action load")
        } catch {
            let said = "\(error)"
            #expect(said.contains("minimumRequiredOsVersion") && said.contains("not a version"), "\(said)")
            #expect(said.contains("mobileThreatDefenseRemediationAction") && said.contains("warn"), "\(said)")
        }
    }

    /// Every property of the three exports is read by the engine or listed as outside what
    /// MAMLab emulates: none falls through as an unknown key.
    @Test("every property of the vendor's three exports is decided or noted with why it has no effect")
    func everyExportPropertyIsKnown() throws {
        let folder = Self.root.appendingPathComponent("Policies/frameworks")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }
        #expect(files.count == 3)
        for file in files {
            let path = folder.appendingPathComponent(file).path
            let loaded = try Catalog.loadPolicyFile(path)
            #expect(!loaded.isEmpty)
            for l in loaded { #expect(l.warnings.filter { "\($0)".contains("unknown key") }.isEmpty, "\(file): \(l.warnings)") }
            // Each key is decided (read into the settings) or has its reason for no effect, never both.
            let keys = Catalog.settingNodes(ofPolicyIn: path).keys
            #expect(keys.count > 40, "\(file)")
            for key in keys {
                let decided = GraphPolicy.handledProperties.contains(key), noEffect = GraphPolicy.noEffect[key] != nil
                #expect(decided != noEffect, "\(file): \(key) is \(decided ? "decided and also said to have no effect" : "unaccounted for")")
            }
            let root = Located(try JSONParser.parse(try Catalog.read(path)), path: "$", file: file)
            #expect(GraphPolicy.propertiesWithNoEffect(in: root).count == keys.filter { GraphPolicy.noEffect[$0] != nil }.count)
        }
    }
}
