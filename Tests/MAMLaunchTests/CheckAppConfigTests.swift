import Foundation
import Testing

/// `mamlaunch check` reads a tenant's app-configuration sections like the rest of the file.
@Suite("mamlaunch check: app configuration")
struct CheckAppConfigTests {
    static let head = #"{"users": [{"upn": "a@c.com", "groups": ["g"]}], "policies": [{"displayName": "P", "apps": ["com.contoso.mail"], "assignments": [{"target": {"groupId": "g"}}]}], "#
    static let targeting = #""apps": ["com.contoso.mail"], "assignments": [{"target": {"groupId": "g"}}]"#

    func check(_ content: String) throws -> (status: Int32, lines: [String], file: String) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-appconfig-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("tenant.json")
        try Data(content.utf8).write(to: file)
        let r = try CommandRunner.run(["check", file.path])
        return (r.status, r.stdout.split(separator: "\n").map(String.init), file.path)
    }

    @Test func theSampleTenantsSectionsPass() throws {
        let r = try CommandRunner.run(["check", "Policies/contoso/tenant.json"])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("0 errors, 0 warnings"))
    }

    @Test func aSettingThatIsNotTextIsRejected() throws {
        let r = try check(Self.head + #""appConfigurations": [{"displayName": "C", "customSettings": [{"name": "k", "value": 5}], "# + Self.targeting + "}]}")
        #expect(r.status == 1, "\(r.lines)")
        #expect(r.lines.contains { $0.hasPrefix(r.file) && $0.hasSuffix(#":1:248: error: $.appConfigurations[0].customSettings[0].value: expected a string (Graph sends every custom setting as text: write "true" or "5"), found integer 5"#) },
                "\(r.lines)")
        #expect(r.lines.last?.contains("1 error") == true, "\(r.lines)")
    }

    @Test func aDefaultWithAssignmentsIsRejected() throws {
        let r = try check(Self.head + #""appConfigurationDefault": {"customSettings": [], "assignments": [{"target": {"groupId": "g"}}]}}"#)
        #expect(r.status == 1, "\(r.lines)")
        #expect(r.lines.contains { $0.contains(#"error: $.appConfigurationDefault.assignments: the tenant default reaches every user; it takes no "assignments""#) }, "\(r.lines)")
    }

    @Test func aConflictIsAWarningThatDoesNotFail() throws {
        let a = #"{"displayName": "A", "customSettings": [{"name": "k", "value": "1"}], "# + Self.targeting + "}"
        let b = #"{"displayName": "B", "customSettings": [{"name": "k", "value": "2"}], "# + Self.targeting + "}"
        let r = try check(Self.head + #""appConfigurations": ["# + a + ", " + b + "]}")
        #expect(r.status == 0, "\(r.lines)")
        #expect(r.lines.contains { $0.contains(#"warning: $.appConfigurations[1].customSettings[0]: app configurations "A" and "B" give setting "k" different values ("1", "2") for user a@c.com in app com.contoso.mail; the app sees a conflict"#) }, "\(r.lines)")
        #expect(r.lines.last?.contains("0 errors, 1 warning") == true, "\(r.lines)")
    }
}

@Suite("mamlaunch check: conditional access")
struct CheckConditionalAccessTests {
    @Test func aBadConditionalAccessSectionIsAnErrorWithItsPlace() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-ca-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("tenant.json")
        let content = #"{"users": [{"upn": "a@c.com", "oid": "5f1c7a2e-3b4d-4e6f-8a9b-0c1d2e3f4a5b", "groups": ["g"]}], "conditionalAccess": {"tenantId": "not-a-guid"}}"#
        try Data(content.utf8).write(to: file)
        let r = try CommandRunner.run(["check", file.path])
        #expect(r.status == 1, "\(r.stdout)")
        #expect(r.stdout.contains(#"error: $.conditionalAccess.tenantId: "not-a-guid" is not a tenant id"#), "\(r.stdout)")
    }
}
