import Foundation
import MAMBrokerCore
import MAMBrokerEmbedded
import MAMCatalog
import MAMMatrix
import MAMMatrixEmbedded
import MAMPolicy
import MAMTestSupport
import MAMWire
import Testing

/// The matrix's prediction and its embedded run answer every cell alike: random tenants (several
/// groups, overlapping assignments, policies that list apps or name an app group, random
/// settings), random parties (two accounts of one app included), every channel between running
/// apps. The embedded run is the matrix's own (EmbeddedMatrix: its plan, schedule, cell logic and
/// judging, on the broker's core in memory): the apps launched with their accounts, each acting
/// under its party's identity, a paste between two accounts of one app copied under the source's
/// and pasted under the target's, a document between them sent to a second process of the app,
/// two users' copies of an app on devices of their own. Outcome, rule and rule name must be
/// equal and the broker's records agree, cell by cell: no rule exists only in the broker.
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

    @Test("prediction equals the embedded matrix's answer, cell by cell, over random tenants and parties")
    func predictionEqualsTheBroker() throws {
        var rng = SplitMix64(state: 0x34A6_2E11)
        var compared = 0, sameApp = 0
        var byChannel: [Channel: Int] = [:]
        var mismatches: [String] = []
        while compared < Self.cellCount {
            let tenant = Self.randomTenant(&rng)
            let predictor = Predictor(engine: PolicyEngine(tenant: tenant, apps: Self.apps), apps: Self.apps.map { ($0.bundleID, $0) })
            var cells: [Cell] = []
            var notes: [String] = []
            for n in 0..<200 {
                var (cell, note) = Self.randomCell(&rng, tenant: tenant)
                cell.id = n
                cells.append(cell)
                notes.append(note)
            }
            // Cells the engine cannot even build parties for are not compared.
            let predicted = MatrixPrediction.run(cells, predictors: ["random": predictor], payload: Self.payload)
            let matrix = EmbeddedMatrix(tenants: ["random": tenant], apps: Self.apps.map { ([$0.bundleID], $0) }, payload: Self.payload)
            for (i, r) in matrix.run(predicted).enumerated() where predicted[i].predicted.note == nil {
                compared += 1
                byChannel[r.cell.channel.channel, default: 0] += 1
                if r.cell.target.map({ $0.app == r.cell.source.app }) == true { sameApp += 1 }
                guard let live = r.live else { continue }
                let same = live.outcome == r.predicted.outcome && live.rule == r.predicted.rule && live.ruleName == r.predicted.ruleName
                    && (live.recordDisagreements ?? []).isEmpty
                if !same && mismatches.count < 10 {
                    mismatches.append("\(notes[i]): predicted \(r.predicted.outcome.rawValue) \(r.predicted.rule) \(r.predicted.ruleName), "
                        + "embedded \(live.outcome.rawValue) \(live.rule) \(live.ruleName) \(live.note ?? "")")
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))")
        // Every channel, and a share of cells between two accounts of one app, were tried.
        for channel in [Channel.paste, .openIn, .import, .saveTo, .openFrom] { #expect((byChannel[channel] ?? 0) > compared / 20, "\(channels(byChannel))") }
        #expect(sameApp > compared / 20, "\(sameApp) of \(compared) between two accounts of one app")
    }

    func channels(_ counts: [Channel: Int]) -> String { counts.map { "\($0.key): \($0.value)" }.sorted().joined(separator: ", ") }

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
}
