import MAMPolicy

/// Which device (a broker and its apps) answers which cells, in which order: the matrix's plan
/// before any app runs. Pure: both shells, live and embedded, run the same plan.
public enum DevicePlan {
    /// One policy's cells on a device (indices into the planned cells).
    public struct Part: Equatable, Sendable {
        public var policy: String
        public var cells: [Int]
        public init(policy: String, cells: [Int]) {
            self.policy = policy
            self.cells = cells
        }
    }

    /// One device's share of the run: policies in turn, each with its cells, the broker switched
    /// to the next policy between them.
    public typealias Stint = [Part]

    /// The devices of a run. Login and logout change what the device remembers (enrollments):
    /// each gets a device of its own. The other cells share one device per targeting (whom a
    /// policy's tenant targets: `targeting`, by policy; policies alike in it differ in settings
    /// only, which a broker takes on a reload), policy after policy in the experiment's order;
    /// `perPolicy` gives every policy a device of its own. Then split so that an app holds one
    /// set of accounts on each device (`splitByAccounts`). `bundle` names a party's app as the
    /// shell keys it.
    public static func stints(_ cells: [Cell], targeting: [String: [String]], perPolicy: Bool = false,
                              bundle: (PartySpec) -> String) -> [Stint] {
        var byPolicy: [String: [Int]] = [:]
        var order: [String] = []
        for (i, c) in cells.enumerated() {
            if byPolicy[c.policy] == nil { order.append(c.policy) }
            byPolicy[c.policy, default: []].append(i)
        }
        var stints: [Stint] = []
        var sharing: [[String]: Int] = [:]
        for policy in order {
            let all = byPolicy[policy]!
            let shared = all.filter { !cells[$0].channel.channel.isAccountChannel }
            if !shared.isEmpty {
                let key = perPolicy ? [policy] : targeting[policy] ?? [policy]
                if let i = sharing[key] {
                    stints[i].append(Part(policy: policy, cells: shared))
                } else {
                    sharing[key] = stints.count
                    stints.append([Part(policy: policy, cells: shared)])
                }
            }
            stints += all.filter { cells[$0].channel.channel.isAccountChannel }.map { [Part(policy: policy, cells: [$0])] }
        }
        return stints.flatMap { splitByAccounts($0, cells, bundle: bundle) }
    }

    /// A stint split into devices: an app holds one set of accounts on a device (one managed
    /// account: a second user is refused, SingleManagedAccountMode), so cells that need one app
    /// signed in to other accounts (adele's Outlook, ben's Outlook: two users of a tenant) run
    /// on a device of their own. Cells go to the first device whose apps they agree with; a run
    /// with one user is one device.
    public static func splitByAccounts(_ stint: Stint, _ cells: [Cell], bundle: (PartySpec) -> String) -> [Stint] {
        var devices: [(apps: [String: [String]], stint: Stint)] = []
        for part in stint {
            for i in part.cells {
                let cell = cells[i]
                let wants = ([cell.source] + (cell.target.map { [$0] } ?? [])).map { p in (bundle(p), p.accounts.map { $0.lowercased() }) }
                let fits = devices.firstIndex { d in wants.allSatisfy { w in d.apps[w.0].map { $0 == w.1 } ?? true } }
                let d = fits ?? devices.count
                if fits == nil { devices.append(([:], [])) }
                for (b, accounts) in wants { devices[d].apps[b] = accounts }
                if devices[d].stint.last?.policy == part.policy {
                    devices[d].stint[devices[d].stint.count - 1].cells.append(i)
                } else {
                    devices[d].stint.append(Part(policy: part.policy, cells: [i]))
                }
            }
        }
        return devices.map(\.stint)
    }

    /// Whom a tenant's policies target (the apps, the groups in and out, everyone) in the
    /// tenant's order: what decides which apps enroll which accounts when they start. Two
    /// policies alike in it differ in their settings only, which a broker takes on a reload and
    /// every app on its next check-in; their app configurations are alike too (a tenant keeps
    /// those of the apps its policies target, Tenant.keepConfigurationsOfManagedApps).
    public static func targeting(_ tenant: Tenant) -> [String] {
        tenant.policies.map { p in
            [p.targetedApps.sorted().joined(separator: ","), p.includedGroups.map { $0.lowercased() }.sorted().joined(separator: ","),
             p.excludedGroups.map { $0.lowercased() }.sorted().joined(separator: ","), p.allUsers ? "all" : "-"].joined(separator: " | ")
        }
    }

    public struct Refusal: Error, CustomStringConvertible {
        public var description: String
    }

    /// The tenant a device's broker decides by: the very tenant the prediction decides by, every
    /// app group already resolved into its apps (the broker reads no catalog), and where an app
    /// group made two policies overlap, the later one's apps the first decides for left out.
    /// An overlap no list of apps can say is refused.
    public static func brokerTenant(_ typed: Tenant) throws(Refusal) -> Tenant {
        var (tenant, conflicts) = typed.withEffectiveTargets()
        if let c = conflicts.first {
            // Names quoted with their control characters escaped: they come from an author's file.
            throw Refusal(description: "\(String(reflecting: tenant.policies[c.first].displayName)) and \(String(reflecting: tenant.policies[c.second].displayName)) both target user \(tenant.users[c.user].upn) for app \(c.app), and the first decides for some of the second's users only; a tenant file cannot say so (give the policies apps or groups that do not overlap)")
        }
        for i in tenant.policies.indices { tenant.policies[i].appGroup = nil }
        return tenant
    }
}
