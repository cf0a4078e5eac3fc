import MAMPolicy
import MAMTestSupport
import Testing

@Suite("Rule coverage")
struct RuleCoverageTests {
    /// Every rule the engine knows is reachable: the grid of parties and channels, over
    /// generated policies and the device states that some rules need, produces each at least once.
    @Test func everyRuleOfSection4IsReachable() {
        var seen = Set<Rule>()
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
            for (_, d) in PropertyTests.allDecisions(lab) {
                seen.insert(d.rule)
                if let r = d.senderRule { seen.insert(r) }
            }
            let mail = lab.party("mail")
            seen.insert(lab.engine.isURLAllowed("unlisted://x", by: mail).rule)
            seen.insert(lab.engine.openURL("::", from: mail, to: nil).rule)
            // §1.identity and §4.3.0: the decisions the broker asks about identities and an empty pasteboard.
            let tenant = lab.engine.tenant
            let adele = tenant.knownAccount(named: Lab.adele)!, ben = tenant.knownAccount(named: Lab.ben)!
            seen.insert(lab.engine.setIdentity(.account(adele), for: mail, signedIn: [adele]).rule)
            seen.insert(lab.engine.setIdentity(.account(adele), for: lab.party("notes"), signedIn: [adele]).rule)
            seen.insert(lab.engine.setIdentity(.account(ben), for: mail, signedIn: [adele]).rule)
            let withBen = Lab(settings: s, ben: s)
            seen.insert(withBen.engine.setIdentity(.account(ben), for: withBen.party("mail", Lab.adele), signedIn: [adele, ben]).rule)
            seen.insert(lab.engine.pasteFromEmptyPasteboard(into: mail).rule)
        }
        let missing = Rule.allCases.filter { !seen.contains($0) }
        #expect(missing.isEmpty, "never produced: \(missing)")
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
