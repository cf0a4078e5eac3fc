import ArgumentParser
import Foundation
import Glibc
import MAMCatalog
import MAMLauncher
import MAMMatrix
import MAMMatrixLive
import MAMPolicy
import MAMWire

extension MatrixFormat: ExpressibleByArgument {}
extension PartiesSource: ExpressibleByArgument {}
extension GateRule: ExpressibleByArgument {}
extension MatrixShard.Part: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument) }
}

struct MatrixCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "matrix",
        abstract: "Run a sharing-matrix experiment between real sandboxed apps.",
        discussion: """
            Every cell is one attempt: under one policy, a source app (signed in, acting under an \
            identity) tries one channel towards a target app: open-in, send and passive receive, \
            import, paste, open-url, save-to LOCATION, open-from LOCATION, login and logout. \
            Live (the default), mamlaunch starts mambroker and the apps in their sandboxes, keeps \
            them running across cells and policies (the broker switched from policy to policy), \
            makes each perform each action in its \
            scripted mode and records what arrived where: payload hash, owner, readable or \
            ciphertext, the identity it arrived under, the URL as delivered. Every cell is also \
            answered by the engine alone; --predict answers from the engine only.

            A cell fails when its live answer differs from the prediction or from the outcome the \
            experiment expects; any failed cell makes the exit status 1, and each is printed with \
            both sides and the broker's audit records.

            EXPERIMENT is a built-in (default: every channel × the sample policies × managed, \
            personal and unmanaged parties; exit-criteria: seed 002's send, import, passive \
            receive and login/logout tables with their expected outcomes) or an experiment file \
            (JSON or YAML; docs/MATRIX.md, schema docs/experiment.schema.json). With the \
            default experiment, the parties are made from the --tenant's policies, users and apps.

            --random N --seed S makes N random cells (policies, parties, identities, channels) and \
            checks the leak invariant live: org data never arrives readable at a party the policy \
            forbids.

            Examples:
              mamlaunch matrix --out matrix.html
              mamlaunch matrix exit-criteria
              mamlaunch matrix --predict --diff managed-only allow-all
              mamlaunch matrix --random 200 --seed 7
              mamlaunch matrix --parties policy-apps --policy L2.json --policy L3.json --diff L2 L3
              mamlaunch matrix --parties policy-apps --policy L1.json --policy L2.json --policy L3.json --diff L1 L2 L3

            --diff lists the cells whose answer changes from policy to policy (a column each, in \
            the order given), each with the settings that changed it, after a summary that groups \
            them by setting and outcome. A change of the deciding rule alone, the data going where \
            it went, is counted but listed only with --diff-rules.
            """,
        subcommands: [MatrixMerge.self]
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

    @Option(help: ArgumentHelp("table, md, csv, json (one object per cell and line), html (default: html when --out ends in .html, else table), junit (JUnit XML: a test case per cell, or per changed cell with --diff) or sarif (SARIF 2.1.0: a result per --fail-on finding, at the setting that caused it).", valueName: "FORMAT"))
    var format: MatrixFormat?

    @Option(help: ArgumentHelp("Write the report here instead of standard output.", valueName: "FILE"))
    var out: String?

    @Option(parsing: .upToNextOption, help: ArgumentHelp("Show only the cells whose answer changes from policy to policy, two or more in order (labels or files).", valueName: "POLICY_A POLICY_B ..."))
    var diff: [String] = []

    @Flag(help: "With --diff: list the cells where only the deciding rule changes too.")
    var diffRules = false

    @Option(name: .customLong("fail-on"), help: ArgumentHelp("Exit 3 when the run finds this (repeatable): widened (with --diff: org data reaches a party it did not reach under the policy before), leak (org data arrived readable where the policy forbids it), changed (with --diff: any answer changed).", valueName: "RULE"))
    var failOn: [GateRule] = []

    @Option(help: ArgumentHelp("Brokers run at once (live). Policies that target the same apps for the same users share one broker and one set of running apps, switched from policy to policy; the others, and each login and logout, get their own.", valueName: "N"))
    var jobs: Int = max(1, ProcessInfo.processInfo.activeProcessorCount)

    @Flag(help: "Give every policy a broker and apps of its own, started afresh, instead of switching a shared one between policies (live; slower).")
    var brokerPerPolicy = false

    @Option(help: ArgumentHelp("Cells run at once under each policy (live), each between apps no other running cell uses; a link (open-url) and a cell that starts an app run alone.", valueName: "N"))
    var cellsInFlight: Int = 4

    @Option(help: ArgumentHelp("Instead of an experiment: N random cells.", valueName: "N"))
    var random: Int?

    @Option(help: ArgumentHelp("The random cells' seed.", valueName: "S"))
    var seed: UInt64 = 1

    @OptionGroup var tenantFile: TenantOption

    @Option(help: ArgumentHelp("experiment (its own list) or policy-apps: a party per app the policies target, signed in as a user they are assigned to, plus the catalog's unmanaged apps (docs/MATRIX.md).", valueName: "SOURCE"))
    var parties: PartiesSource?

    @OptionGroup var catalogFile: CatalogOption

    /// Test-only: makes each policy's broker flip its decisions on one channel (mambroker's hidden
    /// --test-flip), so that a test can show a disagreement is caught. Not in --help.
    @Option(help: .hidden)
    var testFlip: String?

    @Option(help: ArgumentHelp("Answer only part K of N of the planned cells (a contiguous part, cells keeping their ids), for a campaign split over processes or machines; with --format json, `mamlaunch matrix merge` joins the parts.", valueName: "K/N"))
    var shard: MatrixShard.Part?

    @OptionGroup var sandbox: SandboxOptions

    func validate() throws {
        guard diff.isEmpty || diff.count >= 2 else { throw ValidationError("--diff takes two policies or more: --diff POLICY_A POLICY_B ...") }
        guard Set(diff).count == diff.count else { throw ValidationError("--diff names a policy twice") }
        if diffRules && diff.isEmpty { throw ValidationError("--diff-rules goes with --diff") }
        for rule in failOn where rule != .leak && diff.isEmpty {
            throw ValidationError("--fail-on \(rule.rawValue) compares policies: give --diff BEFORE AFTER")
        }
        guard (1...64).contains(jobs) else { throw ValidationError("--jobs must be 1 to 64") }
        guard (1...64).contains(cellsInFlight) else { throw ValidationError("--cells-in-flight must be 1 to 64") }
        if random != nil && parties == .policyApps { throw ValidationError("--random makes its own parties; --parties policy-apps is for experiments") }
        if let random, !(1...100_000).contains(random) { throw ValidationError("--random must be 1 to 100000") }
    }

    func run() throws {
        let started = Date()
        let setup = try MatrixSetup.load(experiment: experiment, policies: policies, diff: diff, random: random, seed: seed, tenant: tenantFile.tenant,
                                         parties: parties, catalog: catalogFile.catalog)
        let manifest = { (app: String) in setup.predictors.values.first?.manifest(app) }
        let planned = Plan.cells(setup.experiment, bundleID: { manifest($0)?.bundleID },
                               handles: { app, scheme in manifest(app)?.handles(scheme: scheme) ?? false },
                               lands: { setup.predictors[$0.policy]?.linkOpens(in: $0, payload: setup.experiment.payload) ?? true })
        guard !planned.isEmpty else { throw World.Failure(description: "the experiment has no cells") }
        // A shard answers its contiguous part of the plan, the cells keeping their ids.
        let part = shard.map { MatrixShard.Part(index: $0.index, count: $0.count, planned: planned.count) }
        let cells = part.map { Array($0.slice(planned)) } ?? planned
        let progress = Progress(total: cells.count)
        var results = MatrixPrediction.run(cells, predictors: setup.predictors, payload: setup.experiment.payload)
        // Decided once, before any cell: a kernel that leaves a class uncovered refuses the
        // run in one line instead of failing every cell with the same reason.
        if mode == .live && geteuid() != 0 {
            // Said once, before anything starts: every cell would otherwise fail on its own.
            throw World.Failure(description: "the live matrix needs root (sudo) to give each app a sandbox of its own; --predict answers from the engine alone, without it")
        }
        let containment = mode == .live ? try sandbox.decide("run the matrix live") : nil
        if mode == .live {
            Interruption.install("mamlaunch matrix")
            let runner = LiveMatrix(setup: setup, jobs: jobs, progress: progress, brokerTestFlip: testFlip,
                                    allowWeaker: sandbox.allowWeakerSandbox, cellsInFlight: cellsInFlight, brokerPerPolicy: brokerPerPolicy)
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
        report.shard = part
        if let interrupted {
            let answered = Set(results.map(\.cell.policy))
            report.partial = PartialRun(reason: "interrupted (\(Interruption.name(interrupted)))", answered: results.count, planned: cells.count,
                                        notRun: setup.experiment.policies.map(\.label).filter { !answered.contains($0) })
        }
        for (label, file) in setup.policyFiles {
            if let policy = try? Catalog.loadPolicyFile(file).first?.policy {
                // A Graph JSON file's keys are known: the settings it leaves out are defaults.
                let set = Catalog.settingNodes(ofPolicyIn: file)
                let values = MatrixDiff.settingValues(policy)
                report.policyInfo[label] = PolicyInfo(displayName: policy.displayName, file: Catalog.relative(file), settings: values,
                                                      defaults: set.isEmpty ? [] : Set(values.keys.filter { set[$0] == nil }))
            }
        }
        report.inputs = RunInputs(tenant: Catalog.relative(setup.tenantFile), assignments: Self.assignments(setup, labels: report.policies),
                                  catalog: setup.catalog, warnings: setup.warnings,
                                  device: setup.predictors.values.first.map { $0.engine.tenant.device.profile.summary })
        // A tenant as it is holds its own policies: named with their groups, not as "tenant".
        for label in report.policies where report.policyInfo[label] == nil {
            guard let tenant = setup.predictors[label]?.engine.tenant, label == "tenant" else { continue }
            let named = tenant.policies.map { p in
                var to = p.allUsers ? "all users" : p.includedGroups.isEmpty ? "no group" : "groups " + p.includedGroups.joined(separator: ", ")
                if !p.excludedGroups.isEmpty { to += ", except " + p.excludedGroups.joined(separator: ", ") }
                return "\(p.displayName) (\(to))"
            }
            report.policyInfo[label] = PolicyInfo(displayName: "the tenant's policies: " + named.joined(separator: "; "),
                                                  file: Catalog.relative(tenantFile.tenant ?? "Policies/contoso/tenant.json"), settings: [:])
        }
        let used = Set(cells.flatMap { [$0.source.app.lowercased()] + ($0.target.map { [$0.app.lowercased()] } ?? []) })
        report.standIns = setup.apps.compactMap { a in
            guard let entry = a.standIn, used.contains(a.manifest.bundleID.lowercased()) || used.contains(a.name.lowercased()) else { return nil }
            return "\(entry.name) (\(a.manifest.bundleID))"
        }
        let diffResult = setup.diff.map { labels in
            // The policies' settings, so that each change names the setting behind it.
            var settings: [String: [String: String]] = [:]
            for label in labels {
                if let file = setup.policyFiles[label], let policy = try? Catalog.loadPolicyFile(file).first?.policy {
                    settings[label] = MatrixDiff.settingValues(policy)
                }
            }
            return MatrixDiff(results, policies: labels, settings: settings, includeRuleOnly: diffRules)
        }
        let chosen = format ?? (out?.hasSuffix(".html") == true ? .html : .table)
        let gate = failOn.isEmpty ? nil : GateVerdict(rules: failOn, report: report, diff: diffResult)
        var sources: [String: PolicySource] = [:]
        for (label, file) in setup.policyFiles {
            sources[label] = PolicySource(uri: Catalog.relative(file), settings: Catalog.settingNodes(ofPolicyIn: file))
        }
        let text = report.render(chosen, diff: diffResult, gate: gate, sources: sources)
        if let out {
            do { try Data((text + "\n").utf8).write(to: URL(fileURLWithPath: out)) } catch {
                throw World.Failure(description: "cannot write \(out): \(error.localizedDescription)")
            }
        } else {
            print(text)
        }
        // Failures go to standard error too when the report went elsewhere or is not a table.
        if out != nil || chosen != .table {
            for r in report.failures { StandardStreams.writeError((MatrixReport.explainFailure(r) + "\n")) }
        }
        for line in Violations.shared.summary { StandardStreams.writeError("mamlaunch: \(line)\n") }
        if !report.standIns.isEmpty { StandardStreams.writeError("matrix: \(report.standInLine)\n") }
        let cut = interrupted.map { "interrupted (\(Interruption.name($0))) after \(results.count) of \(cells.count) cells; " } ?? ""
        StandardStreams.writeError(("matrix: \(cut)\(report.summary)" + (out.map { "; report in \($0)" } ?? "") + "\n"))
        if let gate { StandardStreams.writeError("matrix: \(gate.line)\n") }
        Interruption.exitIfInterrupted()
        if !report.failures.isEmpty { throw ExitCode(1) }
        if let gate, !gate.passed { throw ExitCode(3) }
    }

    /// Whom each policy of the run reaches, a line per policy run: its name, then each
    /// assignment that reaches a user ("groups sales: adele@contoso.com"); assignments that reach
    /// nobody (the sample tenant's pilot groups) are left out.
    static func assignments(_ setup: MatrixSetup, labels: [String]) -> [String] {
        var lines: [String] = []
        for label in labels {
            guard let tenant = setup.predictors[label]?.engine.tenant else { continue }
            var names: [String] = [], reach: [String] = []
            for p in tenant.policies {
                let users = tenant.users.filter { p.isAssigned(toGroups: $0.groups) }.map(\.upn)
                guard !users.isEmpty else { continue }
                if !names.contains(p.displayName) { names.append(p.displayName) }
                var to = p.allUsers ? "all users" : "groups " + p.includedGroups.joined(separator: ", ")
                if !p.excludedGroups.isEmpty { to += " except " + p.excludedGroups.joined(separator: ", ") }
                reach.append("\(to): \(users.joined(separator: ", "))")
            }
            let line = "\(label) (\(names.isEmpty ? "no policy reaches a user" : names.joined(separator: "; "))): " + (reach.isEmpty ? "nobody" : reach.joined(separator: "; "))
            if !lines.contains(line) { lines.append(line) }
        }
        return lines
    }
}
