import ArgumentParser
import Foundation
import Glibc
import MAMCatalog
import MAMMatrix
import MAMPolicy

extension MatrixFormat: ExpressibleByArgument {}

struct MatrixCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "matrix",
        abstract: "Run a sharing-matrix experiment between real sandboxed apps.",
        discussion: """
            Every cell is one attempt: under one policy, a source app (signed in, acting under an \
            identity) tries one channel towards a target app: open-in, send and passive receive, \
            import, paste, open-url, save-to LOCATION, open-from LOCATION, login and logout. \
            Live (the default), mamlaunch starts mambroker (one per policy) and the apps in their \
            sandboxes, keeps them running across cells, makes each perform each action in its \
            scripted mode and records what arrived where: payload hash, owner, readable or \
            ciphertext, the identity it arrived under, the URL as delivered. Every cell is also \
            answered by the engine alone; --predict answers from the engine only.

            A cell fails when its live answer differs from the prediction or from the outcome the \
            experiment expects; any failed cell makes the exit status 1, and each is printed with \
            both sides and the broker's audit records.

            EXPERIMENT is a built-in (default: every channel × the sample policies × managed, \
            personal and unmanaged parties; exit-criteria: seed 002's send, import, passive \
            receive and login/logout tables with their expected outcomes) or an experiment file \
            (JSON or YAML; docs/MATRIX.md, schema docs/experiment.schema.json).

            --random N --seed S makes N random cells (policies, parties, identities, channels) and \
            checks the leak invariant live: org data never arrives readable at a party the policy \
            forbids.

            Examples:
              mamlaunch matrix --out matrix.html
              mamlaunch matrix exit-criteria
              mamlaunch matrix --predict --diff managed-only allow-all
              mamlaunch matrix --random 200 --seed 7
              mamlaunch matrix --parties policy-apps --policy L2.json --policy L3.json --diff L2 L3
            """
    )

    enum Mode: String, EnumerableFlag {
        case live, predict
        static func help(for value: Mode) -> ArgumentHelp? {
            value == .live ? "Run the real apps through the broker (the default)." : "Answer from the engine alone; start nothing."
        }
    }

    @Argument(help: ArgumentHelp("A built-in experiment (\(BuiltIn.names.joined(separator: ", "))) or an experiment file.", valueName: "EXPERIMENT|FILE"))
    var experiment: String = "default"

    @Option(name: .customLong("policy"), help: ArgumentHelp("Run under this policy file instead of the experiment's policies (repeatable; `tenant` is the tenant as it is).", valueName: "FILE"))
    var policies: [String] = []

    @Flag(exclusivity: .exclusive)
    var mode: Mode = .live

    @Option(help: ArgumentHelp("table, md, csv, json (one object per cell and line) or html (default: html when --out ends in .html, else table).", valueName: "FORMAT"))
    var format: MatrixFormat?

    @Option(help: ArgumentHelp("Write the report here instead of standard output.", valueName: "FILE"))
    var out: String?

    @Option(parsing: .upToNextOption, help: ArgumentHelp("Show only the cells whose outcome changes between two policies (labels or files).", valueName: "POLICY_A POLICY_B"))
    var diff: [String] = []

    @Option(help: ArgumentHelp("Policies run at once, each with its own broker and apps (live).", valueName: "N"))
    var jobs: Int = max(1, ProcessInfo.processInfo.activeProcessorCount)

    @Option(help: ArgumentHelp("Cells run at once under each policy (live), each between apps no other running cell uses; a link (open-url) and a cell that starts an app run alone.", valueName: "N"))
    var cellsInFlight: Int = 4

    @Option(help: ArgumentHelp("Instead of an experiment: N random cells.", valueName: "N"))
    var random: Int?

    @Option(help: ArgumentHelp("The random cells' seed.", valueName: "S"))
    var seed: UInt64 = 1

    @Option(help: ArgumentHelp("The tenant file or a Graph tenant export (docs/POLICIES.md; default: the experiment's, else Policies/contoso/tenant.json). With the default experiment, the parties are made from this tenant's policies, users and apps.", valueName: "FILE"))
    var tenant: String?

    @Option(help: ArgumentHelp("experiment (its own list) or policy-apps: a party per app the policies target, signed in as a user they are assigned to, plus the catalog's unmanaged apps (docs/MATRIX.md).", valueName: "SOURCE"))
    var parties: PartiesSource?

    @Option(help: ArgumentHelp("An app catalog (docs/CATALOG.md) whose entries add to or replace the built-in one's: apps no Apps/ folder provides run live as stand-ins under manifests made from them.", valueName: "FILE"))
    var catalog: String?

    /// Test-only: makes each policy's broker flip its decisions on one channel (mambroker's hidden
    /// --test-flip), so that a test can show a disagreement is caught. Not in --help.
    @Option(help: .hidden)
    var testFlip: String?

    @OptionGroup var sandbox: SandboxOptions

    func validate() throws {
        guard diff.isEmpty || diff.count == 2 else { throw ValidationError("--diff takes two policies: --diff POLICY_A POLICY_B") }
        guard (1...64).contains(jobs) else { throw ValidationError("--jobs must be 1 to 64") }
        guard (1...64).contains(cellsInFlight) else { throw ValidationError("--cells-in-flight must be 1 to 64") }
        if random != nil && parties == .policyApps { throw ValidationError("--random makes its own parties; --parties policy-apps is for experiments") }
        if let random, !(1...100_000).contains(random) { throw ValidationError("--random must be 1 to 100000") }
    }

    func run() throws {
        let started = Date()
        let setup = try MatrixSetup.load(experiment: experiment, policies: policies, diff: diff, random: random, seed: seed, tenant: tenant,
                                         parties: parties, catalog: catalog)
        let manifest = { (app: String) in setup.predictors.values.first?.manifest(app) }
        let cells = Plan.cells(setup.experiment, bundleID: { manifest($0)?.bundleID },
                               handles: { app, scheme in manifest(app)?.handles(scheme: scheme) ?? false },
                               lands: { setup.predictors[$0.policy]?.linkOpens(in: $0, payload: setup.experiment.payload) ?? true })
        guard !cells.isEmpty else { throw World.Failure(description: "the experiment has no cells") }
        let progress = Progress(total: cells.count)
        var results = MatrixPrediction.run(cells, predictors: setup.predictors, payload: setup.experiment.payload)
        // Decided once, before any cell: a kernel that leaves a class uncovered refuses the
        // run in one line instead of failing every cell with the same reason.
        if mode == .live && geteuid() != 0 {
            // Said once, before anything starts: every cell would otherwise fail on its own.
            throw World.Failure(description: "the live matrix needs root: it starts mambroker and gives each app a uid, namespaces and cgroups of its own; run it as root (sudo), or answer from the engine alone with --predict, which does not")
        }
        let containment = mode == .live ? try sandbox.decide("run the matrix live") : nil
        if mode == .live {
            Interruption.install("mamlaunch matrix")
            let runner = LiveMatrix(setup: setup, jobs: jobs, progress: progress, brokerTestFlip: testFlip,
                                    allowWeaker: sandbox.allowWeakerSandbox, cellsInFlight: cellsInFlight)
            results = try runner.run(results)
        } else {
            progress.advance(cells.count)
        }
        progress.finish()
        // Interrupted: the report has the cells that were answered, and says so.
        let interrupted = Interruption.received
        if interrupted != nil { results = results.filter { $0.live != nil } }
        let seconds = Date().timeIntervalSince(started)
        var report = MatrixReport(experiment: setup.experiment, results: results, live: mode == .live, seconds: seconds)
        report.sandbox = containment?.statement
        for (label, file) in setup.policyFiles {
            if let policy = try? Catalog.loadPolicyFile(file).first?.policy {
                report.policyInfo[label] = PolicyInfo(displayName: policy.displayName, file: Catalog.relative(file),
                                                      settings: MatrixDiff.settingValues(policy))
            }
        }
        let used = Set(cells.flatMap { [$0.source.app.lowercased()] + ($0.target.map { [$0.app.lowercased()] } ?? []) })
        report.standIns = setup.apps.compactMap { a in
            guard let entry = a.standIn, used.contains(a.manifest.bundleID.lowercased()) || used.contains(a.name.lowercased()) else { return nil }
            return "\(entry.name) (\(a.manifest.bundleID))"
        }
        let diffResult = setup.diff.map { d in
            // The policies' settings, so that each change names the setting behind it.
            var settings: [String: [String: String]] = [:]
            for label in [d.0, d.1] {
                if let file = setup.policyFiles[label], let policy = try? Catalog.loadPolicyFile(file).first?.policy {
                    settings[label] = MatrixDiff.settingValues(policy)
                }
            }
            return MatrixDiff(results, policyA: d.0, policyB: d.1, settings: settings)
        }
        let chosen = format ?? (out?.hasSuffix(".html") == true ? .html : .table)
        let text = report.render(chosen, diff: diffResult)
        if let out {
            do { try Data((text + "\n").utf8).write(to: URL(fileURLWithPath: out)) } catch {
                throw World.Failure(description: "cannot write \(out): \(error.localizedDescription)")
            }
        } else {
            print(text)
        }
        // Failures go to standard error too when the report went elsewhere or is not a table.
        if out != nil || chosen != .table {
            for r in report.failures { FileHandle.standardError.write(Data((MatrixReport.explainFailure(r) + "\n").utf8)) }
        }
        for line in Violations.shared.summary { FileHandle.standardError.write(Data("mamlaunch: \(line)\n".utf8)) }
        if !report.standIns.isEmpty { FileHandle.standardError.write(Data("matrix: \(report.standInLine)\n".utf8)) }
        let cut = interrupted.map { "interrupted (\(Interruption.name($0))) after \(results.count) of \(cells.count) cells; " } ?? ""
        FileHandle.standardError.write(Data(("matrix: \(cut)\(report.summary)" + (out.map { "; report in \($0)" } ?? "") + "\n").utf8))
        Interruption.exitIfInterrupted()
        if !report.failures.isEmpty { throw ExitCode(1) }
    }
}

