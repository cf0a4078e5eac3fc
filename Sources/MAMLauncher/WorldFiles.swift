import Foundation
import MAMCatalog
import MAMPolicy

/// What a command reads besides the tenant to know its world: the catalog, and the apps a
/// policy file names. The matrix and `explain`/`run` read them alike.
extension World {
    /// The built-in catalog (Policies/catalog/apps.json), then `extra`'s entries, which replace
    /// built-in ones with the same bundle id.
    package static func catalogEntries(root: URL, extra: String?) throws -> [CatalogEntry] {
        var entries: [CatalogEntry] = []
        let builtIn = Catalog.builtInCatalogPath(root: root)
        do {
            if FileManager.default.fileExists(atPath: builtIn) { entries = try Catalog.loadCatalog(builtIn) }
            if let extra {
                let more = try Catalog.loadCatalog(extra)
                entries.removeAll { e in more.contains { $0.bundleID.lowercased() == e.bundleID.lowercased() } }
                entries += more
            }
        } catch { throw World.Failure(description: error.description) }
        return entries
    }

    /// A policy file that names its apps (a Graph export with `apps`, or an `appGroupType`
    /// resolved through the catalog) targets those apps in every tenant policy it replaces;
    /// returns whether it did, and how an app group was resolved.
    package static func applyTargets(_ path: String, to tenant: inout Tenant, entries: [CatalogEntry],
                             installed: [CatalogApp]) throws -> (targets: Bool, notes: [String]) {
        let loaded: [PolicyFile.Loaded]
        do { loaded = try Catalog.loadPolicyFile(path) } catch { throw World.Failure(description: error.description) }
        guard var first = loaded.first?.policy else { return (false, []) }
        let notes = Catalog.resolveAppGroup(&first, entries: entries, installed: installed).map { [$0] } ?? []
        guard !first.targetedApps.isEmpty else { return (false, notes) }
        for i in tenant.policies.indices {
            tenant.policies[i].targetedApps = first.targetedApps
            tenant.policies[i].appOrigins = first.appOrigins
        }
        _ = tenant.reindex()
        return (true, notes)
    }
}
