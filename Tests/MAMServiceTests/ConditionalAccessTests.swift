import Foundation
import MAMPolicy
import MAMService
import MAMTestSupport
import Testing

@Suite("App Protection conditional access")
struct ConditionalAccessTests {
    /// One row of seed 003's "Test cases" table, played through the token endpoint and a remediation.
    struct SeedRow: Sendable, CustomTestStringConvertible {
        var name: String
        var user: String
        var oid: String
        /// False: the user is targeted by CA only after a first token was granted (a tenant reload).
        var targetedFromTheStart: Bool
        var enrolledBefore: Bool
        var tokenBefore: TokenDecision.Outcome
        var status: ComplianceStatus
        var enrolls: Bool
        var tokenAfter: TokenDecision.Outcome
        var testDescription: String { name }
    }

    static let seedRows: [SeedRow] = [
        SeedRow(name: "seed 003 §Exit criteria, Test cases: \"MAM-CA always applied\" — targeted for CA and MAM before enrolling; remediation, then a token",
                user: "ben@contoso.com", oid: CALab.benOID, targetedFromTheStart: true, enrolledBefore: false,
                tokenBefore: .protectionPolicyRequired, status: .compliant, enrolls: true, tokenAfter: .granted),
        SeedRow(name: "seed 003 §Exit criteria, Test cases: \"MAM-CA applied after user enrolled\" — logged in and enrolled, then targeted for CA",
                user: "ben@contoso.com", oid: CALab.benOID, targetedFromTheStart: false, enrolledBefore: true,
                tokenBefore: .granted, status: .compliant, enrolls: false, tokenAfter: .granted),
        SeedRow(name: "seed 003 §Exit criteria, Test cases: \"MAM-CA applied after user enrolled\" — logged in, not yet enrolled, then targeted for CA",
                user: "ben@contoso.com", oid: CALab.benOID, targetedFromTheStart: false, enrolledBefore: false,
                tokenBefore: .protectionPolicyRequired, status: .compliant, enrolls: true, tokenAfter: .granted),
        SeedRow(name: "seed 003 §Exit criteria, Test cases: \"MAM-CA noncompliance\" — a CA policy but no MAM policy: never a token",
                user: "cleo@contoso.com", oid: CALab.cleoOID, targetedFromTheStart: true, enrolledBefore: false,
                tokenBefore: .protectionPolicyRequired, status: .notCompliant, enrolls: false, tokenAfter: .protectionPolicyRequired),
    ]

