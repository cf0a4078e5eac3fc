import Foundation
import MAMCatalog
import MAMLauncher
import MAMMatrix
import MAMPolicy
import MAMWire

/// Where a matrix's parties come from (`--parties`).
package enum PartiesSource: String, CaseIterable {
    /// The experiment's own list.
    case experiment
    /// A party per app the policies target, plus the catalog's unmanaged apps (PolicyApps).
    case policyApps = "policy-apps"
}

/// The parts of a matrix's setup that turn what the admin gave (tenant, policies, catalog) into
/// parties and apps: stand-ins for targeted apps no `Apps/` folder provides, policies named by
/// sample label, accounts checked against the tenant.
extension MatrixSetup {
    /// A policy entry to the file the run loads: a path relative to `folder`, else a sample
    /// policy's label (`managed-only`).
    static func resolvePolicy(_ entry: String, from folder: URL, root: URL) -> Result<String, ExperimentFile.PolicyLookupFailure> {
        let url = entry.hasPrefix("/") ? URL(fileURLWithPath: entry) : URL(fileURLWithPath: entry, relativeTo: folder)
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) {
            return isFolder.boolValue ? .failure(.init("\(entry) is a folder, not a policy file")) : .success(url.standardizedFileURL.path)
        }
        if let sample = BuiltIn.samplePolicies.first(where: { $0.label == entry }), case let .file(path) = sample {
            return .success(root.appendingPathComponent(path).path)
        }
        let labels = BuiltIn.samplePolicies.map(\.label).joined(separator: ", ")
        return .failure(.init("no policy file \"\(entry.prefix(200))\" (looked in \(Catalog.relative(folder.path).isEmpty ? "." : Catalog.relative(folder.path))) and no sample policy of that name (sample labels: \(labels))"))
    }

    static func isSampleTenant(_ path: String, root: URL) -> Bool {
        let sample = root.appendingPathComponent("Policies/contoso/tenant.json").standardizedFileURL.path
        return URL(fileURLWithPath: path).standardizedFileURL.path == sample
    }

    /// The installed apps plus a stand-in for every app a party or a policy names that no
    /// `Apps/` folder provides; with `policyApps`, the experiment's parties made from the targets.
    static func withStandIns(_ experiment: inout Experiment, installed: [CatalogApp], entries: [CatalogEntry],
                             tenants: [Tenant], baseTenant: Tenant, warnings: inout [String]) throws -> [CatalogApp] {
        let targeted = PolicyApps.targetedApps(tenants)
        let unmanaged = entries.filter { !$0.sdk }
        var wanted = targeted
        if experiment.policyApps { wanted += unmanaged.map(\.bundleID) }
        for p in experiment.parties where Catalog.find(p.app, in: installed) == nil {
            wanted.append(Catalog.entry(named: p.app, in: entries)?.bundleID ?? p.app)
        }
        let made = Catalog.standIns(for: wanted, installed: installed, catalog: entries)
        for note in made.notes { StandardStreams.writeError("matrix: \(note)\n") }
        warnings += made.notes
        let apps = installed + made.apps
        guard experiment.policyApps else { return apps }
        var byID: [String: PolicyApps.App] = [:]
        for a in apps {
            byID[a.manifest.bundleID.lowercased()] = PolicyApps.App(bundleID: a.manifest.bundleID, name: a.standIn?.name ?? a.name,
                                                                    sdk: a.manifest.integratesSDK)
        }
        let unmanagedApps = unmanaged.compactMap { byID[$0.bundleID.lowercased()] }
        let result = PolicyApps.parties(tenant: baseTenant, targeted: targeted, apps: byID, unmanaged: unmanagedApps)
        for note in result.notes { StandardStreams.writeError("matrix: \(note)\n") }
        guard !result.parties.isEmpty else {
            throw World.Failure(description: "--parties policy-apps: the policies target no app and the catalog has no unmanaged app")
        }
        experiment.parties = result.parties
        // The report is headed by what ran, not by the built-in experiment whose channels it took.
        let users = Array(Set(result.parties.flatMap(\.accounts).filter { $0.contains("@") })).sorted()
        let policyNames = tenants.flatMap { $0.policies.map(\.displayName) }.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        let appNames = result.parties.map(\.name)
        experiment.name = "the policies' apps" + (policyNames.isEmpty ? "" : ": " + policyNames.joined(separator: ", "))
        experiment.description = "Parties made from the policies (--parties policy-apps): each app they target, signed in as a user they are assigned to"
            + (users.isEmpty ? "" : " (\(users.joined(separator: ", ")))") + ", and the catalog's unmanaged apps; here \(appNames.joined(separator: ", ")). "
            + "Every channel between every two of them, under each policy."
        // A location of an account the parties do not have is of another tenant (the default
        // experiment's adele): it becomes the location of the account the parties sign in.
        var seen = Set<ChannelSpec>()
        let accounts = Set(result.parties.flatMap(\.accounts).map { $0.lowercased() })
        let own = result.parties.lazy.flatMap(\.accounts).first
        let channels = experiment.channels.isEmpty ? BuiltIn.default.channels : experiment.channels
        experiment.channels = channels.compactMap { c -> ChannelSpec? in
            guard let parts = c.locationParts, let account = parts.account, !accounts.contains(account.lowercased()) else { return c }
            return own.map { ChannelSpec(c.channel, location: "\(parts.name):\($0)") }
        }.filter { seen.insert($0).inserted }
        experiment.cells = []
        return apps
    }

    /// A written cell between two parties of one app signed in to other accounts (adele's
    /// Outlook and ben's) names two devices: an app holds one set of accounts on a phone, and
    /// no channel joins two phones. Refused before anything starts, naming the cell.
    static func checkDevices(_ experiment: Experiment, apps: [CatalogApp]) throws {
        let party = Dictionary(experiment.parties.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        func bundle(_ p: PartySpec) -> String { Catalog.find(p.app, in: apps)?.manifest.bundleID.lowercased() ?? p.app.lowercased() }
        for (i, c) in experiment.cells.enumerated() {
            guard let s = party[c.source], let t = c.target.flatMap({ party[$0] }), bundle(s) == bundle(t), Plan.collide(s, t) else { continue }
            throw World.Failure(description: "cells[\(i)] (\(c.label ?? "\(s.name) \(c.channel) → \(t.name)")): \(s.name) and \(t.name) are one app signed in to other accounts (\(s.accounts.joined(separator: ", ")); \(t.accounts.joined(separator: ", "))): on a phone that is two devices, and no channel joins two devices; give both parties the same accounts to try two accounts of one app")
        }
    }

    /// Every account a party signs in must be the tenant's (a user, by UPN or OID, or one of
    /// its personal accounts) or `personal`: the broker refuses any other, and every cell of the
    /// party would fail with the same reason.
    static func checkAccounts(_ experiment: Experiment, tenant: Tenant, file: String) throws {
        var known = Set(tenant.users.flatMap { [$0.upn.lowercased()] + ($0.oid.map { [$0.lowercased()] } ?? []) })
        known.formUnion(tenant.personalAccounts.map { $0.lowercased() })
        known.insert("personal")
        var problems: [String] = []
        for p in experiment.parties {
            for a in p.accounts where !known.contains(a.lowercased()) {
                problems.append("party \"\(p.name)\": \(a) is not a user of tenant \(tenant.name) (\(Catalog.relative(file)))\(tenant.nearestUser(to: a))")
            }
        }
        for c in experiment.cells {
            if let a = c.account, !known.contains(a.lowercased()) {
                problems.append("cell \(c.label.map { "\"\($0)\"" } ?? c.channel.description): \(a) is not a user of tenant \(tenant.name) (\(Catalog.relative(file)))\(tenant.nearestUser(to: a))")
            }
        }
        guard problems.isEmpty else {
            let users = tenant.users.prefix(8).map(\.upn).joined(separator: ", ")
            throw World.Failure(description: problems.joined(separator: "\n") + "\nthe tenant's users: \(users)\(tenant.users.count > 8 ? ", …" : ""); give parties of this tenant, or --parties policy-apps")
        }
    }
}
