import MAMPolicy

/// A small seeded generator (SplitMix64): the same seed gives the same cells on every machine.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// `--random N --seed S`: N cells with random policies, parties, identities and channels, to
/// check the leak invariant live (org data never arrives readable where the policy forbids it).
public enum RandomCells {
    /// - Parameters:
    ///   - apps: the apps to pick from (name, manifest).
    ///   - users: the tenant's users (UPNs); `personal` accounts are added by the generator.
    ///   - policies: the policies to pick from.
    public static func experiment(count: Int, seed: UInt64, apps: [(name: String, manifest: AppManifest)], users: [String],
                                  policies: [PolicyRef]) -> Experiment {
        var rng = SeededGenerator(seed: seed)
        // Each app gets one set of accounts, its parties differing by the identity they act
        // under; an SDK app may also be another user's copy (a second user of the tenant: in a
        // live run, another device), so campaigns make cells between two accounts of one app
        // and between two users' apps.
        var parties: [PartySpec] = []
        for (name, manifest) in apps.sorted(by: { $0.name < $1.name }) {
            guard manifest.integratesSDK else {
                parties.append(PartySpec(name: name, app: name))
                continue
            }
            var accounts: [String] = []
            // At most one targeted account: a second one is refused at sign-in (227).
            if let user = users.randomElement(using: &rng), Bool.random(using: &rng) || users.count == 1 { accounts.append(user) }
            if manifest.isMultiIdentity && Bool.random(using: &rng) { accounts.append("personal") }
            if accounts.isEmpty, let user = users.randomElement(using: &rng) { accounts.append(user) }
            // No `none` (launch state) party: a live app started with an account acts under it
            // from the start, and cannot go back to having set no identity.
            for identity in accounts {
                parties.append(PartySpec(name: "\(name) (\(identity))", app: name, accounts: accounts, identity: identity))
            }
            if users.count > 1, Bool.random(using: &rng),
               let other = users.filter({ u in !accounts.contains(u) }).randomElement(using: &rng) {
                parties.append(PartySpec(name: "\(name) (\(other))", app: name, accounts: [other], identity: other))
            }
        }
        let appOf = Dictionary(parties.map { ($0.name, $0.app) }, uniquingKeysWith: { a, _ in a })
        let channels: [Channel] = [.openIn, .import, .paste, .openURL, .saveTo, .openFrom]
        let openLocations = OpenLocation.allCases.filter { $0 != .camera }
        // Worked out once, not at each of a campaign's cells.
        let labels = Dictionary(policies.map { ($0, $0.label) }, uniquingKeysWith: { a, _ in a })
        // Another app's parties, and the app's own other accounts (a paste or a document
        // between two accounts of one app); a link goes to another app only.
        var targetsOf: [String: [PartySpec]] = [:], linkTargetsOf: [String: [PartySpec]] = [:]
        for p in parties {
            targetsOf[p.name] = parties.filter { appOf[$0.name] != p.app || ($0.name != p.name && Plan.differ($0, p)) }
            linkTargetsOf[p.name] = parties.filter { appOf[$0.name] != p.app }
        }
        var cells: [CellSpec] = []
        cells.reserveCapacity(count)
        while cells.count < count, parties.count > 1 {
            let policy = policies.randomElement(using: &rng)!
            let channel = channels.randomElement(using: &rng)!
            let source = parties.randomElement(using: &rng)!
            let targets = (channel == .openURL ? linkTargetsOf : targetsOf)[source.name]!
            guard let target = targets.randomElement(using: &rng) else { continue }
            var spec: ChannelSpec
            switch channel {
            case .saveTo:
                let l = SaveLocation.allCases.randomElement(using: &rng)!
                guard let location = located(l.name, takesAccount: l.takesAccount, source, nil, &rng) else { continue }
                spec = ChannelSpec(.saveTo, location: location)
            case .openFrom:
                let l = openLocations.randomElement(using: &rng)!
                guard let location = located(l.name, takesAccount: l.takesAccount, source, target, &rng) else { continue }
                spec = ChannelSpec(.openFrom, location: location)
            default:
                spec = ChannelSpec(channel)
            }
            cells.append(CellSpec(channel: spec, source: source.name, target: channel == .saveTo ? nil : target.name,
                                  policies: [labels[policy]!]))
        }
        return Experiment(name: "random", description: "\(count) random cells, seed \(seed): the leak invariant checked live.",
                          parties: parties, policies: policies, cells: cells)
    }

    /// A location, with an account both parties have signed in where it takes one.
    static func located(_ name: String, takesAccount: Bool, _ a: PartySpec, _ b: PartySpec?, _ rng: inout SeededGenerator) -> String? {
        guard takesAccount else { return name }
        let shared = a.accounts.filter { $0 != "personal" && (b?.accounts.contains($0) ?? true) }
        guard let account = shared.randomElement(using: &rng) else { return nil }
        return "\(name):\(account)"
    }
}
