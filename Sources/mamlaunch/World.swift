import ArgumentParser
import Foundation
import MAMCatalog
import MAMPolicy

/// The tenant and apps one command works with.
struct World {
    var engine: PolicyEngine
    var apps: [CatalogApp]
    var notes: [String]

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func load(tenant tenantPath: String?, policyOverride: String?, manifests: [String]) throws -> World {
        let root = Catalog.projectRoot()
        guard let path = tenantPath ?? root.map({ $0.appendingPathComponent("Policies/contoso/tenant.json").path }) else {
            throw ValidationError("no --tenant given and no MAMLab project found here; set MAMLAB_ROOT or pass --tenant")
        }
        var notes: [String] = []
        var tenant: Tenant
        do {
            let loaded = try Catalog.loadTenant(Catalog.relative(path))
            tenant = loaded.tenant
            notes += loaded.warnings.map(\.description)
        } catch {
            throw Failure(description: error.description)
        }
        if let policyOverride {
            do {
                guard let first = try Catalog.loadPolicyFile(policyOverride).first else {
                    throw Failure(description: "\(policyOverride): error: the file holds no policy")
                }
                for i in tenant.policies.indices {
                    tenant.policies[i].settings = first.policy.settings
                    tenant.policies[i].displayName = first.policy.displayName
                    tenant.policies[i].settingsFile = policyOverride
                }
                tenant.reindex()
            } catch let error as LoadFailure {
                throw Failure(description: error.description)
            }
        }
        var apps: [CatalogApp] = []
        if let root {
            let found = Catalog.loadApps(in: root.appendingPathComponent("Apps"))
            apps = found.apps
            notes += found.diagnostics.filter { $0.severity == .error }.map(\.description)
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
        return World(engine: PolicyEngine(tenant: tenant, apps: apps.map(\.manifest)), apps: apps, notes: notes)
    }

    /// `APP[:ACCOUNT[,ACCOUNT...]]` to a party.
    func party(_ spec: String, notes: inout [String]) throws -> Party {
        let parts = spec.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let name = String(parts[0])
        guard let app = Catalog.find(name, in: apps) else {
            let known = apps.map { "\($0.name) (\($0.manifest.bundleID))" }.joined(separator: ", ")
            throw ValidationError("unknown app \"\(name)\"; known apps: \(known); pass --manifest for your own")
        }
        let accounts = parts.count > 1 ? parts[1].split(separator: ",").map(String.init) : []
        if parts.count > 1 && accounts.isEmpty {
            throw ValidationError("\"\(spec)\": no account after ':'; give a UPN, an OID or personal")
        }
        let identities = accounts.map { engine.tenant.identity(named: $0) }
        let personal = Set(engine.tenant.personalAccounts.map { $0.lowercased() })
        for case let .account(a) in identities where a.userIndex == nil && !personal.contains(a.name.lowercased()) {
            notes.append("note: \(a.name) is not a user of tenant \(engine.tenant.name); it is an unmanaged account")
        }
        let manifest = app.manifest
        guard let first = identities.first else { return engine.party(manifest, identity: engine.defaultIdentity(for: manifest)) }
        let managed = identities.compactMap(\.account).first { engine.tenant.policy(app: manifest.bundleID, account: $0) != nil }
        if manifest.integratesSDK && !manifest.isMultiIdentity && identities.count > 1 {
            notes.append("note: \(app.name) is a single-identity app; only \(first) is signed in")
        }
        return engine.party(manifest, identity: first, enrolled: manifest.isMultiIdentity ? managed : nil,
                            personalAccountSignedIn: identities.contains(.personal))
    }

    func account(_ name: String?, notes: inout [String]) throws -> Account? {
        guard let name, !name.isEmpty else { return nil }
        switch engine.tenant.identity(named: name) {
        case .personal: return nil
        case let .account(a):
            if a.userIndex == nil { notes.append("note: \(a.name) is not a user of tenant \(engine.tenant.name)") }
            return a
        }
    }
}