/// The experiment and, for each of its policies, the engine that answers it.
struct MatrixSetup {
    var experiment: Experiment
    /// By policy label.
    var predictors: [String: Predictor]
    /// The tenant each policy's broker loads (absolute paths), by policy label.
    var tenantFile: String
    var policyFiles: [String: String]
    /// The policy files (by label) that name the apps they target (`apps`): they target those
    /// apps instead of the tenant policy's.
    var policyFilesWithApps: Set<String> = []
    /// The installed apps and the stand-ins the run needs.
    var apps: [CatalogApp]
    var root: URL
    var diff: (String, String)?

    static func load(experiment name: String, policies: [String], diff: [String], random: Int?, seed: UInt64,
                     tenant: String?, parties: PartiesSource? = nil, catalog: String? = nil) throws -> MatrixSetup {
        guard let root = Catalog.projectRoot() else {
            throw World.Failure(description: "no MAMLab project found here (its Apps/ and Policies/); run from the project or set MAMLAB_ROOT")
        }
        let found = Catalog.loadApps(in: root.appendingPathComponent("Apps"))
        let installed = found.apps
        let entries = try Self.catalogEntries(root: root, extra: catalog)
        let known: (String) -> Bool = { name in
            Catalog.find(name, in: installed) != nil
                || entries.contains { $0.bundleID.lowercased() == name.lowercased() || $0.name.lowercased() == name.lowercased() }
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
            let users = try Self.tenant(tenant, root: root).users.map(\.upn)
            let pool: [PolicyRef] = policies.isEmpty ? samplePolicies : given
            // Random cells pick among the scripted sample apps that are built (for a live run).
            let scripted = installed.filter { a in
                BuiltIn.scriptedApps.contains { $0.lowercased() == a.name.lowercased() }
                    && (a.builtExecutable().map(FileManager.default.isExecutableFile(atPath:)) ?? false)
            }.map { (name: $0.name, manifest: $0.manifest) }
            let left = BuiltIn.scriptedApps.filter { name in !scripted.contains { $0.name.lowercased() == name.lowercased() } }
            if !left.isEmpty {
                FileHandle.standardError.write(Data("matrix: random cells leave out \(left.joined(separator: ", ")): not built beside mamlaunch\n".utf8))
            }
            experiment = RandomCells.experiment(count: random, seed: seed, apps: scripted, users: users, policies: pool)
            if !policies.isEmpty { base = cwd }
        } else if let builtIn = BuiltIn.experiment(named: name) {
            experiment = builtIn
            // The built-ins' parties are the sample tenant's (adele of Contoso): another tenant
            // gets parties made from its own policies, users and apps.
            if let tenant, !Self.isSampleTenant(tenant, root: root), parties == nil {
                guard name == "default" else {
                    throw ValidationError("the built-in \(name) experiment is written for the sample tenant's users (adele@contoso.com); with --tenant \(tenant) give --parties policy-apps or an experiment file")
                }
                FileHandle.standardError.write(Data("matrix: the default experiment's parties are the sample tenant's; with --tenant \(tenant) they are made from that tenant's policies, users and apps (--parties policy-apps), under the tenant's own policies\n".utf8))
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
        var diffLabels: (String, String)?
        if diff.count == 2 {
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
            diffLabels = (labels[0], labels[1])
        }

        let tenantPath = tenant ?? experiment.tenant.map { URL(fileURLWithPath: $0, relativeTo: base).standardizedFileURL.path }
            ?? root.appendingPathComponent("Policies/contoso/tenant.json").path
        let baseTenant = try Self.tenant(tenantPath, root: root)
        var tenants: [String: Tenant] = [:]
        var files: [String: String] = [:]
        var filesWithApps = Set<String>()
        for ref in experiment.policies {
            var t = baseTenant
            if case let .file(path) = ref {
                try World.apply(path, to: &t)
                files[ref.label] = path
                if try Self.applyTargets(path, to: &t) { filesWithApps.insert(ref.label) }
            }
            tenants[ref.label] = t
        }
        let ordered = experiment.policies.compactMap { tenants[$0.label] }
        let apps = try Self.withStandIns(&experiment, installed: installed, entries: entries, tenants: ordered,
                                         baseTenant: ordered.first ?? baseTenant)
        try Self.checkAccounts(experiment, tenant: baseTenant, file: tenantPath)
        let pairs = apps.map { (name: $0.name, manifest: $0.manifest) }
        var predictors: [String: Predictor] = [:]
        for (label, t) in tenants {
            predictors[label] = Predictor(engine: PolicyEngine(tenant: t, apps: apps.map(\.manifest)), apps: pairs)
        }
        return MatrixSetup(experiment: experiment, predictors: predictors, tenantFile: URL(fileURLWithPath: tenantPath, relativeTo: cwd).standardizedFileURL.path,
                           policyFiles: files, policyFilesWithApps: filesWithApps, apps: apps, root: root, diff: diffLabels)
    }

    static func tenant(_ path: String?, root: URL) throws -> Tenant {
        let p = path ?? root.appendingPathComponent("Policies/contoso/tenant.json").path
        do {
            let loaded = try Catalog.loadTenant(p)
            World.warn(loaded.warnings)
            return loaded.tenant
        } catch { throw World.Failure(description: error.description) }
    }
}

/// Progress on standard error: a bar on a terminal, a plain line per tenth otherwise.
final class Progress: @unchecked Sendable {
    let total: Int
    private var done = 0
    private var lastTenth = -1
    private let lock = NSLock()
    private let terminal = isatty(2) == 1

    init(total: Int) { self.total = total }

    func advance(_ n: Int = 1) {
        lock.lock()
        defer { lock.unlock() }
        done = min(total, done + n)
        if terminal {
            let width = 30
            let filled = total == 0 ? width : done * width / total
            let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
            FileHandle.standardError.write(Data("\r[\(bar)] \(done)/\(total) cells".utf8))
        } else {
            let tenth = total == 0 ? 10 : done * 10 / total
            if tenth != lastTenth {
                lastTenth = tenth
                FileHandle.standardError.write(Data("matrix: \(done)/\(total) cells\n".utf8))
            }
        }
    }

    func finish() {
        if terminal { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
