import Foundation
import MAMPolicy
import MAMTestSupport
import Testing

/// Random but valid policies, and every way of tightening one setting of them.
enum Generate {
    static func policy(_ g: inout SplitMix64) -> PolicySettings {
        var s = PolicySettings()
        s.send = SendLevel.allCases.randomElement(using: &g)!
        s.receive = ReceiveLevel.allCases.randomElement(using: &g)!
        s.clipboard = ClipboardLevel.allCases.randomElement(using: &g)!
        s.clipboardExceptionLength = [0, 3, 10].randomElement(using: &g)!
        s.saveAsBlocked = Bool.random(using: &g)
        s.allowedSaveLocations = SaveLocations(rawValue: Int.random(in: 0...255, using: &g))
        s.blockDataIngestionIntoOrganizationDocuments = Bool.random(using: &g)
        s.allowedIngestionLocations = OpenLocations(rawValue: Int.random(in: 0...63, using: &g))
        s.dialer = [DialerLevel.allApps, .managedApps, .blocked].randomElement(using: &g)!
        s.exemptedSchemes = Bool.random(using: &g) ? PolicySettings.defaultExemptedSchemes : ["chat"]
        if s.send == .managedApps {
            s.filterOpenInToOnlyManagedApps = Bool.random(using: &g)
            s.disableProtectionOfManagedOutboundOpenInData = Bool.random(using: &g)
        }
        if s.receive == .allApps { s.protectInboundDataFromUnknownSources = Bool.random(using: &g) }
        s.applyCouplings()
        return s
    }

    /// Each result is `s` with one setting made stricter, still a valid policy.
    static func tightenings(of s: PolicySettings) -> [(String, PolicySettings)] {
        var out: [(String, PolicySettings)] = []
        func add(_ name: String, _ change: (inout PolicySettings) -> Void) {
            var t = s
            change(&t)
            if t.send != .managedApps { t.filterOpenInToOnlyManagedApps = false; t.disableProtectionOfManagedOutboundOpenInData = false }
            if t.receive != .allApps { t.protectInboundDataFromUnknownSources = false }
            t.applyCouplings()
            if t != s { out.append((name, t)) }
        }
        for l in SendLevel.allCases where l > s.send { add("send \(l)") { $0.send = l } }
        for l in ReceiveLevel.allCases where l > s.receive { add("receive \(l)") { $0.receive = l } }
        for l in ClipboardLevel.allCases where l > s.clipboard { add("clipboard \(l)") { $0.clipboard = l } }
        if s.clipboardExceptionLength > 0 { add("no character exception") { $0.clipboardExceptionLength = 0 } }
        add("save-as blocked") { $0.saveAsBlocked = true }
        for l in s.allowedSaveLocations.locations { add("drop save \(l)") { $0.allowedSaveLocations.remove(SaveLocations(rawValue: l.rawValue)) } }
        add("open-into blocked") { $0.blockDataIngestionIntoOrganizationDocuments = true }
        for l in s.allowedIngestionLocations.locations { add("drop open \(l)") { $0.allowedIngestionLocations.remove(OpenLocations(rawValue: l.rawValue)) } }
        add("filter on") { if $0.send == .managedApps { $0.filterOpenInToOnlyManagedApps = true } }
        add("OS sharing off") { $0.disableProtectionOfManagedOutboundOpenInData = false }
        add("no exemptions") { $0.exemptedSchemes = [] }
        if s.dialer == .allApps { add("dialer managed") { $0.dialer = .managedApps } }
        if s.dialer != .blocked { add("dialer blocked") { $0.dialer = .blocked } }
        return out
    }
}

@Suite("Properties over generated policies and parties")
struct PropertyTests {
    static let parties: [(String, String?, Bool)] = [
        ("mail", Lab.adele, false), ("mail", Lab.adele, true), ("mail", "personal", true), ("docs", Lab.adele, false),
        ("docs", Lab.ben, false), ("legacy", nil, false), ("notes", nil, false), ("chat", nil, false), ("dialer", nil, false),
        ("msedge", nil, false), ("files", nil, false), ("mail", "dana@outlook.com", false),
    ]

