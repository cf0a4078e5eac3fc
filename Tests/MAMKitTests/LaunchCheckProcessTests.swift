import Foundation
import MAMTestSupport
import Testing

/// Conditional launch through the processes: a broker on a virtual clock holding the device, the
/// vendor's Level 2 and Level 3 framework policies targeting Docs, `mamlaunch device set` and
/// `mamlaunch clock advance` changing the device and the time, and Docs (MAMKit, scripted) told
/// what each check decided. The values are the exports' own (Policies/frameworks): 12 hours
/// offline before access is checked and 90 days before a wipe at both levels, iOS 12.4.6 or newer,
/// and a jailbroken device blocked under Level 2, wiped under Level 3.
@Suite("Launch checks, live", .serialized, .timeLimit(.minutes(3)))
struct LaunchCheckProcessTests {
    /// A tenant whose one policy is the framework `level` (2 or 3), for adele, targeting Docs.
    final class LevelTenant {
        let folder: String
        var path: String { folder + "/tenant.json" }

        init(level: Int) throws {
            folder = NSTemporaryDirectory() + "mamlab-launch-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let names = [2: "level-2-enterprise-enhanced-data-protection-iOS.json", 3: "level-3-enterprise-high-data-protection-iOS.json"]
            let name = try #require(names[level])
            try FileManager.default.copyItem(atPath: KitBroker.root + "/Policies/frameworks/" + name, toPath: folder + "/level.json")
            let tenant = """
                {"tenant": "contoso.com",
                 "users": [{"upn": "adele@contoso.com", "oid": "5f1c7a2e-3b4d-4e6f-8a9b-0c1d2e3f4a5b", "groups": ["pilot"]}],
                 "groups": ["pilot"],
                 "policies": [{"$ref": "level.json",
                               "apps": [{"mobileAppIdentifier": {"@odata.type": "#microsoft.graph.iosMobileAppIdentifier", "bundleId": "com.contoso.docs"}}],
                               "assignments": [{"target": {"@odata.type": "#microsoft.graph.groupAssignmentTarget", "groupId": "pilot"}}]}]}
                """
            try tenant.write(toFile: path, atomically: true, encoding: .utf8)
        }

        deinit { try? FileManager.default.removeItem(atPath: folder) }
    }

    /// `mamlaunch ARGUMENTS --broker SOCKET`; fails the test on a non-zero exit. Returns its output.
    @discardableResult
    static func mamlaunch(_ b: KitBroker, _ arguments: [String], expecting status: Int32 = 0,
                          sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let run = try ChildProcess.run(KitBroker.bin + "/mamlaunch", arguments + ["--broker", b.launcherSocket], timeout: 30)
        #expect(run.status == status, "mamlaunch \(arguments.joined(separator: " ")): \(run.out) \(run.err)", sourceLocation: sourceLocation)
        return run.out + run.err
    }

    /// Docs under adele, enrolled, on a broker on a virtual clock.
    static func start(level: Int) throws -> (LevelTenant, KitBroker, ScriptedProcess) {
        let tenant = try LevelTenant(level: level)
        let b = try KitBroker(tenant: tenant.path, extraArguments: ["--clock", "virtual"])
        let docs = try b.launch("Docs", user: "adele@contoso.com", keepContainer: true)
        let enrolled = try docs.send("enroll", "adele@contoso.com")
        #expect(enrolled["succeeded"]?.bool == true || enrolled["status"]?.number == 208, "\(enrolled)")
        return (tenant, b, docs)
    }

    @Test("offline past the access grace period: blocked while running, open again once online")
    func offlineBlocksAndReopens() throws {
        let (tenant, b, docs) = try Self.start(level: 3)
        defer { b.stop(); _ = tenant }
        #expect(try docs.send("blocked")["blocked"]?.array?.isEmpty == true)
        // Exactly 12 hours offline is within the grace period; a minute more on the broker's clock is not.
        let set = try Self.mamlaunch(b, ["device", "set", "--offline", "12h"])
        #expect(set.contains("offline 12 h"), "\(set)")
        #expect(try docs.send("copy", "before")["ok"]?.bool == true)
        try Self.mamlaunch(b, ["clock", "advance", "1m"])
        let blocked = try docs.send("wait", "launch", "10")
        #expect(blocked["action"]?.string == "block" && blocked["rule"]?.string == "launchOfflineAccess", "\(blocked)")
        #expect(blocked["detail"]?.string == "offline 12 h 1 min, longer than 12 h", "\(blocked)")
        #expect(try docs.send("blocked")["blocked"]?.array?.compactMap(\.string) == ["adele@contoso.com"])
        // Nothing of hers moves while blocked, and her key is not handed out.
        let copy = try docs.send("copy", "during")
        #expect(copy["ok"]?.bool != true && copy["code"]?.string == "notAllowed", "\(copy)")
        let protect = try docs.send("protect", "adele@contoso.com", "minutes")
        #expect(protect["data"] == nil, "\(protect)")
        // Showing another identity does not open hers: her key is still refused by name.
        _ = try docs.send("identity", "personal")
        let sneaky = try docs.send("protect", "adele@contoso.com", "minutes")
        #expect(sneaky["data"] == nil, "a blocked account's key for an app that looked away: \(sneaky)")
        _ = try docs.send("identity", "adele@contoso.com")
        // Online again: the next check passes and the data opens.
        let online = try Self.mamlaunch(b, ["device", "set", "--online"])
        #expect(online.contains("Docs") || online.contains("docs"), "the reply names what the checks did: \(online)")
        let open = try docs.send("wait", "launch", "10")
        #expect(open["action"]?.string == "passed", "\(open)")
        #expect(try docs.send("copy", "after")["ok"]?.bool == true)
        #expect(try docs.send("protect", "adele@contoso.com", "minutes")["data"]?.string != nil)
        docs.finish()
        // The broker's audit has each verdict on the launch channel.
        let audit = (try? String(contentsOfFile: b.audit, encoding: .utf8)) ?? ""
        #expect(audit.contains("\"launch\"") && audit.contains("launchOfflineAccess"), "\(audit.suffix(1500))")
    }

