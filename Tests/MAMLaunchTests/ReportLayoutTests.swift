import Foundation
import MAMTestSupport
import Testing

/// The HTML report an admin hands on, as Chromium lays it out: the framework run (the vendor's
/// three levels over the catalog's apps, with their diff) and a two-group tenant each fit a
/// 1,400 px window and an A4 or Letter page, print whole, and name what was run.
@Suite("the report fits the window and the page", .serialized)
struct ReportLayoutTests {
    static let levels = ["level-1-enterprise-basic-data-protection-iOS", "level-2-enterprise-enhanced-data-protection-iOS",
                         "level-3-enterprise-high-data-protection-iOS"]

    /// The narrowest printable width of the two papers at the page's 10 mm margins, in CSS px:
    /// A4, 190 mm. The print style is the narrow-window style, so fitting this window is
    /// fitting the paper.
    static let printableWidth = 718

    /// Renders `html` and checks what every report must: the widths, the printout, the header.
    static func checkLayout(_ html: String, names: [String]) throws {
        try HeadlessChromium.withPage(html) { browser in
            let wide = try browser.widths(atWindowWidth: 1400)
            #expect(wide.scroll <= 1400 && wide.widest <= 1400, "at 1,400 px the page is \(wide.scroll) px wide, its widest element ends at \(wide.widest)")
            let narrow = try browser.widths(atWindowWidth: Self.printableWidth)
            #expect(narrow.scroll <= Self.printableWidth && narrow.widest <= Self.printableWidth,
                    "at \(Self.printableWidth) px the page is \(narrow.scroll) px wide, its widest element ends at \(narrow.widest)")
            let printed = try browser.printed()
            #expect(printed.pages > 2, "\(printed.pages) pages")
            // Nothing runs off the paper: every word of every page ends inside it.
            #expect(printed.pageWidth > 0 && printed.rightmostWord <= printed.pageWidth,
                    "a word ends at \(printed.rightmostWord) pt on a page \(printed.pageWidth) pt wide")
            let text = printed.text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            for name in names + ["At a glance", "Every cell in words"] {
                #expect(text.contains(name), "the printout does not say \(name)")
            }
            // The last table of a wide heatmap is printed, and its last cell's line in words.
            let parts = html.components(separatedBy: "<caption>targets, part ").dropFirst().compactMap { $0.split(separator: "<").first }
            if let last = parts.last { #expect(text.contains("targets, part \(last)")) }
        }
    }

    @Test("the framework run with its three-level diff")
    func theFrameworkRun() async throws {
        let dir = try TwoUserTenantTests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("framework.html").path
        let files = Self.levels.flatMap { ["--policy", CommandRunner.root.appendingPathComponent("Policies/frameworks/\($0).json").path] }
        let r = try await CommandRunner.runOffPool(["matrix", "--predict", "--parties", "policy-apps"] + files + ["--diff"] + Self.levels + ["--out", out])
        try #require(r.status == 0, "\(r.stderr.suffix(1500))")
        let html = try String(contentsOfFile: out, encoding: .utf8)
        #expect(html.contains("<caption>targets, part 1 of "), "a wide heatmap is cut into tables")
        // What was run: the tenant, whom each level reaches, the catalog; the app group's resolution said.
        #expect(html.contains("<th>tenant</th>") && html.contains("Policies/contoso/tenant.json"))
        #expect(html.contains("groups sales: adele@contoso.com") && html.contains("<th>app catalog</th>"))
        #expect(html.contains("<th>device</th><td>iOS 17.5 on iPhone15,2; not jailbroken;"), "the device the run stands for")
        #expect(html.contains("The inputs drew") && html.contains("allCoreMicrosoftApps"))
        try Self.checkLayout(html, names: ["iOS/iPadOS Enterprise Basic Data Protection v1.2", "iOS/iPadOS Enterprise High Data Protection v1.2"])
    }

    @Test("a tenant with two groups under two levels")
    func aTwoGroupTenant() async throws {
        let dir = try TwoUserTenantTests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("tenant.html").path
        let r = try await CommandRunner.runOffPool(["matrix", "--predict", "--tenant", try TwoUserTenantTests.tenant(in: dir), "--out", out])
        try #require(r.status == 0, "\(r.stderr.suffix(1500))")
        let html = try String(contentsOfFile: out, encoding: .utf8)
        #expect(html.contains("groups sales: adele@contoso.com") && html.contains("groups finance: ben@contoso.com"), "both users named")
        try Self.checkLayout(html, names: ["Enhanced Data Protection", "High Data Protection", "ben@contoso.com"])
    }

    /// A misspelled key is only a warning for `matrix` (check --strict fails it): the report says
    /// so beside the results, and marks the setting it left at its default.
    @Test("a misspelled key's warning is in the report, and its setting is marked as the default")
    func aTypoIsInTheReport() async throws {
        let dir = try TwoUserTenantTests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let policy = dir.appendingPathComponent("typo.json").path
        try Data("""
            {"displayName": "Typo", "allowedOutbondDataTransferDestinations": "managedApps", "allowedOutboundClipboardSharingLevel": "blocked"}
            """.utf8).write(to: URL(fileURLWithPath: policy))
        let out = dir.appendingPathComponent("typo.html").path
        let r = try await CommandRunner.runOffPool(["matrix", "--predict", "--policy", policy, "--out", out])
        try #require(r.status == 0, "\(r.stderr.suffix(1500))")
        let html = try String(contentsOfFile: out, encoding: .utf8)
        #expect(html.contains("The inputs drew 1 warning") && html.contains("allowedOutbondDataTransferDestinations"), "\(r.stderr)")
        #expect(html.contains("<td>allowedOutboundDataTransferDestinations</td><td>allApps<span class=\"default\">default: the file does not set it</span></td>"))
        #expect(html.contains("<td>allowedOutboundClipboardSharingLevel</td><td>blocked</td>"))
    }
}