    @Test(arguments: seedRows)
    func seed003TestCases(_ row: SeedRow) throws {
        let targeted = CALab.section(groups: ["finance", "legal"])
        var manager = ComplianceManager(access: try CALab.access(row.targetedFromTheStart ? targeted : CALab.section(groups: ["sales"])))
        var device = AppsOnDevice()
        let account = manager.access.account(named: row.user)
        if row.enrolledBefore { device.enrolled[CALab.mail] = account }
        if !row.targetedFromTheStart {
            let first = manager.access.token(for: account, app: device.facts(CALab.mail))
            #expect(first.outcome == .granted && first.reason == .notTargeted, "\(first)")
            manager.reload(try CALab.access(targeted))
        }

        let before = manager.access.token(for: account, app: device.facts(CALab.mail))
        #expect(before.outcome == row.tokenBefore, "\(before)")
        #expect(before.policy == (row.tokenBefore == .protectionPolicyRequired ? "Require app protection policy" : before.policy))
        // Seed 003: the app splits the home account id on "." and remediates the object id.
        let accountId: String
        if before.outcome == .protectionPolicyRequired {
            #expect(before.homeAccountId == "\(row.oid).\(CALab.tenantId)")
            accountId = String(try #require(before.homeAccountId?.split(separator: ".").first))
        } else {
            #expect(before.homeAccountId == nil)
            accountId = row.oid
        }

        let asked = manager.request(app: CALab.mail, accountId: accountId, silent: false, now: .zero)
        #expect(asked.outcome == .started)
        #expect(manager.isRemediationInProgress(app: CALab.mail, accountId: row.user))
        let results = manager.advance(now: ComplianceManager.defaultDuration) { device.facts($0) }
        #expect(results.count == 1)
        let result = try #require(results.first)
        #expect(result.accountId == row.oid)
        #expect(result.status == row.status, "\(result)")
        #expect(result.outcome.enrolls == row.enrolls)
        #expect(!result.outcome.title.isEmpty && !result.outcome.message.isEmpty)
        #expect(!manager.isRemediationInProgress(app: CALab.mail, accountId: row.user))
        device.apply(results)

        let after = manager.access.token(for: account, app: device.facts(CALab.mail))
        #expect(after.outcome == row.tokenAfter, "\(after)")
    }

    @Test func theStatusesCarryTheSDKsRawValues() {
        // The headers' IntuneMAMComplianceStatus.
        #expect(ComplianceStatus.allCases.map { "\($0)" } == [
            "compliant (0)", "notCompliant (1)", "serviceFailure (2)", "networkFailure (3)", "interactionRequired (4)", "userCancelled (5)",
        ])
    }

    /// Every status a test can force, with the exact title and message the delegate carries.
    static let forcedRows: [(ComplianceStatus, String, String)] = [
        (.compliant, "Access confirmed", "This app now protects ben@contoso.com's work data, and the account can reach it."),
        (.notCompliant, "Access blocked", "Your organization's protection policy could not be applied for ben@contoso.com in this app."),
        (.serviceFailure, "Service unavailable", "The protection service could not check this app for ben@contoso.com. Try again later."),
        (.networkFailure, "No connection", "The protection service could not be reached. Try again when you are online."),
        (.interactionRequired, "Sign-in required", "Sign in as ben@contoso.com to finish protecting this app."),
        (.userCancelled, "Sign-in cancelled", "The sign-in was cancelled, so this app cannot reach ben@contoso.com's work data."),
    ]

    @Test(arguments: forcedRows)
    func theTenantForcesEachOutcome(_ status: ComplianceStatus, _ title: String, _ message: String) throws {
        let access = try CALab.access(CALab.section(groups: ["finance"], extra: #", "forceRemediation": {"ben@contoso.com": "\#(status.name)"}"#))
        var manager = ComplianceManager(access: access, duration: .milliseconds(5))
        #expect(manager.request(app: CALab.mail, accountId: CALab.benOID, silent: true, now: .zero).outcome == .started)
        let result = try #require(manager.advance(now: .milliseconds(5)) { AppsOnDevice().facts($0) }.first)
        #expect(result.status == status)
        #expect(result.outcome.reason == .forced)
        #expect(result.outcome.title == title)
        #expect(result.outcome.message == message)
        // Only a forced compliant enrolls; nothing else may leave the account managed.
        #expect(result.outcome.enrolls == (status == .compliant))
        #expect(result.outcome.detail.hasPrefix("the tenant forces silent remediations of ben@contoso.com to end \(status.name) (t.json:"))
    }

    @Test func aSilentRemediationNeedingTheUserIsAskedAgainInteractively() throws {
        // Seed 003's delegate sample: on interactionRequired, call again with silent = NO.
        let access = try CALab.access(CALab.section(groups: ["finance"],
                                                    extra: #", "forceRemediation": {"ben@contoso.com": "interactionRequired"}"#))
        var manager = ComplianceManager(access: access)
        var device = AppsOnDevice()
        _ = manager.request(app: CALab.mail, accountId: CALab.benOID, silent: true, now: .zero)
        let silent = manager.advance(now: .seconds(1)) { device.facts($0) }
        #expect(silent.map(\.status) == [.interactionRequired])
        _ = manager.request(app: CALab.mail, accountId: CALab.benOID, silent: false, now: .seconds(2))
        let interactive = manager.advance(now: .seconds(3)) { device.facts($0) }
        #expect(interactive.map(\.status) == [.compliant])
        #expect(interactive.first?.outcome.reason == .enrolledByRemediation)
        device.apply(interactive)
        #expect(access.token(for: access.account(named: "ben@contoso.com"), app: device.facts(CALab.mail)).outcome == .granted)
    }

    @Test func silentAndInteractiveAreForcedApart() throws {
        let access = try CALab.access(CALab.section(groups: ["finance"], extra: """
            , "forceRemediation": {"\(CALab.benOID)": {"silent": "networkFailure", "interactive": "userCancelled"}}
            """))
        var manager = ComplianceManager(access: access, duration: .zero)
        _ = manager.request(app: CALab.mail, accountId: "ben@contoso.com", silent: true, now: .zero)
        #expect(manager.advance(now: .zero) { AppsOnDevice().facts($0) }.map(\.status) == [.networkFailure])
        _ = manager.request(app: CALab.mail, accountId: "ben@contoso.com", silent: false, now: .zero)
        #expect(manager.advance(now: .zero) { AppsOnDevice().facts($0) }.map(\.status) == [.userCancelled])
    }

    @Test func remediationsForSeveralAccountsQueueAndRunOneAtATime() throws {
        var manager = ComplianceManager(access: try CALab.access(CALab.section(groups: ["finance", "sales", "legal"])))
        let ben = manager.request(app: CALab.mail, accountId: CALab.benOID, silent: true, now: .zero)
        let cleo = manager.request(app: CALab.mail, accountId: "cleo@contoso.com", silent: true, now: .milliseconds(10))
        let adele = manager.request(app: CALab.mail, accountId: CALab.adeleOID, silent: true, now: .milliseconds(20))
        #expect([ben, cleo, adele].map(\.outcome) == [.started, .queued, .queued])
        #expect([ben, cleo, adele].map(\.position) == [0, 1, 2])
        #expect(manager.progress(app: CALab.mail, accountId: "ben@contoso.com") == .running(since: .zero))
        #expect(manager.progress(app: CALab.mail, accountId: CALab.cleoOID) == .queued(position: 1))
        #expect(manager.nextDeadline == .seconds(1))
        // Another app's remediation does not wait behind Mail's.
        #expect(manager.request(app: "com.contoso.docs", accountId: CALab.benOID, silent: true, now: .zero).outcome == .started)

        var device = AppsOnDevice()
        let first = manager.advance(now: .milliseconds(1500)) { device.facts($0) }
        #expect(first.map { "\($0.app) \($0.account) \($0.status.name) \($0.finishedAt)" }
            == ["com.contoso.docs ben@contoso.com notCompliant 1.0 seconds", "com.contoso.mail ben@contoso.com compliant 1.0 seconds"])
        device.apply(first)
        #expect(manager.progress(app: CALab.mail, accountId: CALab.cleoOID) == .running(since: .seconds(1)))
        let rest = manager.advance(now: .seconds(10)) { device.facts($0) }
        // Cleo has no MAM policy; adele is refused because ben is Mail's one managed account now.
        #expect(rest.map { "\($0.account) \($0.status.name) \($0.outcome.reason.id) \($0.finishedAt)" }
            == ["cleo@contoso.com notCompliant ca.noAppProtectionPolicy 2.0 seconds",
                "adele@contoso.com notCompliant ca.otherAccountEnrolled 3.0 seconds"])
        #expect(manager.nextDeadline == nil)
        #expect(!manager.isRemediationInProgress(app: CALab.mail, accountId: CALab.adeleOID))
    }

    @Test func aRepeatForAnAccountAlreadyRunningOrWaitingIsDropped() throws {
        var manager = ComplianceManager(access: try CALab.access(CALab.section(groups: ["finance", "sales"])))
        #expect(manager.request(app: CALab.mail, accountId: CALab.benOID, silent: true, now: .zero).outcome == .started)
        // The same account by its UPN, in another case, and interactive this time: still a repeat.
        let repeatRunning = manager.request(app: CALab.mail, accountId: "BEN@contoso.com", silent: false, now: .zero)
        #expect(repeatRunning.outcome == .dropped && repeatRunning.reason == .duplicate)
        #expect(repeatRunning.detail == "a remediation for ben@contoso.com in com.contoso.mail is already running; the repeat is dropped")
        #expect(manager.request(app: CALab.mail, accountId: "adele@contoso.com", silent: true, now: .zero).outcome == .queued)
        let repeatWaiting = manager.request(app: CALab.mail, accountId: CALab.adeleOID, silent: true, now: .zero)
        #expect(repeatWaiting.outcome == .dropped && repeatWaiting.position == 1)
        #expect(manager.remediations(app: CALab.mail).count == 2)
        let done = manager.advance(now: .seconds(5)) { AppsOnDevice().facts($0) }
        #expect(done.count == 2)
        #expect(done.first?.remediation.silent == true)
        // Once finished, the account may be remediated again.
        #expect(manager.request(app: CALab.mail, accountId: CALab.benOID, silent: true, now: .seconds(5)).outcome == .started)
    }

    @Test func theQueueIsBoundedAndAnEmptyAccountIsRefused() throws {
        var manager = ComplianceManager(access: try CALab.access(nil))
        let empty = manager.request(app: CALab.mail, accountId: "  ", silent: true, now: .zero)
        #expect(empty.outcome == .refused && empty.reason == .invalidAccountId)
        for i in 0...ComplianceManager.maximumQueued {
            #expect(manager.request(app: CALab.mail, accountId: "user\(i)@fabrikam.com", silent: true, now: .zero).outcome != .refused)
        }
        let full = manager.request(app: CALab.mail, accountId: "one-more@fabrikam.com", silent: true, now: .zero)
        #expect(full.outcome == .refused && full.reason == .queueFull)
        #expect(full.detail == "com.contoso.mail already has 16 remediations waiting")
        // An account the tenant does not know is not compliant.
        let first = try #require(manager.advance(now: .seconds(1)) { AppsOnDevice().facts($0) }.first)
        #expect(first.status == .notCompliant && first.outcome.reason == .notATenantUser)
        #expect(first.outcome.message == "user0@fabrikam.com is not an account of contoso.com.")
    }

    @Test func anAppThatEndsTakesItsRemediationsWithIt() throws {
        var manager = ComplianceManager(access: try CALab.access(CALab.section(groups: ["finance", "sales"])))
        _ = manager.request(app: CALab.mail, accountId: CALab.benOID, silent: true, now: .zero)
        _ = manager.request(app: CALab.mail, accountId: CALab.adeleOID, silent: true, now: .zero)
        #expect(manager.appEnded("COM.contoso.mail").map(\.accountId) == [CALab.benOID, CALab.adeleOID])
        #expect(manager.advance(now: .seconds(9)) { AppsOnDevice().facts($0) }.isEmpty)
        #expect(manager.progress(app: CALab.mail, accountId: CALab.benOID) == RemediationProgress.none)
    }

    @Test func theTokenEndpointSaysWhyForEveryAnswer() throws {
        let access = try CALab.access(CALab.section(groups: ["finance", "legal"]))
        let ben = access.account(named: CALab.benOID)
        func token(_ account: Account, _ device: AppsOnDevice = AppsOnDevice(), app: String = CALab.mail) -> String {
            let t = access.token(for: account, app: device.facts(app))
            return "\(t.outcome.rawValue) \(t.reason.id) \(t.reason.tag.rawValue)"
        }
        #expect(token(access.account(named: "adele@contoso.com")) == "granted ca.notTargeted doc")
        #expect(token(access.account(named: "eve@fabrikam.com")) == "granted ca.unknownAccount chosen")
        #expect(token(ben) == "protectionPolicyRequired ca.notEnrolled doc")
        #expect(token(ben, AppsOnDevice(enrolled: [CALab.mail: ben])) == "granted ca.appProtected doc")
        #expect(token(ben, AppsOnDevice(enrolled: [CALab.mail: access.account(named: "adele@contoso.com")]))
            == "protectionPolicyRequired ca.otherAccountEnrolled chosen")
        #expect(token(ben, AppsOnDevice(withoutSDK: [CALab.mail])) == "protectionPolicyRequired ca.noSDK doc")
        #expect(token(ben, AppsOnDevice(withoutProtApp: [CALab.mail])) == "refused ca.noProtAppCapability doc")
        #expect(token(ben, app: "com.contoso.docs") == "protectionPolicyRequired ca.noAppProtectionPolicy doc")
        let t = access.token(for: ben, app: AppsOnDevice().facts(CALab.mail))
        #expect(t.description == #"protectionPolicyRequired (ca.notEnrolled [doc]): "Require app protection policy" requires app protection: "Mail MAM" targets ben@contoso.com for com.contoso.mail, but the account is not enrolled in the app yet"#)
    }

    @Test func reportOnlyAndDisabledPoliciesGrantTokens() throws {
        let report = try CALab.access(CALab.section(groups: ["finance"], state: "enabledForReportingButNotEnforced"))
        let t = report.token(for: report.account(named: "ben@contoso.com"), app: AppsOnDevice().facts(CALab.mail))
        #expect(t.outcome == .granted && t.reason == .reportOnly)
        #expect(t.detail.hasPrefix("\"Require app protection policy\" is report-only; it would require app protection: "))
        let disabled = try CALab.access(CALab.section(groups: ["finance"], state: "disabled"))
        #expect(disabled.token(for: disabled.account(named: "ben@contoso.com"), app: AppsOnDevice().facts(CALab.mail)).reason == .notTargeted)
    }

    @Test func exclusionsWinOverInclusions() throws {
        let access = try CALab.access("""
            {"tenantId": "\(CALab.tenantId)", "policies": [{"displayName": "Everyone but cleo", "state": "enabled",
              "conditions": {"users": {"includeUsers": ["All"], "excludeUsers": ["cleo@contoso.com"], "excludeGroups": ["sales"]}},
              "grantControls": {"builtInControls": ["compliantApplication"]}}]}
            """)
        #expect(access.policy(for: access.account(named: "ben@contoso.com"))?.displayName == "Everyone but cleo")
        #expect(access.policy(for: access.account(named: CALab.cleoOID)) == nil)
        #expect(access.policy(for: access.account(named: "adele@contoso.com")) == nil)
    }
}

