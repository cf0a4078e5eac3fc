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
        for (rule, _) in Self.launchSweep() { seen.insert(rule) }
        let missing = Rule.allCases.filter { !seen.contains($0) }
        #expect(missing.isEmpty, "never produced: \(missing)")
    }

    /// A decision's site is the engine's line that chose its rule: the file exists in the
    /// repository and that line names the rule, for every rule the engine decides by.
    @Test func everyDecisionNamesTheLineThatChoseItsRule() throws {
        // One line may choose between two rules (`wrapped ? .urlNoTwin : .urlNotHandled`).
        var sites: [DecisionSite: Set<Rule>] = [:]
        for d in Self.sweep() { sites[d.site, default: []].insert(d.rule) }
        for (rule, site) in Self.launchSweep() { sites[site, default: []].insert(rule) }
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

    /// §9: launch checks over random requirements and devices; each verdict's rule and every
    /// finding, with the engine's line that chose it.
    static func launchSweep() -> [(Rule, DecisionSite)] {
        var out: [(Rule, DecisionSite)] = []
        var g = SplitMix64(state: 0x5EED_0009)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let versions = ["9", "12.4.4", "15", "17.5", "18.1"].compactMap(Version.init)
        func pick<T>(_ items: [T]) -> T { items[Int(g.next() % UInt64(items.count))] }
        for _ in 0..<400 {
            var s = PolicySettings()
            for path in [\LaunchRequirements.os, \.app, \.sdk] {
                s.launch[keyPath: path] = .init(warning: pick([nil] + versions), required: pick([nil] + versions), wipe: pick([nil] + versions))
            }
            s.launch.complianceAction = pick(LaunchAction.allCases)
            s.launch.maximumThreatLevel = pick(ThreatLevel.allCases)
            s.launch.allowedModels = pick([[], ["iPhone15"], ["iPad"]])
            s.launch.offlineWipeMinutes = pick([1440, 90 * 1440])
            let lab = Lab(settings: s)
            let device = DeviceProfile(os: pick(versions), model: pick(["iPhone15,2", "iPad13,1", "iPhone12,1"]), jailbroken: pick([true, false]),
                                       threatLevel: pick([.secured, .low, .high]),
                                       offlineSince: pick([nil, now.addingTimeInterval(-800 * 60), now.addingTimeInterval(-2 * 86400)]))
            let party = lab.party("mail")
            let v = lab.engine.launchCheck(app: party.bundleID, account: party.identity.account, device: device, appVersion: pick(versions),
                                           sdkVersion: pick(versions), now: now)
            out.append((v.rule, v.site))
            out += v.findings.map { ($0.rule, $0.site) }
            let none = lab.engine.launchCheck(app: party.bundleID, account: nil, device: device, now: now)
            out.append((none.rule, none.site))
            let standard = Lab(settings: PolicySettings()).engine.launchCheck(app: party.bundleID, account: party.identity.account,
                                                                             device: .standard, now: now)
            out.append((standard.rule, standard.site))
        }
        return out
    }

    @Test func everyRuleHasAnIdATagAndAReason() {
        for rule in Rule.allCases {
            #expect(rule.id.hasPrefix("4.") || rule.id.hasPrefix("1.") || rule.id.hasPrefix("9."))
            #expect(!rule.summary.isEmpty)
        }
        // Blocking rules carry one of the messages of SEMANTICS §6.
        let messages = [UserMessage.sendNone, UserMessage.sendManaged, UserMessage.receiveNone, UserMessage.receiveManaged,
                        UserMessage.paste, "\(UserMessage.sharingTitle): \(UserMessage.sharing)", UserMessage.noHandler,
                        UserMessage.noDocumentHandler, UserMessage.identityRefused, UserMessage.launchVersion, UserMessage.launchDevice,
                        UserMessage.launchOffline, UserMessage.launchWiped]
        for rule in Rule.allCases where !rule.message.isEmpty { #expect(messages.contains(rule.message), "\(rule)") }
    }
}