    /// Every decision the engine makes, over every pair of parties, as (description, decision).
    static func allDecisions(_ lab: Lab) -> [(String, Decision)] {
        let ps = parties.map { lab.party($0.0, $0.1, alsoPersonal: $0.2) }
        let e = lab.engine
        let a = e.tenant.knownAccount(named: Lab.adele)
        var out: [(String, Decision)] = []
        for (i, from) in ps.enumerated() {
            for (j, to) in ps.enumerated() {
                let k = "\(i)->\(j)"
                out.append(("push \(k)", e.transfer(from: from, to: to, mode: .push)))
                out.append(("import \(k)", e.transfer(from: from, to: to, mode: .import)))
                out.append(("paste \(k)", e.paste(PasteboardItem(source: from, text: "four"), into: to)))
                out.append(("paste long \(k)", e.paste(PasteboardItem(source: from, length: 500), into: to)))
                out.append(("open-in \(k)", e.openIn(type: "com.adobe.pdf", from: from, to: to)))
                for url in ["contosodocs://x", "skype:x", "chat:x", "tel:1", "https://a", "notes://x"] {
                    out.append(("url \(url) \(k)", e.openURL(url, from: from, to: to)))
                }
            }
            for l in SaveLocation.allCases {
                out.append(("save \(l) \(i)", e.saveTo(l, account: l.takesAccount ? a : nil, owner: from)))
                out.append(("save \(l) nil \(i)", e.saveTo(l, account: nil, owner: from)))
            }
            for l in OpenLocation.allCases {
                out.append(("open \(l) \(i)", e.openFrom(l, account: l.takesAccount ? a : nil, receiver: from)))
                out.append(("open \(l) nil \(i)", e.openFrom(l, account: nil, receiver: from)))
            }
            out.append(("isURLAllowed \(i)", e.isURLAllowed("contosodocs://x", by: from)))
            out.append(("receive org \(i)", e.receive(by: from, owner: a, fromManagedSender: true, mode: .push)))
            out.append(("receive personal \(i)", e.receive(by: from, owner: nil, fromManagedSender: false, mode: .push)))
        }
        return out
    }

    @Test func tighteningOneSettingNeverAllowsWhatItBlocked() {
        var g = SplitMix64(state: 0x5EED_0001)
        var comparisons = 0
        for round in 0..<40 {
            let base = Generate.policy(&g)
            let before = Self.allDecisions(Lab(settings: base))
            for (name, stricter) in Generate.tightenings(of: base) {
                let after = Self.allDecisions(Lab(settings: stricter))
                // Readable delivery is what tightening must never grant: an encrypted document
                // arrives but cannot be read (Send = none still encrypts a forced Open-in, admin).
                func readable(_ o: Outcome) -> Bool { o.delivers && o != .encrypted }
                for (b, a) in zip(before, after) where !readable(b.1.outcome) {
                    comparisons += 1
                    #expect(!readable(a.1.outcome), "round \(round), \(name): \(b.0) was \(b.1), became \(a.1)")
                }
            }
        }
        #expect(comparisons > 10_000)
    }

    @Test func anUnmanagedPartyIsNeverRestricted() {
        var g = SplitMix64(state: 0x5EED_0002)
        for _ in 0..<60 {
            let lab = Lab(settings: Generate.policy(&g))
            let e = lab.engine
            let unmanaged = [lab.party("notes"), lab.party("mail", "personal"), lab.party("docs", Lab.ben), lab.party("mail", "dana@outlook.com")]
            let anyone = Self.parties.map { lab.party($0.0, $0.1, alsoPersonal: $0.2) }
            for u in unmanaged {
                #expect(!u.isManaged)
                for other in anyone {
                    #expect(e.send(from: u, to: other, mode: .push).outcome == .allowed)
                    #expect(e.send(from: u, to: other, mode: .import).outcome == .allowed)
                    #expect(e.receive(by: u, owner: nil, fromManagedSender: false, mode: .import).outcome == .allowed)
                    #expect(e.paste(PasteboardItem(source: other, text: "x"), into: u).outcome.delivers || other.isManaged)
                }
                #expect(e.isURLAllowed("anything://x", by: u).outcome == .allowed)
                for l in SaveLocation.allCases { #expect(e.saveTo(l, account: nil, owner: u).outcome == .allowed) }
                for l in OpenLocation.allCases { #expect(e.openFrom(l, account: nil, receiver: u).outcome == .allowed) }
                #expect(PolicyView(u) == PolicyView(lab.party("notes")))
            }
        }
    }

    @Test func decisionsAreDeterministicAcrossIndependentLoads() throws {
        // Two engines built from the same bytes answer every question the same way.
        let url = SamplePaths.policies.appendingPathComponent("tenant.json")
        func engine() throws -> Lab {
            var tenant = try MAMCatalogShim.tenant(url)
            tenant.reindex()
            return Lab(engine: PolicyEngine(tenant: tenant, apps: Lab.apps))
        }
        let first = Self.allDecisions(try engine()).map(\.1)
        let second = Self.allDecisions(try engine()).map(\.1)
        #expect(first == second)
        #expect(Set(first.map(\.outcome)).count >= 5, "the grid exercises most outcomes")
    }
}

import MAMCatalog

enum MAMCatalogShim {
    static func tenant(_ url: URL) throws -> Tenant { try Catalog.loadTenant(url.path).tenant }
}

extension Lab {
    init(engine: PolicyEngine) { self.engine = engine }
}
