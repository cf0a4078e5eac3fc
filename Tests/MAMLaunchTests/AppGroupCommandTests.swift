import Foundation
import Testing

/// The vendor's Level 1 export, as the vendor ships it (`appGroupType: allCoreMicrosoftApps`, no
/// `apps`), through the commands an admin runs first.
@Suite("mamlaunch: a policy that targets an app group")
struct AppGroupCommandTests {
    static let level1 = "Policies/frameworks/level-1-enterprise-basic-data-protection-iOS.json"

    @Test("explain makes Outlook managed under it, Mail (no core app) not, and says how the group resolved")
    func explainResolvesTheGroup() async throws {
        let r = try await CommandRunner.runOffPool(["explain", "--policy", Self.level1, "--from", "Outlook", "--to", "com.google.gmail", "--channel", "send", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let o = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], "\(r.stdout)")
        #expect((o["from"] as? [String: Any])?["managed"] as? Bool == true, "\(r.stdout)")
        #expect(o["ruleName"] as? String == "sendAllApps")
        let notes = (o["notes"] as? [String]) ?? []
        #expect(notes.contains { $0.contains("appGroupType allCoreMicrosoftApps, resolved through the app catalog to 11 apps") }, "\(notes)")
        let mail = try await CommandRunner.runOffPool(["explain", "--policy", Self.level1, "--from", "Mail", "--to", "Notes", "--channel", "send", "--json"])
        #expect(mail.stdout.contains("\"ruleName\":\"senderUnmanaged\""), "\(mail.stdout)")
    }

    @Test("check names how it resolved the group, at the line of appGroupType")
    func checkNamesTheResolution() async throws {
        let r = try await CommandRunner.runOffPool(["check", Self.level1])
        #expect(r.status == 0, "\(r.stdout) \(r.stderr)")
        #expect(r.stdout.contains("note: \(Self.level1):67:"), "\(r.stdout)")
        #expect(r.stdout.contains("$.appGroupType: policy \"iOS/iPadOS Enterprise Basic Data Protection v1.2\" targets appGroupType allCoreMicrosoftApps, resolved through the app catalog to 11 apps: com.microsoft.office.outlook"), "\(r.stdout)")
        #expect(r.stdout.contains("checked 1 file: 0 errors, 0 warnings"))
    }
}
