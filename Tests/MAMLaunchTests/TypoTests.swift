import Foundation
import Testing

/// A typo is heard: a misspelled Graph key is a warning with the key it misspells; an account
/// in the tenant's own domain that the tenant does not know is an error.
@Suite("Typos get a message")
struct TypoTests {
    static func policyWithTypo() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-typo-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let file = dir.appendingPathComponent("typo.json")
        try #"{"displayName": "typo", "allowedOutboundClipboardSharinglevel": "blocked", "saveAsBlocked": true}"#
            .write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    @Test func anUnknownPolicyKeyIsAWarningNamingFilePathAndNearestKey() throws {
        let file = try Self.policyWithTypo()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let r = try CommandRunner.run(["check", file.path])
        #expect(r.status == 0, "warnings only: \(r.stdout)")
        #expect(r.stdout.contains("typo.json"), "\(r.stdout)")
        #expect(r.stdout.contains(#"warning: $.allowedOutboundClipboardSharinglevel: unknown key "allowedOutboundClipboardSharinglevel""#), "\(r.stdout)")
        #expect(r.stdout.contains(#"did you mean "allowedOutboundClipboardSharingLevel"?"#), "\(r.stdout)")
        #expect(r.stdout.contains("0 errors, 1 warning"), "\(r.stdout)")
    }

    @Test func explainAndMatrixRepeatTheWarningOnStandardError() throws {
        let file = try Self.policyWithTypo()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let explain = try CommandRunner.run(["explain", "--policy", file.path, "--from", "Mail", "--to", "Notes", "--channel", "send"])
        #expect(explain.stderr.contains(#"did you mean "allowedOutboundClipboardSharingLevel"?"#), "\(explain.stderr)")
        #expect(!explain.stdout.contains("did you mean"), "the answer stays on standard output alone")
        let matrix = try CommandRunner.run(["matrix", "--predict", "--policy", file.path])
        #expect(matrix.stderr.contains(#"did you mean "allowedOutboundClipboardSharingLevel"?"#), "\(matrix.stderr)")
    }

    @Test func realGraphPropertiesOutsideTheEmulationAreNotWarnedAbout() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-typo-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("real.json")
        try #"{"displayName": "real", "faceIdBlocked": true, "minimumRequiredOsVersion": "17.0", "@odata.etag": "x"}"#
            .write(to: file, atomically: true, encoding: .utf8)
        let r = try CommandRunner.run(["check", file.path])
        #expect(r.stdout.contains("0 errors, 0 warnings"), "\(r.stdout)")
    }

    @Test func anUnknownAccountInTheTenantsOwnDomainIsAnError() throws {
        let r = try CommandRunner.run(["explain", "--from", "Mail:adel@contoso.com", "--to", "Notes", "--channel", "send"])
        #expect(r.status == 1, "\(r.stdout)\(r.stderr)")
        #expect(r.stderr.contains("adel@contoso.com is not a user of tenant contoso.com (Policies/contoso/tenant.json) (did you mean \"adele@contoso.com\"?)"), "\(r.stderr)")
        #expect(!r.stdout.contains("ALLOWED"))
        #expect(!r.stderr.contains("USAGE"), "\(r.stderr)")
    }

    @Test func runRefusesAnUnknownUserInTheTenantsOwnDomainBeforeStartingAnything() throws {
        let r = try CommandRunner.run(["run", "Mail", "--user", "adel@contoso.com"])
        #expect(r.status == 1, "\(r.stdout)\(r.stderr)")
        #expect(r.stderr.contains("adel@contoso.com is not a user of tenant contoso.com (Policies/contoso/tenant.json) (did you mean \"adele@contoso.com\"?)"), "\(r.stderr)")
    }

    /// An experiment file with `text`, in a folder of its own (the caller removes the folder).
    static func experiment(_ text: String) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-typo-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let file = dir.appendingPathComponent("e.json")
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    /// A party of an experiment file signed in to a misspelled user: refused with the user meant.
    @Test func anExperimentsMisspelledUserIsRefusedWithTheUserMeant() throws {
        let file = try Self.experiment(#"{"name": "typo", "parties": [{"name": "Mail", "app": "Mail", "accounts": ["ben@contoso.cm"]}, {"name": "Docs", "app": "Docs", "accounts": ["adele@contoso.com"]}], "channels": ["paste"], "policies": ["managed-only"]}"#)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let r = try CommandRunner.run(["matrix", file.path, "--predict"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("party \"Mail\": ben@contoso.cm is not a user of tenant contoso.com") && r.stderr.contains("(did you mean \"ben@contoso.com\"?)"), "\(r.stderr)")
    }

    /// An experiment file's misspelled app: check and the matrix name the app meant.
    @Test func anExperimentsMisspelledAppNamesTheAppMeant() throws {
        let file = try Self.experiment(#"{"name": "typo", "parties": [{"name": "O", "app": "Outlok", "accounts": ["adele@contoso.com"]}, {"name": "D", "app": "Docs", "accounts": ["adele@contoso.com"]}], "channels": ["paste"], "policies": ["managed-only"]}"#)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let check = try CommandRunner.run(["check", file.path])
        #expect(check.status == 1 && check.stdout.contains("$.parties[0].app: unknown app \"Outlok\" (did you mean \"Outlook\"?)"), "\(check.stdout)")
        let r = try CommandRunner.run(["matrix", file.path, "--predict"])
        #expect(r.status != 0 && r.stderr.contains("unknown app \"Outlok\" (did you mean \"Outlook\"?)"), "\(r.stderr)")
    }

    /// A bundle id misspelled in a tenant is an error for check and a warning the matrix's report
    /// carries, each with the catalog app it is a typo of.
    @Test func aTenantsMisspelledBundleIDNamesTheAppMeant() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-typo-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let level2 = CommandRunner.root.appendingPathComponent("Policies/frameworks/level-2-enterprise-enhanced-data-protection-iOS.json").path
        let tenant = dir.appendingPathComponent("tenant.json")
        try """
            {"tenant": "contoso.com", "users": [{"upn": "adele@contoso.com", "groups": ["sales"]}], "groups": ["sales"],
             "policies": [{"$ref": "\(level2)", "apps": ["com.microsoft.office.outlook", "com.microsft.office.excel"],
               "assignments": [{"target": {"@odata.type": "#microsoft.graph.groupAssignmentTarget", "groupId": "sales"}}]}]}
            """.write(to: tenant, atomically: true, encoding: .utf8)
        let check = try CommandRunner.run(["check", tenant.path])
        #expect(check.status == 1 && check.stdout.contains("targets unknown app com.microsft.office.excel (did you mean com.microsoft.office.excel?)"), "\(check.stdout)")
        let out = dir.appendingPathComponent("m.html").path
        let r = try CommandRunner.run(["matrix", "--tenant", tenant.path, "--predict", "--out", out])
        #expect(r.stderr.contains("com.microsft.office.excel is in no app catalog (did you mean com.microsoft.office.excel?)"), "\(r.stderr)")
        let html = try String(contentsOfFile: out, encoding: .utf8)
        #expect(html.contains("com.microsft.office.excel is in no app catalog (did you mean com.microsoft.office.excel?)"), "the report carries it")
    }
}
