import Foundation
import MAMBroker
import MAMBrokerCore
import MAMPolicy
import MAMTestSupport
import MAMWire
import Testing

/// The broker and `mamlaunch explain` give the same answer for every channel between every pair
/// of sample parties (issue 9 item 10): the broker's core is driven with messages, `explain`
/// is run as the command a user types, and outcome and rule must match.
@Suite("The broker and explain agree")
struct ExplainAgreementTests {
    /// A sample party: the app, the account it runs as in the broker, and the same for `explain`.
    struct Sample: CustomStringConvertible {
        /// `user`: the account the launcher signs in (`--user`); `identity`: what the app then sets.
        /// `personal`: the user signed a personal account in as well (the hand-off's `personal`).
        /// `view`: the accounts the app shows together (`setViewIdentities`; `--from-view` / `--to-view`).
        var app: String, name: String, user: String? = nil, personal = false, identity: String? = nil, view: [String]? = nil, explain: String
        var description: String { explain + (view == nil ? "" : " (one view)") }
        var from: [String] { ["--from", explain] + (view == nil ? [] : ["--from-view"]) }
        var to: [String] { ["--to", explain] + (view == nil ? [] : ["--to-view"]) }
    }

    static let samples = [
        Sample(app: "com.contoso.mail", name: "Mail", personal: true, explain: "Mail:adele@contoso.com,personal"),
        Sample(app: "com.contoso.mail", name: "Mail", personal: true, identity: "", explain: "Mail:personal"),
        Sample(app: "com.contoso.docs", name: "Docs", explain: "Docs"),
        Sample(app: "com.contoso.docs", name: "Docs", user: "ben@contoso.com", explain: "Docs:ben@contoso.com"),
        Sample(app: "com.example.notes", name: "Notes", explain: "Notes"),
        Sample(app: "com.microsoft.msedge", name: "Edge", personal: true, explain: "Edge:adele@contoso.com,personal"),
        // SEMANTICS §1.view: Mail's unified inbox, adele and personal together (the lock-down policy).
        Sample(app: "com.contoso.mail", name: "Mail", personal: true, view: ["adele@contoso.com", ""], explain: "Mail:adele@contoso.com,personal"),
    ]

    static var mamlaunch: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = (exe as NSString).deletingLastPathComponent
        for _ in 0..<4 where !FileManager.default.isExecutableFile(atPath: dir + "/mamlaunch") { dir = (dir as NSString).deletingLastPathComponent }
        return dir + "/mamlaunch"
    }

    /// `explain --json` for one question: (outcome, rule id).
    static func explain(_ arguments: [String]) throws -> (String, String) {
        let r = try ChildProcess.run(mamlaunch, ["explain", "--tenant", CoreLab.root.appendingPathComponent("Policies/contoso/tenant.json").path, "--json"] + arguments,
                                     environment: ["MAMLAB_ROOT": CoreLab.root.path], timeout: 60)
        let json = try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any] ?? [:]
        return (json["outcome"] as? String ?? "?", json["rule"] as? String ?? "?")
    }

    /// A lab with both parties running, as the broker would have them.
    static func lab(_ a: Sample, _ b: Sample) -> (CoreLab, SessionID, SessionID) {
        var lab = CoreLab()
        let x = lab.launch(a.app, account: a.user, personal: a.personal)
        if let acct = a.identity { lab.send(x, .setIdentity(account: acct)) }
        if let view = a.view { lab.send(x, .setViewIdentities(accounts: view)) }
        let y = lab.launch(b.app, account: b.user, personal: b.personal)
        if let acct = b.identity { lab.send(y, .setIdentity(account: acct)) }
        if let view = b.view { lab.send(y, .setViewIdentities(accounts: view)) }
        return (lab, x, y)
    }

    @Test func everyChannelBetweenEveryPairOfSampleParties() throws {
        var compared = 0
        for a in Self.samples {
            for b in Self.samples where a.app != b.app {
                // Open-in push.
                var (lab, x, y) = Self.lab(a, b)
                let pushed = lab.send(x, .share(target: b.app, contentType: "com.adobe.pdf", name: "q.pdf"), lab.document("q"))
                let e1 = try Self.explain(a.from + b.to + ["--channel", "open-in", "--type", "com.adobe.pdf"])
                #expect(pushed.outcome.map { ($0, pushed.decision!.rule) }.map { $0 == e1 } ?? (e1.0 == "filtered"),
                        "open-in \(a) → \(b): broker \(pushed.outcome ?? "\(String(describing: pushed.error))"), explain \(e1)")
                // Active import: b pulls from a.
                (lab, x, y) = Self.lab(a, b)
                lab.send(y, .importRequest(source: a.app, contentType: "com.adobe.pdf"), frameID: 3)
                if let request = lab.received(x).last?.frame, case .exportRequest = request.message {
                    lab.send(x, .exportReply(contentType: "com.adobe.pdf", name: "q.pdf"), lab.document("q"), frameID: request.id)
                }
                let imported = lab.received(y).filter { $0.frame.id == 3 }
                let e2 = try Self.explain(a.from + b.to + ["--channel", "import"])
                #expect(imported.outcome == e2.0 && imported.decision?.rule == e2.1, "import \(a) → \(b): broker \(imported.outcome ?? "-"), explain \(e2)")
                // Paste.
                (lab, x, y) = Self.lab(a, b)
                lab.send(x, .copy(text: "a long enough text", types: ["public.utf8-plain-text"]))
                let pasted = lab.send(y, .paste)
                let e3 = try Self.explain(a.from + b.to + ["--channel", "paste", "--text", "a long enough text"])
                #expect(pasted.outcome == e3.0 && pasted.decision?.rule == e3.1, "paste \(a) → \(b): broker \(pasted.outcome ?? "-"), explain \(e3)")
                compared += 3
            }
            // Save to a location with no account, and to OneDrive as the app's own account.
            for (bit, name) in [(32, "localDrive"), (1, "oneDriveForBusiness:adele@contoso.com")] {
                var (lab, x, _) = Self.lab(a, a)
                let account = bit == 1 ? "adele@contoso.com" : nil as String?
                let saved = lab.send(x, .saveTo(location: UInt8(bit), account: account, name: "f"), lab.document("f"))
                let e = try Self.explain(a.from + ["--channel", "save-to", "--location", name])
                if saved.error == .notAllowed { continue }  // an account this app has not signed in: refused before any decision
                #expect(saved.outcome == e.0 && saved.decision?.rule == e.1, "save-to \(name) by \(a): broker \(saved.outcome ?? "-"), explain \(e)")
                compared += 1
            }
        }
        #expect(compared >= 80, "every pair and channel was asked")
    }
}
