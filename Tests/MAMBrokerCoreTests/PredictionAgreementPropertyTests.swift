import Foundation
import MAMBrokerCore
import MAMBrokerEmbedded
import MAMCatalog
import MAMMatrix
import MAMPolicy
import MAMTestSupport
import MAMWire
import Testing

/// The matrix's prediction and the broker's core answer every cell alike: random tenants
/// (several groups, overlapping assignments, policies that list apps or name an app group, random
/// settings), random parties (two accounts of one app included), every channel between running
/// apps. The broker is driven as the live matrix drives it: the apps launched with their
/// accounts, each acting under its party's identity, a paste between two accounts of one app
/// copied under the source's and pasted under the target's, a document between them sent to a
/// second process of the app. Outcome, rule and rule name must be equal, cell by cell: no rule
/// exists only in the broker.
@Suite("Prediction and broker agree on random tenants")
struct PredictionAgreementPropertyTests {
    static let users = ["adele@contoso.com", "ben@contoso.com", "carol@contoso.com"]
    static let groups = ["sales", "finance", "execs"]
    static let apps = CoreLab.sampleApps
    static let sdkApps = apps.filter(\.integratesSDK)
    static let catalog = (try? Catalog.loadCatalog(Catalog.builtInCatalogPath(root: CoreLab.root))) ?? []
    static let payload = Payload()

    /// Cells per run: MAMLAB_AGREEMENT_CELLS for a longer one.
    static let cellCount = ProcessInfo.processInfo.environment["MAMLAB_AGREEMENT_CELLS"].flatMap(Int.init) ?? 12_000

