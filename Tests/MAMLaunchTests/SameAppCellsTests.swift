import Foundation
import Testing

/// Cells between two accounts of one app, live: a paste from the org account to the personal
/// one inside Outlook, a document shared from one account to the other. The broker must decide
/// each as the engine does (the copier judged under the account that copied, the paster under
/// the account it pastes as). A run that switched the app to the target's account before it
/// copied would show the broker one account on both sides, and org text would reach the
/// personal account.
@Suite("matrix: two accounts of one app", .serialized)
struct SameAppCellsTests {
    static let experiment = """
        {"name": "two-accounts",
         "parties": [
           {"name": "Outlook (adele)", "app": "Outlook", "accounts": ["adele@contoso.com", "personal"], "identity": "adele@contoso.com"},
           {"name": "Outlook (personal)", "app": "Outlook", "accounts": ["adele@contoso.com", "personal"], "identity": "personal"},
           {"name": "Word (adele)", "app": "Word", "accounts": ["adele@contoso.com"]},
           {"name": "Notes", "app": "Notes"}],
         "channels": ["paste", "open-in", "send", "receive", "import", "open-from oneDriveForBusiness:adele@contoso.com", "open-url"],
         "policies": ["ROOT/Policies/frameworks/level-2-enterprise-enhanced-data-protection-iOS.json",
                      "ROOT/Policies/frameworks/level-3-enterprise-high-data-protection-iOS.json"]}
        """

    static func cells(_ r: CommandRunner.Result) -> [[String: Any]] {
        r.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    static func party(_ cell: [String: Any], _ side: String) -> String? { (cell[side] as? [String: Any])?["party"] as? String }

    @Test("Level 2 and 3: every cell between Outlook's two accounts agrees live, and org text pasted under the personal account does not arrive")
    func twoAccountsOfOutlookLive() async throws {
        let file = try MatrixCommandTests.temporary("two-accounts.json", Self.experiment.replacingOccurrences(of: "ROOT", with: CommandRunner.root.path))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let r = try await CommandRunner.runOffPool(["matrix", file, "--format", "json"])
        let cells = Self.cells(r)
        #expect(r.status == 0, "\(r.stdout.suffix(3000)) \(r.stderr.suffix(2000))")
        #expect(!cells.isEmpty && cells.allSatisfy { $0["agree"] as? Bool == true && $0["leaked"] as? Bool == false })
        let within = cells.filter { Self.party($0, "source")?.hasPrefix("Outlook") == true && Self.party($0, "target")?.hasPrefix("Outlook") == true }
        // Both directions of paste, open-in, send, receive, import and open-from, under both levels;
        // a link to the app's own scheme is not a cell between its accounts.
        #expect(within.count == 2 * 2 * 6, "\(within.map { "\($0["channel"] ?? "")" })")
        #expect(!within.contains { $0["channel"] as? String == "open-url" })

        let pastes = within.filter { $0["channel"] as? String == "paste" && Self.party($0, "source") == "Outlook (adele)" }
        #expect(pastes.count == 2)
        for c in pastes {
            let live = c["live"] as? [String: Any]
            // Policy-managed apps with paste in, no character exception: a personal account is not a managed target.
            #expect(live?["outcome"] as? String == "blocked" && live?["ruleName"] as? String == "pasteOrgNotManagedTarget", "\(c)")
            #expect((live?["arrival"] as? [String: Any])?["readable"] as? Bool != true, "\(c)")
        }
        // A document shared from adele's account to the personal one is a share to a second
        // process of the app: it arrives, and the app takes it under adele's account.
        let shares = within.filter { $0["channel"] as? String == "open-in" && Self.party($0, "source") == "Outlook (adele)" }
        #expect(shares.count == 2)
        for c in shares {
            let live = c["live"] as? [String: Any]
            let arrival = live?["arrival"] as? [String: Any]
            #expect(live?["outcome"] as? String == "switched" && arrival?["identity"] as? String == "adele@contoso.com", "\(c)")
        }
    }
}
