import Foundation
import MAMCatalog
import MAMMatrix
import MAMPolicy
import MAMWire

/// The tenant and apps one command works with.
package struct World {
    package var engine: PolicyEngine
    package var apps: [CatalogApp]
    package var notes: [String]
    /// The app catalog's entries, for naming the apps an unknown name may have meant.
    package var catalogEntries: [CatalogEntry] = []
    /// The tenant file, as the user would write it, for errors that name it.
    var tenantFile = ""

    package struct Failure: Error, CustomStringConvertible {
        package var description: String
        package init(description: String) { self.description = description }
    }

    /// An argument found wrong once the command ran (an unknown app): the command line's
    /// mistake, which `mamlaunch` reports as it reports ArgumentParser's `ValidationError`.
    package struct UsageError: Error, CustomStringConvertible {
        package var message: String
        package init(_ message: String) { self.message = message }
        package var description: String { message }
    }

    /// `standIns`: app names or bundle ids the command will ask about (explain's --from and
    /// --to). Those no installed app or manifest provides, and every app a policy targets that
    /// none provides, become stand-ins from the app catalog (docs/CATALOG.md) as in `matrix`.
    package static func load(tenant tenantPath: String?, policyOverride: String?, manifests: [String],
                             catalog: String? = nil, standIns names: [String] = []) throws -> World {
        let root = Catalog.projectRoot()
        guard let path = tenantPath ?? root.map({ $0.appendingPathComponent("Policies/contoso/tenant.json").path }) else {
            throw Failure(description: "no --tenant given and \(Catalog.noProject), or pass --tenant")
        }
        var notes: [String] = []
        var tenant: Tenant
        do {
            let loaded = try Catalog.loadTenant(Catalog.relative(path))
            tenant = loaded.tenant
            warn(loaded.warnings)
        } catch {
            throw Failure(description: error.description)
        }
        var apps: [CatalogApp] = []
        if let root {
            let found = Catalog.loadApps(in: root.appendingPathComponent("Apps"))
            apps = found.apps
            notes += found.diagnostics.filter { $0.severity == .error }.map(\.description)
        }
        // App groups resolve through the catalog, as in the matrix and the broker.
        let entries = try root.map { try World.catalogEntries(root: $0, extra: catalog) } ?? []
        notes += Catalog.resolveAppGroups(&tenant, entries: entries, installed: apps).map { "note: \($0)" }
        if let policyOverride {
            try apply(policyOverride, to: &tenant)
            // A file that names its apps targets those, as in the matrix.
            notes += try World.applyTargets(policyOverride, to: &tenant, entries: entries, installed: apps).notes.map { "note: \($0)" }
        }
        for m in manifests {
            do {
                let loaded = try Catalog.loadManifest(m)
                apps.insert(CatalogApp(name: loaded.manifest.bundleID, manifest: loaded.manifest, file: m), at: 0)
                notes += loaded.warnings.map(\.description)
            } catch {
                throw Failure(description: error.description)
            }
        }
        if let root {
            let made = try standIns(for: names, tenant: tenant, installed: apps, root: root, catalog: catalog)
            apps += made.apps
            notes += made.notes
        }
        var world = World(engine: PolicyEngine(tenant: tenant, apps: apps.map(\.manifest)), apps: apps, notes: notes)
        world.tenantFile = Catalog.relative(path)
        world.catalogEntries = entries
        return world
    }

    /// Stand-ins (MatrixSetup.withStandIns) for the apps the policies target and for the
    /// catalog apps among `names` (an entry's name or bundle id) that no installed app provides.
    static func standIns(for names: [String], tenant: Tenant, installed: [CatalogApp], root: URL, catalog: String?)
        throws -> (apps: [CatalogApp], notes: [String]) {
        let entries = try World.catalogEntries(root: root, extra: catalog)
        // A name the catalog does not know stays unknown (a typo is not an app); a bundle id a
        // policy targets is stood in for, from the catalog or plain, as in the matrix.
        let asked = names.filter { Catalog.find($0, in: installed) == nil }.compactMap { name in
            Catalog.entry(named: name, in: entries)?.bundleID
        }
        let made = Catalog.standIns(for: PolicyApps.targetedApps([tenant]) + asked, installed: installed, catalog: entries)
        let wanted = Set((names + asked).map { $0.lowercased() })
        let notes = made.notes.filter { note in wanted.contains { note.lowercased().hasPrefix($0 + " ") } }
        return (made.apps, notes.map { "note: \($0)" })
    }

    /// A loaded file's warnings (an unknown key, with the nearest known one), on standard error:
    /// the answer on standard output stays the answer, and the typo is still heard, since the
    /// key it misspells has fallen to its default.
    package static func warn(_ diagnostics: [Diagnostic]) {
        for d in diagnostics { StandardStreams.writeError("mamlaunch: \(d)\n") }
    }

    /// Gives every policy of `tenant` the settings of the policy file at `path`, keeping whom
    /// each targets (`--policy`).
    /// Returns the file's warnings, which it has printed.
    @discardableResult
    package static func apply(_ path: String, to tenant: inout Tenant) throws -> [Diagnostic] {
        do {
            let loaded = try Catalog.loadPolicyFile(path)
            warn(loaded.flatMap(\.warnings))
            guard let first = loaded.first else {
                throw Failure(description: "\(path): error: the file holds no policy")
            }
            // The broker reads every policy of a file it is given; the settings of one policy are
            // what --policy gives every tenant policy. A file of several would be read two ways.
            if loaded.count > 1 {
                let names = loaded.prefix(5).map { "\"\($0.policy.displayName)\"" }.joined(separator: ", ")
                throw Failure(description: "\(path): error: the file holds \(loaded.count) policies (\(names)\(loaded.count > 5 ? ", …" : "")); --policy applies one policy's settings to the tenant's policies: give a file of one policy, or list them in a tenant file (--tenant) with their own assignments")
            }
            for i in tenant.policies.indices {
                tenant.policies[i].settings = first.policy.settings
                tenant.policies[i].displayName = first.policy.displayName
                tenant.policies[i].settingsFile = path
            }
            tenant.reindex()
            return loaded.flatMap(\.warnings)
        } catch let error as LoadFailure {
            throw Failure(description: error.description)
        }
    }

    /// `APP[:ACCOUNT[,ACCOUNT...]]` to a party. The first ACCOUNT is the identity the app acts
    /// under now (`none`: a multi-identity app that has set none yet); the others are signed in too.
    package func party(_ spec: String, notes: inout [String]) throws -> Party {
        let parts = spec.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let name = String(parts[0])
        guard let app = Catalog.find(name, in: apps) else {
            throw UsageError(Catalog.unknownApp(name, installed: apps, entries: catalogEntries) + "; pass --manifest for your own")
        }
        var accounts = parts.count > 1 ? parts[1].split(separator: ",").map(String.init) : []
        if parts.count > 1 && accounts.isEmpty {
            throw UsageError("\"\(spec)\": no account after ':'; give a UPN, an OID, personal or none")
        }
        let manifest = app.manifest
        if let entry = app.standIn {
            notes.append("note: \(manifest.bundleID) is not installed (no Apps/ folder): it is answered as the stand-in made from the app catalog's entry \"\(entry.name)\", as the matrix runs it")
        }
        let launchState = accounts.first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() == Self.noIdentity } ?? false
        if launchState {
            guard manifest.isMultiIdentity else {
                throw UsageError("\"\(spec)\": \(app.name) is not a multi-identity app; only a multi-identity app starts with no identity set (a single-identity app runs as its enrolled account)")
            }
            accounts.removeFirst()
        }
        if let stray = accounts.first(where: { $0.trimmingCharacters(in: .whitespaces).lowercased() == Self.noIdentity }) {
            throw UsageError("\"\(spec)\": \(stray) can only come first (the identity the app acts under now)")
        }
        for a in accounts { try refuseUnknownInOwnDomain(a) }
        let identities = accounts.map { engine.tenant.identity(named: $0) }
        let personal = Set(engine.tenant.personalAccounts.map { $0.lowercased() })
        for case let .account(a) in identities where a.userIndex == nil && !personal.contains(a.name.lowercased()) {
            notes.append("note: \(a.name) is not a user of tenant \(engine.tenant.name); it is an unmanaged account")
        }
        if manifest.integratesSDK && !manifest.isMultiIdentity && identities.count > 1 {
            notes.append("note: \(app.name) is a single-identity app; only \(identities[0]) is signed in")
        }
        // One managed account per app; a second one is refused as the SDK refuses it (227).
        let signedIn = manifest.isMultiIdentity ? identities.compactMap(\.account) : Array(identities.prefix(1).compactMap(\.account))
        let enrolled: Account?
        switch engine.enrollment(of: manifest, signedIn: signedIn) {
        case let .success(a): enrolled = a
        case let .failure(refusal): throw Failure(description: "\(refusal)")
        }
        if let e = enrolled, manifest.integratesSDK {
            for case let .account(a) in identities where a != e && engine.tenant.policy(app: manifest.bundleID, account: a) != nil {
                notes.append("note: \(a) is signed in to \(app.name) but \(e) is its enrolled account, so \(a) is unmanaged there")
            }
        }
        let alsoPersonal = identities.contains(.personal)
        if launchState {
            return engine.partyWithNoIdentitySet(manifest, enrolled: enrolled, personalAccountSignedIn: alsoPersonal)
        }
        guard let first = identities.first else { return engine.party(manifest, identity: engine.defaultIdentity(for: manifest)) }
        return engine.party(manifest, identity: first, enrolled: enrolled, personalAccountSignedIn: alsoPersonal)
    }

    /// The app of `spec` showing every account listed there in one view (SEMANTICS §1.view),
    /// decided as the broker decides `setViewIdentities`; a view the app may not show is an
    /// error naming the rule.
    package func viewParty(_ spec: String, notes: inout [String]) throws -> Party {
        let alone = try party(spec, notes: &notes)
        let listed = spec.split(separator: ":", maxSplits: 1).dropFirst().first.map { $0.split(separator: ",").map(String.init) } ?? []
        let identities = Party.distinct(listed.filter { $0.trimmingCharacters(in: .whitespaces).lowercased() != Self.noIdentity }
            .map { engine.tenant.identity(named: $0) })
        guard identities.count > 1 else {
            throw UsageError("\"\(spec)\": a view needs several accounts after ':' (Mail:adele@contoso.com,personal)")
        }
        let d = engine.setViewIdentities(identities, for: alone, signedIn: identities.compactMap(\.account))
        guard d.allowed else { throw Failure(description: "\(spec): the view is refused by \(d.rule.rawValue) (\(d.rule.id)): \(d.rule.summary)") }
        let view = alone.showing(identities)
        if view.policy?.id == Policy.lockDown.id {
            notes.append("note: the view shows \(view.identity) beside other accounts: it is under the lock-down policy (SEMANTICS §1.view)")
        }
        return view
    }

    /// An address in the tenant's own domain that the tenant does not know is a typo (or a user
    /// never added), not an outsider: answering for it as an unmanaged account would turn the typo
    /// into "allowed" without a word.
    func refuseUnknownInOwnDomain(_ name: String) throws {
        guard engine.tenant.isUnknownInOwnDomain(name) else { return }
        let domain = name.split(separator: "@").last.map(String.init) ?? ""
        throw Failure(description: "\(name.trimmingCharacters(in: .whitespaces)) is not a user of tenant \(engine.tenant.name) (\(tenantFile))\(engine.tenant.nearestUser(to: name)), "
            + "yet \(domain) is one of its domains; check the spelling or add the user to \(tenantFile)")
    }

    /// How `--from`/`--to` say "no identity set yet" (distinct from `personal`, the SDK's `""`).
    static let noIdentity = "none"

    package func account(_ name: String?, notes: inout [String]) throws -> Account? {
        guard let name, !name.isEmpty else { return nil }
        try refuseUnknownInOwnDomain(name)
        switch engine.tenant.identity(named: name) {
        case .personal: return nil
        case let .account(a):
            if a.userIndex == nil { notes.append("note: \(a.name) is not a user of tenant \(engine.tenant.name)") }
            return a
        }
    }
}
