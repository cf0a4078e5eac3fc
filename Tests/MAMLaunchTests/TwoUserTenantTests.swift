import Foundation
import Testing

/// A tenant with two groups under two levels: adele (sales) on the vendor's Level 2, ben
/// (finance) on Level 3, both with Outlook and Word. Each user's apps are managed live under
/// the user's own policy: one app holds one set of accounts on a phone, so two users' copies of
/// an app run on two devices (a broker each). A run that enrolled the first user only would leave
/// ben's apps unmanaged live while the prediction held them managed (false leaks).
@Suite("matrix: a tenant with two users under two policies", .serialized)
struct TwoUserTenantTests {
    static func tenant(in folder: URL) throws -> String {
        let root = CommandRunner.root.path
        let text = """
            {"tenant": "contoso.com",
             "users": [
               {"upn": "adele@contoso.com", "oid": "5f1c7a2e-3b4d-4e6f-8a9b-0c1d2e3f4a5b", "groups": ["sales"]},
               {"upn": "ben@contoso.com", "oid": "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", "groups": ["finance"]}],
             "groups": ["sales", "finance"],
             "policies": [
               {"$ref": "\(root)/Policies/frameworks/level-2-enterprise-enhanced-data-protection-iOS.json",
                "assignments": [{"target": {"@odata.type": "#microsoft.graph.groupAssignmentTarget", "groupId": "sales"}}]},
               {"$ref": "\(root)/Policies/frameworks/level-3-enterprise-high-data-protection-iOS.json",
                "assignments": [{"target": {"@odata.type": "#microsoft.graph.groupAssignmentTarget", "groupId": "finance"}}]}]}
            """
        let path = folder.appendingPathComponent("tenant.json").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func folder() throws -> URL {
        let f = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-two-users-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: f, withIntermediateDirectories: true)
        return f
    }

    static func cells(_ r: CommandRunner.Result) -> [[String: Any]] {
        r.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    @Test("both users' apps pass every cell live with no leak, each managed under its own level")
    func bothUsersLive() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let tenant = try Self.tenant(in: folder)
        let experiment = folder.appendingPathComponent("two-users.json").path
        try Data("""
            {"name": "two-users", "tenant": "\(tenant)",
             "parties": [{"name": "Outlook (adele)", "app": "Outlook", "accounts": ["adele@contoso.com"]},
                         {"name": "Word (adele)", "app": "Word", "accounts": ["adele@contoso.com"]},
                         {"name": "Outlook (ben)", "app": "Outlook", "accounts": ["ben@contoso.com"]},
                         {"name": "Word (ben)", "app": "Word", "accounts": ["ben@contoso.com"]},
                         {"name": "Notes", "app": "Notes"}],
             "channels": ["open-in", "paste", "save-to dropbox", "save-to oneDriveForBusiness:ben@contoso.com"], "policies": ["tenant"]}
            """.utf8).write(to: URL(fileURLWithPath: experiment))
        let r = try await CommandRunner.runOffPool(["matrix", experiment, "--format", "json"])
        let cells = Self.cells(r)
        #expect(r.status == 0, "\(r.stdout.suffix(3000)) \(r.stderr.suffix(2000))")
        #expect(cells.count > 30 && cells.allSatisfy { $0["agree"] as? Bool == true && $0["leaked"] as? Bool == false })
        // No cell joins the two users' Outlook (two devices).
        #expect(!cells.contains { Self.party($0, "source")?.hasPrefix("Outlook") == true && Self.party($0, "target")?.hasPrefix("Outlook") == true })
        // Ben's Word is managed live under Level 3 (Dropbox is no allowed save location there),
        // OneDrive for Business under his own account is.
        let benSave = try #require(cells.first { Self.party($0, "source") == "Word (ben)" && $0["channel"] as? String == "save-to" && $0["location"] as? String == "dropbox" })
        #expect((benSave["live"] as? [String: Any])?["ruleName"] as? String == "saveLocationNotAllowed", "\(benSave)")
        let benOneDrive = try #require(cells.first { Self.party($0, "source") == "Word (ben)" && ($0["location"] as? String)?.hasPrefix("oneDriveForBusiness") == true })
        #expect((benOneDrive["live"] as? [String: Any])?["outcome"] as? String == "allowed", "\(benOneDrive)")
        // Ben's org text pasted into adele's Word: another account's data, blocked, on the device they share.
        let crossPaste = try #require(cells.first { Self.party($0, "source") == "Word (ben)" && Self.party($0, "target") == "Outlook (adele)" && $0["channel"] as? String == "paste" })
        #expect((crossPaste["live"] as? [String: Any])?["outcome"] as? String == "blocked", "\(crossPaste)")
    }

    @Test("the default experiment with --tenant shows every user a policy is assigned to")
    func everyAssignedUserIsAParty() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let r = try await CommandRunner.runOffPool(["matrix", "--tenant", try Self.tenant(in: folder), "--predict", "--format", "json"])
        #expect(r.status == 0, "\(r.stderr.suffix(2000))")
        let parties = Set(Self.cells(r).compactMap { Self.party($0, "source") })
        for app in ["Outlook", "Word", "Teams"] {
            #expect(parties.contains("\(app) (adele)") && parties.contains("\(app) (ben)"), "\(parties.sorted())")
        }
    }

    @Test("a written cell between two users' copies of one app is refused: two devices")
    func aCellBetweenTwoUsersOfOneAppIsRefused() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let experiment = folder.appendingPathComponent("collide.json").path
        try Data("""
            {"name": "collide", "tenant": "\(try Self.tenant(in: folder))",
             "parties": [{"name": "Outlook (adele)", "app": "Outlook", "accounts": ["adele@contoso.com"]},
                         {"name": "Outlook (ben)", "app": "Outlook", "accounts": ["ben@contoso.com"]}],
             "policies": ["tenant"], "cells": [{"channel": "paste", "source": "Outlook (adele)", "target": "Outlook (ben)"}]}
            """.utf8).write(to: URL(fileURLWithPath: experiment))
        let r = try await CommandRunner.runOffPool(["matrix", experiment, "--predict"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("cells[0] (Outlook (adele) paste → Outlook (ben)): Outlook (adele) and Outlook (ben) are one app signed in to other accounts"), "\(r.stderr)")
    }

    static func party(_ cell: [String: Any], _ side: String) -> String? { (cell[side] as? [String: Any])?["party"] as? String }
}