    @Test("prediction equals the broker's answer, cell by cell, over random tenants and parties")
    func predictionEqualsTheBroker() throws {
        var rng = SplitMix64(state: 0x34A6_2E11)
        var compared = 0, sameApp = 0
        var byChannel: [Channel: Int] = [:]
        var mismatches: [String] = []
        while compared < Self.cellCount {
            let tenant = Self.randomTenant(&rng)
            let predictor = Predictor(engine: PolicyEngine(tenant: tenant, apps: Self.apps), apps: Self.apps.map { ($0.bundleID, $0) })
            var lab = CoreLab(tenant: tenant, apps: Self.apps)
            // The device remembers whom each app enrolled: a cell that needs an app signed in to
            // other accounts is another device (a fresh broker), as in the live matrix.
            var device: [String: [String]] = [:]
            for _ in 0..<200 {
                let (cell, note) = Self.randomCell(&rng, tenant: tenant)
                guard let predicted = try? predictor.predict(cell, payload: Self.payload), predicted.note == nil else { continue }
                let wants = ([cell.source] + (cell.target.map { [$0] } ?? [])).map { ($0.app, $0.accounts) }
                if wants.contains(where: { w in device[w.0].map { $0 != w.1 } ?? false }) {
                    lab = CoreLab(tenant: tenant, apps: Self.apps)
                    device = [:]
                }
                for (app, accounts) in wants { device[app] = accounts }
                guard let answer = Self.run(cell, in: &lab) else { continue }
                compared += 1
                byChannel[cell.channel.channel, default: 0] += 1
                if cell.target.map({ $0.app == cell.source.app }) == true { sameApp += 1 }
                let same = answer.outcome == predicted.outcome.rawValue && answer.rule == predicted.rule && answer.ruleName == predicted.ruleName
                if !same && mismatches.count < 10 {
                    mismatches.append("\(note): predicted \(predicted.outcome.rawValue) \(predicted.rule) \(predicted.ruleName), broker \(answer.outcome) \(answer.rule) \(answer.ruleName)")
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))")
        // Every channel, and a share of cells between two accounts of one app, were tried.
        for channel in [Channel.paste, .openIn, .import, .saveTo, .openFrom] { #expect((byChannel[channel] ?? 0) > compared / 20, "\(channel): \(byChannel)") }
        #expect(sameApp > compared / 20, "\(sameApp) of \(compared) between two accounts of one app")
    }

    // MARK: the world

    static func randomTenant(_ rng: inout SplitMix64) -> Tenant {
        while true {
            let users = Self.users.map { upn in
                TenantUser(upn: upn, groups: Self.groups.filter { _ in rng.next() % 3 == 0 })
            }
            var policies: [Policy] = []
            for i in 0..<Int(1 + rng.next() % 3) {
                var p = Policy(id: "p\(i)", displayName: "Policy \(i)", settings: Self.randomSettings(&rng))
                switch rng.next() % 4 {
                case 0: p.appGroup = .allApps
                case 1: p.appGroup = .allCoreMicrosoftApps
                default: break
                }
                if p.appGroup != nil { p.appGroupOrigin = Origin(file: "tenant.json", path: "$.policies[\(i)].appGroupType") }
                p.targetedApps = Self.sdkApps.map { $0.bundleID.lowercased() }.filter { _ in rng.next() % 2 == 0 }
                p.includedGroups = [Self.groups[Int(rng.next() % 3)]]
                if rng.next() % 4 == 0 { p.allUsers = true }
                if rng.next() % 4 == 0 { p.excludedGroups = [Self.groups[Int(rng.next() % 3)]] }
                policies.append(p)
            }
            var tenant = Tenant(name: "contoso.com", users: users, groups: Self.groups, policies: policies)
            tenant.device.mdmEnrolled = rng.next() % 3 == 0
            _ = Catalog.resolveAppGroups(&tenant, entries: Self.catalog, installed: Self.apps.map { CatalogApp(name: $0.bundleID, manifest: $0, file: "") })
            // Two policies for one user in one app is an error at load; such a tenant is drawn again.
            if tenant.reindex().isEmpty { return tenant }
        }
    }

    static func randomSettings(_ rng: inout SplitMix64) -> PolicySettings {
        func pick<T>(_ all: [T]) -> T { all[Int(rng.next() % UInt64(all.count))] }
        var s = PolicySettings()
        s.send = pick(SendLevel.allCases)
        s.receive = pick(ReceiveLevel.allCases)
        s.clipboard = pick(ClipboardLevel.allCases)
        s.clipboardExceptionLength = pick([0, 0, 10, 200])
        s.filterOpenInToOnlyManagedApps = rng.next() % 3 == 0
        s.disableProtectionOfManagedOutboundOpenInData = rng.next() % 3 == 0
        s.protectInboundDataFromUnknownSources = rng.next() % 3 == 0
        s.saveAsBlocked = rng.next() % 2 == 0
        s.allowedSaveLocations = SaveLocations(rawValue: Int(rng.next() % 256))
        s.blockDataIngestionIntoOrganizationDocuments = rng.next() % 2 == 0
        s.allowedIngestionLocations = OpenLocations(rawValue: Int(rng.next() % 64))
        return s
    }

    /// A party: an app, its accounts (at most one user: an app holds one managed account; and
    /// maybe the personal account), and the identity it acts under.
    static func randomParty(_ rng: inout SplitMix64, app: AppManifest, accounts given: [String]? = nil) -> PartySpec {
        guard app.integratesSDK else { return PartySpec(name: app.bundleID, app: app.bundleID) }
        var accounts = given ?? []
        if given == nil {
            if rng.next() % 4 != 0 { accounts.append(Self.users[Int(rng.next() % UInt64(Self.users.count))]) }
            if app.isMultiIdentity && (accounts.isEmpty || rng.next() % 2 == 0) { accounts.append("personal") }
            if accounts.isEmpty { accounts = [Self.users[0]] }
        }
        let identity = accounts[Int(rng.next() % UInt64(accounts.count))]
        return PartySpec(name: "\(app.bundleID) (\(identity))", app: app.bundleID, accounts: accounts, identity: identity)
    }

    static func randomCell(_ rng: inout SplitMix64, tenant: Tenant) -> (Cell, String) {
        let channels: [Channel] = [.paste, .openIn, .import, .saveTo, .openFrom]
        let channel = channels[Int(rng.next() % UInt64(channels.count))]
        // A quarter of the cells go between two accounts of one multi-identity app (the same
        // accounts, another identity); the others to another app.
        let within = channel != .saveTo && rng.next() % 4 == 0
        let multi = Self.apps.filter(\.isMultiIdentity)
        let sourceApp = within ? multi[Int(rng.next() % UInt64(multi.count))] : Self.apps[Int(rng.next() % UInt64(Self.apps.count))]
        let source = within
            ? Self.randomParty(&rng, app: sourceApp, accounts: [Self.users[Int(rng.next() % UInt64(Self.users.count))], "personal"])
            : Self.randomParty(&rng, app: sourceApp)
        var target: PartySpec?
        if channel != .saveTo {
            if within {
                var t = source
                t.identity = source.accounts.first { $0 != source.identity }
                t.name = "\(sourceApp.bundleID) (\(t.identity!))"
                target = t
            } else {
                let others = Self.apps.filter { $0.bundleID != sourceApp.bundleID }
                target = Self.randomParty(&rng, app: others[Int(rng.next() % UInt64(others.count))])
            }
        }
        var spec = ChannelSpec(channel)
        let user = source.accounts.first { $0 != "personal" }
        if channel == .saveTo {
            let l = SaveLocation.allCases[Int(rng.next() % UInt64(SaveLocation.allCases.count))]
            guard !l.takesAccount || user != nil else { return randomCell(&rng, tenant: tenant) }
            spec = ChannelSpec(.saveTo, location: l.takesAccount ? "\(l.name):\(user!)" : l.name)
        } else if channel == .openFrom {
            let l = OpenLocation.allCases.filter { $0 != .camera }[Int(rng.next() % 5)]
            // The location's account must be one both parties signed in.
            guard !l.takesAccount || (user != nil && target!.accounts.contains(user!)) else { return randomCell(&rng, tenant: tenant) }
            spec = ChannelSpec(.openFrom, location: l.takesAccount ? "\(l.name):\(user!)" : l.name)
        }
        let cell = Cell(id: 0, policy: "random", channel: spec, source: source, target: target)
        return (cell, "\(source.name) \(spec) → \(target?.name ?? "-")")
    }

    // MARK: the broker, driven as the live matrix drives the apps

    struct Answer { var outcome: String, rule: String, ruleName: String }

    /// An app launched as the launcher does: its managed account, its personal one.
    static func start(_ p: PartySpec, _ lab: inout CoreLab) -> SessionID {
        let sdk = Self.apps.first { $0.bundleID == p.app }!.integratesSDK
        return lab.launch(p.app, account: sdk ? p.accounts.first { $0 != "personal" } : nil, personal: p.accounts.contains("personal"), sdk: sdk)
    }

    static func act(_ id: SessionID, as p: PartySpec, _ lab: inout CoreLab) {
        guard let identity = p.identity, Self.apps.first(where: { $0.bundleID == p.app })!.integratesSDK else { return }
        lab.send(id, .setIdentity(account: identity == "personal" ? "" : identity))
    }

    static func answer(_ frames: [EmbeddedShell.Delivered]) -> Answer? {
        frames.decision.map { Answer(outcome: WireOutcome.name(of: $0.outcome), rule: $0.rule, ruleName: $0.ruleName) }
    }

    /// The broker's answer for one cell; every session it opened is closed again.
    static func run(_ cell: Cell, in lab: inout CoreLab) -> Answer? {
        var opened: [SessionID] = []
        defer { for id in opened { lab.run(lab.core.handle(.disconnected(id))) } }
        let s = start(cell.source, &lab)
        opened.append(s)
        act(s, as: cell.source, &lab)
        let oneApp = cell.target?.app == cell.source.app
        var t = s
        if let target = cell.target, !(oneApp && cell.channel.channel != .openIn && cell.channel.channel != .import) {
            // Another app, or a second process of the same one for a document.
            t = start(target, &lab)
            opened.append(t)
            act(t, as: target, &lab)
        }
        let type = payload.documentType
        switch cell.channel.channel {
        case .paste:
            lab.send(s, .copy(text: payload.text, types: ["public.utf8-plain-text"]))
            if oneApp { act(s, as: cell.target!, &lab) }
            return answer(lab.send(t, .paste))
        case .openIn, .send, .receive:
            return answer(lab.send(s, .share(target: cell.target!.app, contentType: type, name: "q.pdf"), lab.document(payload.documentContent)))
        case .import:
            lab.send(t, .importRequest(source: cell.source.app, contentType: type), frameID: 3)
            guard let request = lab.received(s).last?.frame, case .exportRequest = request.message else { return nil }
            lab.send(s, .exportReply(contentType: type, name: "q.pdf"), lab.document(payload.documentContent), frameID: request.id)
            return answer(lab.received(t).filter { $0.frame.id == 3 })
        case .saveTo:
            let (name, account) = cell.channel.locationParts!
            let l = SaveLocation(name: name)!
            return answer(lab.send(s, .saveTo(location: UInt8(l.rawValue), account: account, name: "s\(lab.nextSession)"), lab.document(payload.documentContent)))
        case .openFrom:
            let (name, account) = cell.channel.locationParts!
            let open = OpenLocation(name: name)!
            let save = Predictor.saveLocation(for: open)!
            let file = "f\(lab.nextSession)-\(lab.shell.nextToken)"
            let saved = lab.send(s, .saveTo(location: UInt8(save.rawValue), account: account, name: file), lab.document(payload.documentContent))
            guard let decision = answer(saved), saved.decision?.allowed == true else { return answer(saved) }
            _ = decision
            if oneApp { act(s, as: cell.target!, &lab) }
            return answer(lab.send(t, .openFrom(location: UInt8(open.rawValue), account: account, name: file)))
        case .openURL, .login, .logout:
            return nil
        }
    }
}
