import Foundation
import Glibc
import MAMCatalog
import MAMLauncher
import MAMMatrix
import MAMPolicy
import MAMWire
import Synchronization

/// The experiment and, for each of its policies, the engine that answers it.
package struct MatrixSetup {
    package var experiment: Experiment
    /// By policy label.
    package var predictors: [String: Predictor]
    /// The tenant each policy's broker loads (absolute paths), by policy label.
    package var tenantFile: String
    package var policyFiles: [String: String]
    /// The installed apps and the stand-ins the run needs.
    package var apps: [CatalogApp]
    package var root: URL
    /// The policies a diff compares, in order (two or more), by label.
    package var diff: [String]?
    /// Whom each policy's tenant targets, by policy label (DevicePlan.targeting): policies alike
    /// in it run live on one broker and one set of apps, the broker switched between them.
    package var targeting: [String: [String]] = [:]
    /// The app catalog the run read, and what its inputs drew on the way (warnings of the
    /// tenant, the policy files and the manifests; how app groups resolved; apps left out),
    /// each also said on standard error: the report's header carries them.
    package var catalog: String = ""
    package var warnings: [String] = []
    /// The tenant file's conditional access, read once against its users: every policy's
    /// broker is given it with the tenant (PolicyRun.writeTenant).
    package var conditionalAccess: ConditionalAccessSettings?

    /// An experiment file's problems as `mamlaunch matrix` would find them loading it (`check`):
    /// apps by any name they go by (installed or in the catalog), policies as files beside it or
    /// sample labels.
    package static func checkExperiment(_ path: String, root: URL?, installed: [CatalogApp], entries: [CatalogEntry]) -> [Diagnostic] {
        let folder = URL(fileURLWithPath: path).standardizedFileURL.deletingLastPathComponent()
        let known: (String) -> Bool = { Catalog.find($0, in: installed) != nil || Catalog.entry(named: $0, in: entries) != nil }
        do {
            _ = try ExperimentFile.load(try Catalog.read(path), file: Catalog.relative(path), knownApp: known,
                                        appNames: Catalog.appNames(installed: installed, entries: entries),
                                        policy: { entry in root.map { Self.resolvePolicy(entry, from: folder, root: $0) } ?? .success(entry) })
            return []
        } catch {
            return error.diagnostics
        }
    }

    package static func load(experiment name: String, policies: [String], diff: [String], random: Int?, seed: UInt64,
                     tenant: String?, parties: PartiesSource? = nil, catalog: String? = nil) throws -> MatrixSetup {
        guard let root = Catalog.projectRoot() else {
            throw World.Failure(description: Catalog.noProject)
        }
        let found = Catalog.loadApps(in: root.appendingPathComponent("Apps"))
        let installed = found.apps
        var warnings = found.diagnostics.filter { $0.severity == .warning }.map(\.description)
        let entries = try World.catalogEntries(root: root, extra: catalog)
        let known: (String) -> Bool = { name in
            Catalog.find(name, in: installed) != nil
                || Catalog.entry(named: name, in: entries) != nil
        }
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)

        var experiment: Experiment
        var base = root
        let samplePolicies = BuiltIn.samplePolicies
        // --policy: a file, `tenant`, or a sample policy's label.
        let given: [PolicyRef] = try policies.map { p in
            if p == "tenant" { return .tenant }
            switch Self.resolvePolicy(p, from: cwd, root: root) {
            case let .success(path): return .file(path)
            case let .failure(f): throw World.Failure(description: "--policy \(p): \(f.reason)")
            }
        }
        if let random {
            let users = try Self.tenant(tenant, root: root, warnings: &warnings).users.map(\.upn)
            let pool: [PolicyRef] = policies.isEmpty ? samplePolicies : given
            // Random cells pick among the scripted sample apps that are built (for a live run).
            let scripted = installed.filter { a in
                BuiltIn.scriptedApps.contains { $0.lowercased() == a.name.lowercased() }
                    && (a.builtExecutable().map(FileManager.default.isExecutableFile(atPath:)) ?? false)
            }.map { (name: $0.name, manifest: $0.manifest) }
            let left = BuiltIn.scriptedApps.filter { name in !scripted.contains { $0.name.lowercased() == name.lowercased() } }
            if !left.isEmpty {
                let said = "random cells leave out \(left.joined(separator: ", ")): not built beside mamlaunch"
                StandardStreams.writeError("matrix: \(said)\n")
                warnings.append(said)
            }
            experiment = RandomCells.experiment(count: random, seed: seed, apps: scripted, users: users, policies: pool)
            if !policies.isEmpty { base = cwd }
        } else if let builtIn = BuiltIn.experiment(named: name) {
            experiment = builtIn
            // The built-ins' parties are the sample tenant's (adele of Contoso): another tenant
            // gets parties made from its own policies, users and apps.
            if let tenant, !Self.isSampleTenant(tenant, root: root), parties == nil {
                guard name == "default" else {
                    throw World.UsageError("the built-in \(name) experiment is written for the sample tenant's users (adele@contoso.com); with --tenant \(tenant) give --parties policy-apps or an experiment file")
                }
                let said = "the default experiment's parties are the sample tenant's; with --tenant \(tenant) they are made from that tenant's policies, users and apps (--parties policy-apps), under the tenant's own policies"
                StandardStreams.writeError("matrix: \(said)\n")
                warnings.append(said)
                experiment.policyApps = true
                experiment.policies = [.tenant]
            }
        } else {
            guard FileManager.default.fileExists(atPath: name) else {
                throw World.Failure(description: "no experiment \"\(name)\": not a built-in (\(BuiltIn.names.joined(separator: ", "))) and no such file")
            }
            let folder = URL(fileURLWithPath: name, relativeTo: cwd).deletingLastPathComponent()
            do {
                experiment = try ExperimentFile.load(try Catalog.read(name), file: Catalog.relative(name), knownApp: known,
                                                     appNames: Catalog.appNames(installed: installed, entries: entries),
                                                     policy: { Self.resolvePolicy($0, from: folder, root: root) })
            } catch {
                throw World.Failure(description: error.description)
            }
            base = folder
        }
        if parties == .policyApps { experiment.policyApps = true }
        if !policies.isEmpty && random == nil {
            experiment.policies = given
            base = cwd
        }
        // Policy files resolve against the experiment file's folder (the project for built-ins).
        func absolute(_ ref: PolicyRef, from folder: URL) -> PolicyRef {
            guard case let .file(path) = ref, !path.hasPrefix("/") else { return ref }
            return .file(URL(fileURLWithPath: path, relativeTo: folder).standardizedFileURL.path)
        }
        experiment.policies = experiment.policies.map { absolute($0, from: base) }
        var diffLabels: [String]?
        if diff.count >= 2 {
            var labels: [String] = []
            for d in diff {
                if let existing = experiment.policies.first(where: { $0.label == d || $0.description == d }) {
                    labels.append(existing.label)
                    continue
                }
                let sample = samplePolicies.first { $0.label == d }.map { absolute($0, from: root) }
                let ref = sample ?? absolute(d == "tenant" ? .tenant : .file(d), from: cwd)
                experiment.policies.append(ref)
                labels.append(ref.label)
            }
            diffLabels = labels
        }

        let tenantPath = tenant ?? experiment.tenant.map { URL(fileURLWithPath: $0, relativeTo: base).standardizedFileURL.path }
            ?? root.appendingPathComponent("Policies/contoso/tenant.json").path
        var baseTenant = try Self.tenant(tenantPath, root: root, warnings: &warnings)
        var groupNotes = Catalog.resolveAppGroups(&baseTenant, entries: entries, installed: installed)
        var tenants: [String: Tenant] = [:]
        var files: [String: String] = [:]
        for ref in experiment.policies {
            var t = baseTenant
            if case let .file(path) = ref {
                warnings += try World.apply(path, to: &t).map(\.description)
                files[ref.label] = path
                let applied = try World.applyTargets(path, to: &t, entries: entries, installed: installed)
                if applied.targets {
                    // App configurations reach managed apps only (the tenant loader refuses one
                    // naming an app no policy targets): with the file's own apps, those of the
                    // tenant's other apps go, for the prediction and the broker alike.
                    t.keepConfigurationsOfManagedApps()
                }
                groupNotes += applied.notes
            }
            tenants[ref.label] = t
        }
        for note in groupNotes { StandardStreams.writeError("matrix: \(note)\n") }
        warnings += groupNotes
        let ordered = experiment.policies.compactMap { tenants[$0.label] }
        let apps = try Self.withStandIns(&experiment, installed: installed, entries: entries, tenants: ordered,
                                         baseTenant: ordered.first ?? baseTenant, warnings: &warnings)
        try Self.checkAccounts(experiment, tenant: baseTenant, file: tenantPath)
        try Self.checkDevices(experiment, apps: apps)
        let pairs = apps.map { (name: $0.name, manifest: $0.manifest) }
        var predictors: [String: Predictor] = [:]
        for (label, t) in tenants {
            predictors[label] = Predictor(engine: PolicyEngine(tenant: t, apps: apps.map(\.manifest)), apps: pairs)
        }
        let access: ConditionalAccessSettings
        do {
            access = try ConditionalAccessFile.load(try Catalog.read(tenantPath), file: Catalog.relative(tenantPath), tenant: baseTenant).settings
        } catch {
            throw World.Failure(description: error.description)
        }
        return MatrixSetup(experiment: experiment, predictors: predictors, tenantFile: URL(fileURLWithPath: tenantPath, relativeTo: cwd).standardizedFileURL.path,
                           policyFiles: files, apps: apps, root: root, diff: diffLabels,
                           targeting: tenants.mapValues(DevicePlan.targeting),
                           catalog: Catalog.relative(catalog ?? Catalog.builtInCatalogPath(root: root)), warnings: warnings,
                           conditionalAccess: access)
    }

    static func tenant(_ path: String?, root: URL, warnings: inout [String]) throws -> Tenant {
        let p = path ?? root.appendingPathComponent("Policies/contoso/tenant.json").path
        do {
            let loaded = try Catalog.loadTenant(p)
            World.warn(loaded.warnings)
            warnings += loaded.warnings.map(\.description)
            return loaded.tenant
        } catch { throw World.Failure(description: error.description) }
    }
}

/// Progress on standard error: a bar on a terminal, a plain line per tenth otherwise.
package final class Progress: Sendable {
    let total: Int
    /// Cells done, and the tenth last reported (a plain line per tenth).
    private let counts = Mutex((done: 0, lastTenth: -1))
    private let terminal = isatty(2) == 1

    package init(total: Int) { self.total = total }

    package func advance(_ n: Int = 1) {
        counts.withLock { counts in
            counts.done = min(total, counts.done + n)
            let done = counts.done
            if terminal {
                let width = 30
                let filled = total == 0 ? width : done * width / total
                let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
                StandardStreams.writeError("\r[\(bar)] \(done)/\(total) cells")
            } else {
                let tenth = total == 0 ? 10 : done * 10 / total
                if tenth != counts.lastTenth {
                    counts.lastTenth = tenth
                    StandardStreams.writeError("matrix: \(done)/\(total) cells\n")
                }
            }
        }
    }

    package func finish() {
        if terminal { StandardStreams.writeError("\n") }
    }
}