    @Test("offline for 90 days: the account's files and key are wiped")
    func ninetyDaysOfflineWipes() throws {
        let (tenant, b, docs) = try Self.start(level: 3)
        defer { b.stop(); _ = tenant }
        #expect(try docs.send("write-file", "minutes.txt", "adele@contoso.com", "board minutes")["owner"]?.string == "adele@contoso.com")
        #expect(try docs.send("write-file", "diary.txt", "personal", "my own")["owner"] == .null)
        let data = try #require(try docs.send("protect", "adele@contoso.com", "board minutes")["data"]?.string)
        try Self.mamlaunch(b, ["device", "set", "--offline", "89d"])
        #expect(try docs.send("wait", "launch", "10")["rule"]?.string == "launchOfflineAccess")
        try Self.mamlaunch(b, ["clock", "advance", "1d"])
        try Self.mamlaunch(b, ["clock", "advance", "1m"])
        let wiped = try docs.send("wait", "wipe", "10")
        #expect(wiped["account"]?.string == "adele@contoso.com", "\(wiped)")
        let left = try docs.send("files")["files"]?.array?.compactMap(\.string) ?? []
        #expect(left.contains("diary.txt") && !left.contains("minutes.txt"), "\(left)")
        let after = try docs.send("unprotect", data)
        #expect(after["text"] == nil, "her key is gone: \(after)")
        #expect(try docs.send("policy")["managed"]?.bool == false)
        docs.finish()
    }

    @Test("a jailbroken device: blocked under Level 2, wiped under Level 3", arguments: [2, 3])
    func jailbroken(level: Int) throws {
        let (tenant, b, docs) = try Self.start(level: level)
        defer { b.stop(); _ = tenant }
        #expect(try docs.send("write-file", "minutes.txt", "adele@contoso.com", "board minutes")["owner"]?.string == "adele@contoso.com")
        let reply = try Self.mamlaunch(b, ["device", "set", "--jailbroken"])
        #expect(reply.contains("jailbroken"), "\(reply)")
        if level == 2 {
            let blocked = try docs.send("wait", "launch", "10")
            #expect(blocked["action"]?.string == "block" && blocked["rule"]?.string == "launchJailbroken", "\(blocked)")
            #expect(try docs.send("files")["files"]?.array?.compactMap(\.string).contains("minutes.txt") == true)
        } else {
            let wiped = try docs.send("wait", "wipe", "10")
            #expect(wiped["account"]?.string == "adele@contoso.com", "\(wiped)")
            #expect(try docs.send("files")["files"]?.array?.compactMap(\.string).contains("minutes.txt") == false)
        }
        docs.finish()
    }

    @Test("an OS older than the policy's minimum: blocked when the app starts")
    func oldOSBlocksAtLaunch() throws {
        let (tenant, b, docs) = try Self.start(level: 3)
        defer { b.stop(); _ = tenant }
        docs.finish()
        try Self.mamlaunch(b, ["device", "set", "--os", "12.4.5"])
        let again = try b.launch("Docs", user: "adele@contoso.com", keepContainer: true)
        let blocked = try again.send("wait", "launch", "10")
        #expect(blocked["action"]?.string == "block" && blocked["rule"]?.string == "launchOSVersion", "\(blocked)")
        #expect(blocked["detail"]?.string == "iOS 12.4.5 is older than 12.4.6", "\(blocked)")
        again.finish()
        // A bad change is refused whole and named.
        let bad = try Self.mamlaunch(b, ["device", "set", "--threat-level", "severe"], expecting: 64)
        #expect(bad.contains("--threat-level severe"), "\(bad)")
    }
}
