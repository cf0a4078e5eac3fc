import MAMPolicy

/// One cell of a matrix: under one policy, one source tries one channel towards one target.
public struct Cell: Sendable, Hashable, Codable, Identifiable {
    /// 1-based, in plan order; stable for a given experiment.
    public var id: Int
    /// The policy's label (`PolicyRef.label`).
    public var policy: String
    public var channel: ChannelSpec
    public var source: PartySpec
    public var target: PartySpec?
    /// Login/logout: the account signed in or out, and the account checked afterwards.
    public var account: String?
    public var check: String?
    public var label: String?
    public var expect: Expectation?

    public init(id: Int, policy: String, channel: ChannelSpec, source: PartySpec, target: PartySpec? = nil,
                account: String? = nil, check: String? = nil, label: String? = nil, expect: Expectation? = nil) {
        self.id = id
        self.policy = policy
        self.channel = channel
        self.source = source
        self.target = target
        self.account = account
        self.check = check
        self.label = label
        self.expect = expect
    }

    /// The heatmap column: target party and channel (`Notes · open-in`), or the location.
    public var column: String {
        if let target { return "\(target.name) · \(Self.short(channel.description))" }
        if let account { return "\(channel.channel.rawValue) \(Self.short(account))" + (check.map { $0 == account ? "" : " → \(Self.short($0))" } ?? "") }
        return Self.short(channel.description)
    }

    /// Accounts without their domain, for column heads (`save-to sharePoint:adele`).
    static func short(_ text: String) -> String {
        var out = ""
        var skipping = false
        for ch in text {
            if ch == "@" { skipping = true } else if ch == " " || ch == ":" || ch == "," { skipping = false }
            if !skipping { out.append(ch) }
        }
        return out
    }

    /// What the cell is, on one line.
    public var title: String {
        var s = "[\(policy)] \(source.name) \(channel)"
        if let target { s += " → \(target.name)" }
        if let account { s += " \(account)" }
        return s
    }

    /// The key two policies' cells are matched by in a diff.
    public var key: String { "\(source.name)|\(target?.name ?? "")|\(channel)|\(account ?? "")|\(check ?? "")" }
}

/// Turns an experiment into cells. Needs the app manifests to tell apps apart: two parties of
/// one app are tried against each other (a paste from one account to the other, a document
/// sent between them) on every channel but open-url (a link in the app's own scheme opens in
/// the app that sent it).
public enum Plan {
    /// Every cell of `experiment`, policy by policy: the generated ones, then the written ones.
    ///
    /// - Parameter bundleID: an app name (Apps/ folder or bundle id) to its bundle id; nil when
    ///   unknown (the loader has already said so).
    /// - Parameter handles: whether an app handles a URL scheme: a generated open-url cell with
    ///   an explicit URL (a web link) goes only to targets that handle its scheme, or, for http
    ///   and https, the managed browser's (a link opens in a browser, not in any app).
    /// - Parameter lands: whether a generated open-url cell's link opens in its target (the
    ///   device routes it to one handler: Predictor.linkOpens); a cell towards another
    ///   handler would test nothing.
    public static func cells(_ experiment: Experiment, bundleID: (String) -> String?,
                             handles: (String, String) -> Bool = { _, _ in true },
                             lands: (Cell) -> Bool = { _ in true }) -> [Cell] {
        var cells: [Cell] = []
        func opens(_ channel: ChannelSpec, _ target: PartySpec) -> Bool {
            guard let url = channel.url, let scheme = URLText.scheme(of: url)?.lowercased() else { return true }
            let browser = scheme == "http" || scheme == "https" ? ["microsoft-edge-" + scheme] : []
            return ([scheme] + browser).contains { handles(target.app, $0) }
        }
        func add(_ c: Cell) {
            var c = c
            c.id = cells.count + 1
            cells.append(c)
        }
        let apps = Dictionary(experiment.parties.map { ($0.name, bundleID($0.app)?.lowercased() ?? $0.app.lowercased()) },
                              uniquingKeysWith: { a, _ in a })
        // Looked up once: a campaign's written cells are many, its parties and policies few.
        let partyNamed = Dictionary(experiment.parties.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        // The written cells by the policy they name (in order), and those for every policy: a
        // campaign's 100,000 cells are not looked through once per policy.
        var writtenFor: [String: [Int]] = [:]
        let every = experiment.policies.map(\.label)
        for (i, spec) in experiment.cells.enumerated() {
            let named = spec.policies.isEmpty ? every : spec.policies
            for (k, label) in named.enumerated() where !named[..<k].contains(label) { writtenFor[label, default: []].append(i) }
        }
        for policy in experiment.policies {
            let label = policy.label
            let firstGenerated = cells.count
            for channel in experiment.channels {
                if channel.channel.isAccountChannel { continue }
                for source in experiment.parties where signedIn(source, channel) {
                    if !channel.channel.hasTarget {
                        add(Cell(id: 0, policy: label, channel: channel, source: source))
                        continue
                    }
                    for target in experiment.parties where pairs(source, target, channel.channel, apps) && signedIn(target, channel)
                        && opens(channel, target) {
                        let cell = Cell(id: 0, policy: label, channel: channel, source: source, target: target)
                        if channel.channel == .openURL && !lands(cell) { continue }
                        add(cell)
                    }
                }
            }
            // A written cell that repeats a generated one is that cell, with its label and
            // expectation: one square, one line in a diff.
            var generated: [String: Int] = [:]
            for i in firstGenerated..<cells.count { generated[cells[i].key] = i }
            for spec in (writtenFor[label] ?? []).lazy.map({ experiment.cells[$0] }) {
                guard let source = partyNamed[spec.source] else { continue }
                let cell = Cell(id: 0, policy: label, channel: spec.channel, source: source,
                                target: spec.target.flatMap { partyNamed[$0] },
                                account: spec.account, check: spec.check ?? spec.account, label: spec.label, expect: spec.expect)
                if !generated.isEmpty, let i = generated[cell.key] {
                    cells[i].label = spec.label ?? cells[i].label
                    cells[i].expect = spec.expect ?? cells[i].expect
                    continue
                }
                add(cell)
            }
        }
        return cells
    }

    /// Whether a generated cell goes from `source` to `target`: parties of two apps, or two
    /// accounts of one app on one device (`differ`).
    static func pairs(_ source: PartySpec, _ target: PartySpec, _ channel: Channel, _ apps: [String: String]) -> Bool {
        if apps[target.name] != apps[source.name] { return true }
        return channel != .openURL && source.name != target.name && Self.differ(source, target)
    }

    /// Two parties of one app on one device that are not the same party: the app signed in to
    /// the same accounts, acting under another identity. (One app signed in to other accounts,
    /// two users' Outlook, is two devices: no channel joins them; `collide`.)
    public static func differ(_ a: PartySpec, _ b: PartySpec) -> Bool {
        let ids = [a, b].map { ($0.identity ?? $0.accounts.first ?? "personal").lowercased() }
        return ids[0] != ids[1] && !collide(a, b)
    }

    /// Two parties of one app signed in to other accounts: on a phone, two devices.
    public static func collide(_ a: PartySpec, _ b: PartySpec) -> Bool {
        a.accounts.map { $0.lowercased() } != b.accounts.map { $0.lowercased() }
    }

    /// A party names only accounts it has signed in: a location of another account is not its to try.
    static func signedIn(_ party: PartySpec, _ channel: ChannelSpec) -> Bool {
        guard let account = channel.locationParts?.account else { return true }
        return party.accounts.contains { $0.lowercased() == account.lowercased() }
    }
}
