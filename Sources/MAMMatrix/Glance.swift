import MAMPolicy

/// A policy's results as an admin asks about them first: which unmanaged apps org data reaches
/// readable (and by which channel), where org links open, and where org files can be saved.
/// Read from the cells' shown answers (live when the run was live), so it says what happened.
public struct Glance: Sendable, Hashable {
    public var policy: String
    /// Channel → the unmanaged apps org data reached readable through it (a receiver that
    /// switched to the org account does not count; links are `linksOpen`), in order of first
    /// appearance.
    public var unmanagedReached: [(channel: String, targets: [String])]
    /// Where a managed app's links opened: the target, with the scheme when rewritten.
    public var linksOpen: [String]
    /// Storage locations a managed app saved org files to, and those it was refused.
    public var savedTo: [String]
    public var refusedSaves: [String]

    public static func == (a: Self, b: Self) -> Bool {
        a.policy == b.policy && a.linksOpen == b.linksOpen && a.savedTo == b.savedTo && a.refusedSaves == b.refusedSaves
            && a.unmanagedReached.map(\.channel) == b.unmanagedReached.map(\.channel)
            && a.unmanagedReached.map(\.targets) == b.unmanagedReached.map(\.targets)
    }
    public func hash(into h: inout Hasher) { h.combine(policy); h.combine(linksOpen); h.combine(savedTo) }

    public init(policy: String, results: [CellResult]) {
        self.policy = policy
        var reached: [(channel: String, targets: [String])] = []
        var links: [String] = [], saved: [String] = [], refused: [String] = []
        func add(_ item: String, to list: inout [String]) { if !list.contains(item) { list.append(item) } }
        for r in results where r.cell.policy == policy && r.orgData {
            let channel = r.cell.channel
            switch channel.channel {
            case .openURL:
                guard let target = r.cell.target else { continue }
                switch r.shown.outcome {
                case .allowed: add(target.name, to: &links)
                case .switched: add(target.name + " (switched to \(r.shown.identity ?? "the org account"))", to: &links)
                case .rewritten:
                    let scheme = r.shown.url.flatMap { URLText.scheme(of: $0) }
                    add(target.name + (scheme.map { " (as \($0):)" } ?? ""), to: &links)
                case .blocked, .filtered, .encrypted: break
                }
            case .saveTo:
                let location = channel.location ?? r.cell.account ?? "-"
                if r.orgDataReaches { add(location, to: &saved) } else { add(location, to: &refused) }
            default:
                break
            }
            // A receiver that switched to the org account keeps the data managed: not a reach.
            // Links have their own column (a link to a managed app's twin carries the account).
            guard channel.channel != .openURL, r.targetManaged == false, let target = r.cell.target, r.orgDataReaches,
                  r.shown.outcome != .switched else { continue }
            let name = channel.description
            if let i = reached.firstIndex(where: { $0.channel == name }) {
                if !reached[i].targets.contains(target.name) { reached[i].targets.append(target.name) }
            } else {
                reached.append((name, [target.name]))
            }
        }
        unmanagedReached = reached
        linksOpen = links
        savedTo = saved
        refusedSaves = refused.filter { !saved.contains($0) }
    }
}