@Suite("Compliance remediation queue")
struct ComplianceQueueTests {
    typealias Seeded = SplitMix64

    /// Random requests, repeats, app ends and clock steps: every accepted remediation is answered
    /// exactly once, in the order its app accepted it, one per app at a time and each a full
    /// duration after the one before; a repeat is dropped exactly when the account is running or waiting.
    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func everyAcceptedRemediationIsAnsweredOnceInOrder(seed: UInt64) throws {
        var rng = Seeded(state: seed)
        var manager = ComplianceManager(access: try CALab.access(CALab.section(groups: ["finance", "sales", "legal"])),
                                        duration: .milliseconds(300))
        let apps = [CALab.mail, "com.contoso.docs", "com.example.notes"]
        let accounts = ["ben@contoso.com", CALab.benOID, "adele@contoso.com", "cleo@contoso.com", "eve@fabrikam.com"]
        var device = AppsOnDevice()
        var now = Duration.zero
        var accepted: [String: [Account]] = [:]
        var answered: [String: [Account]] = [:]
        var lastFinish: [String: Duration] = [:]
        for _ in 0..<400 {
            let app = apps.randomElement(using: &rng)!
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<6:
                let name = accounts.randomElement(using: &rng)!
                let before = manager.remediations(app: app).map(\.account)
                let d = manager.request(app: app, accountId: name, silent: Bool.random(using: &rng), now: now)
                let account = manager.access.account(named: name)
                #expect((d.outcome == .dropped) == before.contains(account))
                #expect((d.outcome == .started) == before.isEmpty)
                if d.outcome == .started || d.outcome == .queued { accepted[app, default: []].append(account) }
                #expect(manager.isRemediationInProgress(app: app, accountId: name))
            case 6:
                let dropped = manager.appEnded(app).map(\.account)
                let done = answered[app, default: []].count
                #expect(Array(accepted[app, default: []].dropFirst(done)) == dropped)
                accepted[app] = Array(accepted[app, default: []].prefix(done))
            default:
                now += .milliseconds(Int64.random(in: 0...700, using: &rng))
                let results = manager.advance(now: now) { device.facts($0) }
                device.apply(results)
                for r in results {
                    let key = r.app
                    answered[key, default: []].append(r.account)
                    #expect(r.finishedAt <= now)
                    if let last = lastFinish[key] { #expect(r.finishedAt >= last + manager.duration) }
                    lastFinish[key] = r.finishedAt
                }
            }
            for a in apps {
                let lane = manager.remediations(app: a)
                #expect(Set(lane.map(\.account)).count == lane.count)
                #expect(lane.enumerated().allSatisfy { ($0.offset == 0) == ($0.element.startedAt != nil) })
            }
        }
        _ = manager.advance(now: now + .seconds(3600)) { device.facts($0) }.map { answered[$0.app, default: []].append($0.account) }
        for a in apps { #expect(answered[a, default: []] == accepted[a, default: []]) }
    }

    @Test func aRemediationUnderWayFinishesUnderTheReloadedTenant() throws {
        var manager = ComplianceManager(access: try CALab.access(CALab.section(groups: ["finance"])))
        _ = manager.request(app: CALab.mail, accountId: CALab.benOID, silent: true, now: .zero)
        manager.reload(try CALab.access(CALab.section(groups: ["finance"], extra: #", "forceRemediation": {"ben@contoso.com": "serviceFailure"}"#)))
        #expect(manager.advance(now: .seconds(1)) { AppsOnDevice().facts($0) }.map(\.status) == [.serviceFailure])
    }

    @Test func aReloadThatReordersUsersKeepsEachRemediationWithItsAccount() throws {
        var manager = ComplianceManager(access: try CALab.access(CALab.section(groups: ["finance", "legal"])))
        _ = manager.request(app: CALab.mail, accountId: CALab.benOID, silent: true, now: .zero)
        _ = manager.request(app: CALab.mail, accountId: "cleo@contoso.com", silent: true, now: .zero)
        // The same users, cleo first: ben's user index changes.
        let reordered = CALab.tenantJSON(CALab.section(groups: ["finance", "legal"]))
            .replacingOccurrences(of: #"[{"upn": "adele@contoso.com""#, with: #"[{"upn": "cleo@contoso.com", "oid": "\#(CALab.cleoOID)", "groups": ["legal"]}, {"upn": "adele@contoso.com""#)
            .replacingOccurrences(of: #",\#n          {"upn": "cleo@contoso.com", "oid": "\#(CALab.cleoOID)", "groups": ["legal"]}"#, with: "")
        let data = Data(reordered.utf8)
        let tenant = try TenantFile.load(data, file: "t.json") { _ in throw LoadFailure([]) }.tenant
        #expect(tenant.users.map(\.upn) == ["cleo@contoso.com", "adele@contoso.com", "ben@contoso.com"])
        manager.reload(ConditionalAccess(tenant: tenant, settings: try ConditionalAccessFile.load(data, file: "t.json", tenant: tenant).settings))
        #expect(manager.request(app: CALab.mail, accountId: "ben@contoso.com", silent: true, now: .zero).outcome == .dropped)
        let done = manager.advance(now: .seconds(2)) { AppsOnDevice().facts($0) }
        #expect(done.map { "\($0.account) \($0.status.name)" } == ["ben@contoso.com compliant", "cleo@contoso.com notCompliant"])
    }

    @Test func anOverlongAccountIdIsRefused() throws {
        var manager = ComplianceManager(access: try CALab.access(nil))
        let d = manager.request(app: CALab.mail, accountId: String(repeating: "a", count: 300), silent: true, now: .zero)
        #expect(d.outcome == .refused && d.reason == .invalidAccountId)
        #expect(d.detail == "an account id is at most 256 bytes; this one has 300")
    }
}

extension ConditionalAccessTests {
    @Test func everyDecisionGivesTheAuditItsLine() throws {
        var manager = ComplianceManager(access: try CALab.access(CALab.section(groups: ["finance"])))
        let ben = manager.access.account(named: CALab.benOID)
        #expect(manager.access.token(for: ben, app: AppsOnDevice().facts(CALab.mail)).audit.description
            == #"ca.token com.contoso.mail ben@contoso.com: protectionPolicyRequired (ca.notEnrolled [doc]) "Require app protection policy" requires app protection: "Mail MAM" targets ben@contoso.com for com.contoso.mail, but the account is not enrolled in the app yet"#)
        #expect(manager.request(app: CALab.mail, accountId: CALab.benOID, silent: false, now: .zero).audit.description
            == "ca.remediate com.contoso.mail ben@contoso.com: started (ca.remediation.started [doc]) the interactive remediation for ben@contoso.com in com.contoso.mail runs now")
        let result = try #require(manager.advance(now: .seconds(1)) { AppsOnDevice().facts($0) }.first)
        #expect(result.audit.description
            == #"ca.compliance com.contoso.mail \#(CALab.benOID): compliant (ca.remediation.enrolled [doc]) "Mail MAM" targets ben@contoso.com for com.contoso.mail, but the account is not enrolled in the app yet; the remediation enrolls it, as register-and-enroll would"#)
    }
}
