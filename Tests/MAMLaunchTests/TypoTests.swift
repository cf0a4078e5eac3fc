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
        #expect(r.stderr.contains("adel@contoso.com is not a user of tenant contoso.com (Policies/contoso/tenant.json)"), "\(r.stderr)")
        #expect(!r.stdout.contains("ALLOWED"))
        #expect(!r.stderr.contains("USAGE"), "\(r.stderr)")
    }

    @Test func runRefusesAnUnknownUserInTheTenantsOwnDomainBeforeStartingAnything() throws {
        let r = try CommandRunner.run(["run", "Mail", "--user", "adel@contoso.com"])
        #expect(r.status == 1, "\(r.stdout)\(r.stderr)")
        #expect(r.stderr.contains("adel@contoso.com is not a user of tenant contoso.com (Policies/contoso/tenant.json)"), "\(r.stderr)")
    }
}
