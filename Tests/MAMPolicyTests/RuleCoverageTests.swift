import Foundation
import MAMPolicy
import MAMTestSupport
import Testing

@Suite("Rule coverage")
struct RuleCoverageTests {
    /// Every rule the engine knows is reachable: the grid of parties and channels, over
    /// generated policies and the device states that some rules need, produces each at least once.
    @Test func everyRuleOfSection4IsReachable() {
        var seen = Set<Rule>()
        for d in Self.sweep() {
            seen.insert(d.rule)
            if let r = d.senderRule { seen.insert(r) }
        }
        let missing = Rule.allCases.filter { !seen.contains($0) }
        #expect(missing.isEmpty, "never produced: \(missing)")
    }

    /// A decision's site is the engine's line that chose its rule: the file exists in the
    /// repository and that line names the rule, for every rule the engine decides by.
    @Test func everyDecisionNamesTheLineThatChoseItsRule() throws {
        // One line may choose between two rules (`wrapped ? .urlNoTwin : .urlNotHandled`).
        var sites: [DecisionSite: Set<Rule>] = [:]
        for d in Self.sweep() { sites[d.site, default: []].insert(d.rule) }
        var files: [String: [Substring]] = [:]
        for (site, rules) in sites {
            let rule = rules.first!
            #expect(site.file.hasPrefix("Sources/MAMPolicy/Decisions/"), "\(rule) decided at \(site)")
            let path = ModuleMapTests.root.appendingPathComponent(site.file).path
            if files[path] == nil { files[path] = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false) }
            let lines = files[path]!
            let line = Int(site.line) <= lines.count ? lines[Int(site.line) - 1] : ""
            for rule in rules { #expect(line.contains(".\(rule.rawValue)"), "\(rule) decided at \(site): \(line)") }
        }
        let decided = sites.values.reduce(into: Set<Rule>()) { $0.formUnion($1) }
        #expect(decided.count == Rule.allCases.count, "rules without a site: \(Set(Rule.allCases).subtracting(decided))")
    }

    /// Every decision of the rule-coverage grid, and the sender's checks on their own.
    static func sweep() -> [Decision] {
        var all: [Decision] = []
        var g = SplitMix64(state: 0x5EED_0003)
        var mdm = Device()
        mdm.mdmEnrolled = true
        mdm.mdmManagedApps = ["com.example.notes"]
        mdm.mdmUser = Lab(settings: PolicySettings()).engine.tenant.knownAccount(named: Lab.adele)
        for round in 0..<80 {
            var s = Generate.policy(&g)
            if round % 5 == 0 { s.managedBrowserRequired = true; s.customBrowserProtocol = round % 10 == 0 ? "contosobrowser" : nil }
            if round % 7 == 0 { s.dialer = .customApp; s.customDialerAppProtocol = "contosodial" }
            let lab = Lab(settings: s, device: round % 2 == 0 ? mdm : Device())
            all += PropertyTests.allDecisions(lab).map(\.1)
            let mail = lab.party("mail")
            all.append(lab.engine.isURLAllowed("unlisted://x", by: mail))
            all.append(lab.engine.openURL("::", from: mail, to: nil))
            // The sender's check alone: a transfer it lets through ends in the receiver's rule.
            let parties = PropertyTests.parties.map { lab.party($0.0, $0.1, alsoPersonal: $0.2) }
            for a in parties { for b in parties { all.append(lab.engine.send(from: a, to: b, mode: .push)) } }
            // §1.identity and §4.3.0: the decisions the broker asks about identities and an empty pasteboard.
            let tenant = lab.engine.tenant
            let adele = tenant.knownAccount(named: Lab.adele)!, ben = tenant.knownAccount(named: Lab.ben)!
            all.append(lab.engine.setIdentity(.account(adele), for: mail, signedIn: [adele]))
            all.append(lab.engine.setIdentity(.account(adele), for: lab.party("notes"), signedIn: [adele]))
            all.append(lab.engine.setIdentity(.account(ben), for: mail, signedIn: [adele]))
            let withBen = Lab(settings: s, ben: s)
            all.append(withBen.engine.setIdentity(.account(ben), for: withBen.party("mail", Lab.adele), signedIn: [adele, ben]))
            all.append(lab.engine.pasteFromEmptyPasteboard(into: mail))
            // §1.view: a view of several accounts, in a multi-identity app and a single-identity one.
            all.append(lab.engine.setViewIdentities([.account(adele), .personal], for: mail, signedIn: [adele]))
            all.append(lab.engine.setViewIdentities([.account(adele), .personal], for: lab.party("docs"), signedIn: [adele]))
        }
        return all
    }

    @Test func everyRuleHasAnIdATagAndAReason() {
        for rule in Rule.allCases {
            #expect(rule.id.hasPrefix("4.") || rule.id.hasPrefix("1."))
            #expect(!rule.summary.isEmpty)
        }
        // Blocking rules carry one of the messages of SEMANTICS §6.
        let messages = [UserMessage.sendNone, UserMessage.sendManaged, UserMessage.receiveNone, UserMessage.receiveManaged,
                        UserMessage.paste, "\(UserMessage.sharingTitle): \(UserMessage.sharing)", UserMessage.noHandler,
                        UserMessage.noDocumentHandler, UserMessage.identityRefused]
        for rule in Rule.allCases where !rule.message.isEmpty { #expect(messages.contains(rule.message), "\(rule)") }
    }
}
