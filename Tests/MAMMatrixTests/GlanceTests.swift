import Foundation
import MAMMatrix
import MAMPolicy
import Testing

/// The report's first answer, per policy, against the sample tenant's policies as
/// docs/SEMANTICS.md decides them (the default experiment, predicted).
@Suite("Reports: the summary at a glance")
struct GlanceTests {
    static let report = ReportTests.report

    static func glance(_ policy: String) -> Glance { Glance(policy: policy, results: report.results) }

    static func reached(_ g: Glance, _ channel: String) -> [String] {
        g.unmanagedReached.first { $0.channel == channel }?.targets ?? []
    }

    @Test("Allow all: org data reaches the SDK-less Notes and Mail's personal account, by name and channel")
    func allowAllReachesTheUnmanagedApps() {
        let g = Self.glance("allow-all")
        #expect(Self.reached(g, "paste").contains("Notes") && Self.reached(g, "paste").contains("Mail (personal)"), "\(g.unmanagedReached)")
        #expect(Self.reached(g, "open-in").contains("Notes"))
        #expect(g.savedTo.contains("dropbox") && g.refusedSaves.isEmpty)
    }

    @Test("Managed only: no unmanaged app gets org data readable; an Open-in to Mail's personal account switches it to the org account, which is no reach")
    func managedOnlyReachesNone() {
        let g = Self.glance("managed-only")
        #expect(g.unmanagedReached.isEmpty, "\(g.unmanagedReached)")
        // The same cells are there: a switch, not a block.
        #expect(Self.report.results.contains { $0.cell.policy == "managed-only" && $0.cell.target?.name == "Mail (personal)" && $0.shown.outcome == .switched })
        #expect(g.savedTo == ["oneDriveForBusiness:adele@contoso.com"] && g.refusedSaves == ["dropbox"])
    }

    @Test("Locked down: links open only in the managed browser, rewritten; nothing can be saved")
    func lockedDownKeepsLinksAndFiles() {
        let g = Self.glance("locked-down")
        #expect(g.unmanagedReached.isEmpty)
        #expect(g.linksOpen.count == 1 && g.linksOpen[0].hasPrefix("Edge (adele) (as microsoft-edge-"), "\(g.linksOpen)")
        #expect(g.savedTo.isEmpty && g.refusedSaves.contains("dropbox"))
    }

    @Test("the page says it first: a row per policy before the heatmaps, the inputs and their warnings above it, defaults marked")
    func thePageLeadsWithTheGlanceAndItsInputs() throws {
        var report = Self.report
        report.inputs = RunInputs(tenant: "Policies/contoso/tenant.json",
                                  assignments: ["managed-only (Managed only): groups sales: adele@contoso.com"],
                                  catalog: "Policies/catalog/apps.json",
                                  warnings: ["typo.json:3:5 $.allowedOutbondDataTransferDestinations: unknown key"],
                                  device: DeviceProfile.standard.summary)
        report.policyInfo["managed-only"] = PolicyInfo(displayName: "Managed only", file: "m.json",
                                                       settings: ["allowedOutboundDataTransferDestinations": "managedApps", "saveAsBlocked": "false"],
                                                       defaults: ["saveAsBlocked"])
        let html = report.render(.html)
        let glance = try #require(html.range(of: "<h2 id=\"glance\">At a glance</h2>"))
        let firstHeatmap = try #require(html.range(of: "<table class=\"heat\""))
        #expect(glance.lowerBound < firstHeatmap.lowerBound)
        #expect(html.components(separatedBy: "<tr><td>").count - 1 >= report.policies.count)
        #expect(html.contains("<tr><td>allow-all</td><td>open-in: Notes"), "the glance row names the unmanaged app by channel")
        #expect(html.contains("<th>assigned</th><td>managed-only (Managed only): groups sales: adele@contoso.com</td>"))
        #expect(html.contains("<th>device</th><td>iOS 17.5 on iPhone15,2; not jailbroken; threat level secured; passcode set; no biometrics; online</td>"))
        #expect(html.contains("The inputs drew 1 warning") && html.contains("allowedOutbondDataTransferDestinations: unknown key"))
        #expect(html.contains("<td>saveAsBlocked</td><td>false<span class=\"default\">default: the file does not set it</span></td>"))
        #expect(html.contains("<td>allowedOutboundDataTransferDestinations</td><td>managedApps</td>"))
    }

    /// A target left off the share sheet because it does not open the type is not Open-in
    /// filtering: its square is a dash in lighter grey, and the legend says so.
    @Test("a target that does not open the type is told apart from Open-in filtering")
    func typeNotOpenedIsNotFiltering() throws {
        let results = Self.report.results
        let notType = try #require(results.first { $0.predicted.ruleName == Rule.openInTypeNotDeclared.rawValue }, "a cell whose target does not open the type")
        let filtered = try #require(results.first { $0.predicted.ruleName == Rule.sendNoneOpenInFiltered.rawValue }, "a cell filtered by the policy")
        let html = Self.report.render(.html)
        #expect(html.contains("<a class=\"sq\" href=\"#c\(notType.cell.id)\"><div class=\"cell o-filtered notype\" style=\"background:#d4d4d4\""))
        #expect(html.contains("<a class=\"sq\" href=\"#c\(filtered.cell.id)\"><div class=\"cell o-filtered\" style=\"background:#8d8d8d\""))
        #expect(html.contains("not offered: the app does not open the document's type"))
    }
}
