import Crypto
import Dispatch
import Foundation
import Glibc
import MAMCatalog
import MAMLauncher
import MAMMatrix
import MAMPolicy
import MAMSandbox
import MAMScript
import MAMWire
import Synchronization

/// The live side of `mamlaunch matrix`: the policies that target the same apps for the same
/// users run on one broker, its apps started in parallel in their sandboxes and kept running
/// across cells and policies, the broker switched to the next policy between them (PolicyRun.switchPolicy);
/// each cell performed through the apps' scripted mode and judged by what arrived. Runs that
/// cannot share a broker run in parallel up to --jobs.
package struct LiveMatrix {
    var setup: MatrixSetup
    var jobs: Int
    var progress: Progress
    /// Test-only: passed to mambroker as its hidden `--test-flip` (see MAMBrokerCommand).
    var brokerTestFlip: String?
    /// --allow-weaker-sandbox, for each app the run starts.
    var allowWeaker = false
    /// --cells-in-flight: cells run at once under one policy (CellLanes).
    var cellsInFlight = 1
    /// --broker-per-policy: every policy on a broker and apps of its own, started afresh.
    var brokerPerPolicy = false

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    package init(setup: MatrixSetup, jobs: Int, progress: Progress, brokerTestFlip: String?, allowWeaker: Bool, cellsInFlight: Int,
                 brokerPerPolicy: Bool = false) {
        self.setup = setup
        self.jobs = jobs
        self.progress = progress
        self.brokerTestFlip = brokerTestFlip
        self.allowWeaker = allowWeaker
        self.cellsInFlight = cellsInFlight
        self.brokerPerPolicy = brokerPerPolicy
    }

    /// Where the runs' device folders go (with a trailing slash): TMPDIR when it is set, else
    /// the memory file system at /dev/shm when there is one, else /tmp. A folder lives only as
    /// long as its run, and holds thousands of small files (a file per save, the apps'
    /// containers): on ext4, creating and removing them was a tenth of the framework run's CPU
    /// and a quarter of a second at its end. The apps never see it either way (the sandbox
    /// hides /dev/shm and the folder itself).
    package static let scratch: String = {
        if ProcessInfo.processInfo.environment["TMPDIR"] == nil, access("/dev/shm", W_OK | X_OK) == 0,
           let mounts = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8),
           mounts.split(separator: "\n").contains(where: { $0.split(separator: " ").dropFirst().prefix(2) == ["/dev/shm", "tmpfs"] }) {
            return "/dev/shm/"
        }
        let tmp = NSTemporaryDirectory()
        return tmp.hasSuffix("/") ? tmp : tmp + "/"
    }()

    /// Which broker runs which cells (DevicePlan): a device per targeting, split where an app
    /// would need two sets of accounts; a login or logout on a device of its own.
    func stints(_ predicted: [CellResult]) -> [DevicePlan.Stint] {
        var bundleOf: [String: String] = [:]
        for p in setup.experiment.parties { bundleOf[p.name] = Catalog.find(p.app, in: setup.apps)?.manifest.bundleID.lowercased() ?? p.app.lowercased() }
        return DevicePlan.stints(predicted.map(\.cell), targeting: setup.targeting, perPolicy: brokerPerPolicy) { p in
            bundleOf[p.name] ?? p.app.lowercased()
        }
    }

    /// Answers each predicted cell live; returns them with both sides.
    package func run(_ predicted: [CellResult]) throws -> [CellResult] {
        try checkExecutables(predicted)
        LaunchedPrograms.shared.prepare(executables(predicted))
        let stints = stints(predicted)
        let results = Locked(predicted)
        let errors = Locked<[String]>([])
        let queue = DispatchQueue(label: "matrix", attributes: .concurrent)
        let slots = DispatchSemaphore(value: jobs)
        let group = DispatchGroup()
        for stint in stints {
            slots.wait()
            if Interruption.received != nil { slots.signal(); break }
            group.enter()
            queue.async {
                defer { slots.signal(); group.leave() }
                var current = stint[0].policy
                do {
                    let run = try PolicyRun(setup: setup, policy: current, testFlip: brokerTestFlip, allowWeaker: allowWeaker)
                    defer { run.stop() }
                    run.cellsInFlight = cellsInFlight
                    for (n, part) in stint.enumerated() where Interruption.received == nil {
                        current = part.policy
                        if n > 0 { try run.switchPolicy(to: part.policy) }
                        try run.perform(part.cells.map { predicted[$0] }) { offset, result in
                            results.update { $0[part.cells[offset]] = result }
                            progress.advance()
                        }
                    }
                } catch {
                    errors.update { $0.append("policy \(current): \(error)") }
                }
            }
        }
        group.wait()
        // Interrupted, the errors are the interruption's: the cells done so far are the answer.
        if Interruption.received == nil, let first = errors.value.first { throw Failure(description: first) }
        return results.value
    }

    /// The programs the cells' apps run.
    func executables(_ cells: [CellResult]) -> Set<String> {
        let apps = Set(cells.flatMap { [$0.cell.source.app] + ($0.cell.target.map { [$0.app] } ?? []) })
        return Set(apps.compactMap { Catalog.find($0, in: setup.apps)?.builtExecutable() })
    }

    /// Every app a cell needs must be built beside mamlaunch, in scripted mode.
    func checkExecutables(_ cells: [CellResult]) throws {
        var missing: [String] = []
        for app in Set(cells.flatMap { [$0.cell.source.app] + ($0.cell.target.map { [$0.app] } ?? []) }).sorted() {
            guard let found = Catalog.find(app, in: setup.apps) else { missing.append("\(app) (no manifest)"); continue }
            if !(found.builtExecutable().map(FileManager.default.isExecutableFile(atPath:)) ?? false) {
                missing.append(found.executableName)
            }
        }
        guard missing.isEmpty else {
            throw Failure(description: "the live run needs the sample apps built beside mamlaunch with their scripted mode (--script, docs/SCRIPTING.md); missing: \(missing.joined(separator: ", ")). Build them (swift build), or answer from the engine alone with --predict")
        }
        guard FileManager.default.isExecutableFile(atPath: (Catalog.toolDirectory as NSString).appendingPathComponent("mambroker")) else {
            throw Failure(description: "mambroker is not built beside mamlaunch (swift build --product mambroker), or use --predict")
        }
    }
}

/// One broker's live run: the broker, its apps, its policies in turn, each policy's cells in order.
final class PolicyRun: @unchecked Sendable {
    let setup: MatrixSetup
    /// The policy the broker decides by now (switchPolicy), and every one it has.
    var policy: String
    var policies: [String]
    let device: String
    let broker: Process
    let manifests: [String: (manifest: AppManifest, executable: String)]
    /// The running apps, the accounts each was started with, and the apps being started: read
    /// by the lanes while a policy's first apps are still being added (perform).
    struct Running {
        var apps: [String: ScriptedApp] = [:]
        var accounts: [String: [String]] = [:]
        var starting: Set<String> = []
        /// Counts every change of the above: a cell's claim (CellLanes) depends on them only,
        /// and is worked out again only when they changed.
        var changes = 0
    }
    /// A Mutex of its own, not a Locked box: read at every pick of a cell, the generic box
    /// looked up its type's metadata at each read.
    let running = Mutex(Running())
    var apps: [String: ScriptedApp] {
        get { running.withLock { $0 }.apps }
        set { running.withLock { $0.apps = newValue; $0.changes += 1 } }
    }
    /// The accounts each running app was started with.
    var accounts: [String: [String]] {
        get { running.withLock { $0 }.accounts }
        set { running.withLock { $0.accounts = newValue; $0.changes += 1 } }
    }
    /// How a cell is performed on this device (the same on the embedded shell).
    let performer: CellPerformer
    let auditPath: String
    let auditTail: AuditTail
    /// The decision log's header, mapped once the broker has made the log.
    private let auditHeader = Mutex<AuditHeaderMap?>(nil)
    /// The tenant file the broker reads (written again for each policy: switchPolicy).
    let tenantPath: String
    /// The broker's stopper for an interruption (Interruption).
    let brokerOwned: Int

    /// Why an app of this run could not start: every later cell fails at once with it rather
    /// than trying again (an app that cannot start once will not start the next time).
    let startFailure = Mutex<String?>(nil)
    let allowWeaker: Bool
    /// Cells run at once (CellLanes), each between apps no other running cell uses.
    var cellsInFlight = 1

    init(setup: MatrixSetup, policy: String, testFlip: String?, allowWeaker: Bool = false) throws {
        self.allowWeaker = allowWeaker
        self.setup = setup
        self.policy = policy
        self.policies = [policy]
        let payload = setup.experiment.payload
        performer = CellPerformer(apps: setup.apps.map { ([$0.name, $0.manifest.bundleID], $0.manifest) }, payload: payload,
                                  documentSHA256: Self.sha256(payload.documentContent), textSHA256: Self.sha256(payload.text))
        // Made by root under a name no one can guess (TrustedPath): in /dev/shm or /tmp,
        // everyone's, a folder a local user made first would hold the run's keys.
        let base: String
        do { base = try TrustedPath.uniqueFolder(in: LiveMatrix.scratch, prefix: "mamlab-matrix-\(getpid())-", mode: 0o755) } catch {
            throw LiveMatrix.Failure(description: "cannot make the broker's folder: \(error)")
        }
        // A tenant or app that cannot be written leaves no folder behind.
        var serving = false
        defer { if !serving { try? Sandbox.removeFolder(base) } }
        device = base
        auditPath = base + "/audit/" + AuditFile.decisions
        auditTail = AuditTail(path: auditPath)
        try RotatingLog.privateFolder(base + "/logs")
        let tenant = try Self.writeTenant(setup, policy: policy, to: base + "/tenant.json")
        tenantPath = tenant
        // Named Apps/ in a root of its own: the broker starts an app that is not running with
        // `mamlaunch run BUNDLE` under MAMLAB_ROOT = the folder above it, stand-ins included.
        let appsFolder = try StandInApps.folder(setup.apps, installed: setup.root.appendingPathComponent("Apps"), in: base + "/root/Apps")
        var m: [String: (AppManifest, String)] = [:]
        for a in setup.apps {
            guard let exe = a.builtExecutable() else { continue }
            m[a.name.lowercased()] = (a.manifest, exe)
            m[a.manifest.bundleID.lowercased()] = (a.manifest, exe)
        }
        manifests = m
        let p = Process()
        p.executableURL = URL(fileURLWithPath: (Catalog.toolDirectory as NSString).appendingPathComponent("mambroker"))
        p.arguments = ["--tenant", tenant, "--device", base, "--apps", appsFolder,
                       "--clock", "virtual", "--log-level", "error"] + (testFlip.map { ["--test-flip", $0] } ?? [])
            + (allowWeaker ? ["--allow-weaker-sandbox"] : [])
        let out = Pipe()
        p.standardOutput = out
        let log = try RotatingLog.pipe(into: base + "/logs/mambroker.log")
        p.standardError = FileHandle(fileDescriptor: log.rawValue, closeOnDealloc: false)
        try p.run()
        log.close()  // the broker has its copy
        brokerOwned = Interruption.own { if p.isRunning { p.terminate() } }
        broker = p
        let ready = String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
        guard ready.hasPrefix("ready") else {
            Interruption.release(brokerOwned)
            p.waitUntilExit()
            let log = (try? String(contentsOfFile: base + "/logs/mambroker.log", encoding: .utf8)) ?? ""
            throw LiveMatrix.Failure(description: "mambroker did not start (exit \(p.terminationStatus)): \(log.prefix(2000))")
        }
        serving = true
    }

    /// The tenant the broker loads: the very tenant `policy`'s prediction decides by, written
    /// by the one tenant writer (TenantFile.write) with the tenant file's conditional access.
    /// Every app group is already resolved into its apps (through the run's catalog, which the
    /// broker does not read), so the policies name their apps and no group.
    static func writeTenant(_ setup: MatrixSetup, policy: String, to out: String) throws -> String {
        guard let typed = setup.predictors[policy]?.engine.tenant else {
            throw LiveMatrix.Failure(description: "no tenant for policy \(policy)")
        }
        let tenant: Tenant
        do { tenant = try DevicePlan.brokerTenant(typed) } catch { throw LiveMatrix.Failure(description: "policy \(policy): \(error)") }
        let node = TenantFile.write(tenant, conditionalAccess: setup.conditionalAccess)
        let bytes: Data
        if let value = jsonValue(node) {
            bytes = Data(value.json.utf8)
        } else {
            guard let object = node.propertyListObject else { throw LiveMatrix.Failure(description: "the tenant of policy \(policy) has no JSON form") }
            bytes = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        }
        // 0600, never through a link: the folder is readable by everyone (/dev/shm), and the
        // tenant holds its users' credentials.
        let fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw LiveMatrix.Failure(description: "\(out): cannot write the broker's tenant: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard fchmod(fd, 0o600) == 0 else { throw LiveMatrix.Failure(description: "\(out): cannot make the tenant private: \(String(cString: strerror(errno)))") }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            guard n > 0 else { throw LiveMatrix.Failure(description: "\(out): cannot write the broker's tenant: \(String(cString: strerror(errno)))") }
            written += n
        }
        return out
    }

    /// A tenant's tree as JSONValue, whose own writer is a tenth of the cost of Foundation's
    /// JSONSerialization (the launcher writes a tenant for every policy). Nulls are left out, as
    /// the property-list form leaves them; nil for what JSONValue cannot hold exactly (data, a
    /// date, an integer beyond 2^53: a Graph tenant has none).
    static func jsonValue(_ node: Node) -> JSONValue? {
        switch node.value {
        case .null: return .null
        case let .bool(b): return .bool(b)
        case let .integer(i): return i.magnitude <= 1 << 53 ? .number(Double(i)) : nil
        case let .real(r): return .number(r)
        case let .string(s): return .string(s)
        case .data, .date: return nil
        case let .array(items):
            var out: [JSONValue] = []
            for item in items where item.value != .null {
                guard let v = jsonValue(item) else { return nil }
                out.append(v)
            }
            return .array(out)
        case let .object(pairs):
            var out: [String: JSONValue] = [:]
            for (key, item) in pairs where item.value != .null {
                guard let v = jsonValue(item) else { return nil }
                out[key] = v
            }
            return .object(out)
        }
    }

    func stop() {
        // All told to end at once, then each waited for: one app's exit, not the sum of them.
        let running = Array(apps.values)
        apps.removeAll()
        for app in running { app.askToEnd() }
        Interruption.release(brokerOwned)
        if broker.isRunning { broker.terminate() }
        for app in running { app.waitForEnd() }
        broker.waitUntilExit()
        if ProcessInfo.processInfo.environment["MAMLAB_MATRIX_KEEP"] == nil {
            // Through descriptors, never following a link an app left in its container.
            try? Sandbox.removeFolder(device)
        } else {
            let named = policies.count == 1 ? "policy \(policy)" : "policies \(policies.joined(separator: ", "))"
            StandardStreams.writeError("matrix: \(named): the broker's folder (audit, logs) is kept at \(device) (MAMLAB_MATRIX_KEEP)\n")
        }
    }

    // MARK: apps

    func entry(_ app: String) throws -> (manifest: AppManifest, executable: String) {
        guard let e = manifests[CellPerformer.app(ofKey: app).lowercased()] else { throw LiveMatrix.Failure(description: "unknown app \(app)") }
        return e
    }

    /// Makes the running apps exactly `wanted` (bundle id → accounts): stops those started with
    /// other accounts, starts the missing ones in parallel, signs in their other accounts.
    func ensure(_ wanted: [String: [String]]) throws {
        stopMismatched(wanted)
        try start(wanted.filter { apps[$0.key] == nil })
    }

    /// Stops the running apps of `wanted` that were started with other accounts.
    func stopMismatched(_ wanted: [String: [String]]) {
        for (bundle, app) in apps where wanted[bundle] != nil && accounts[bundle] != wanted[bundle] {
            app.stop()
            running.withLock {
                $0.apps[bundle] = nil
                $0.changes += 1
            }
        }
    }

    /// Starts `missing` (bundle id → accounts), each on a thread of its own: launched in its
    /// sandbox (at most LaunchThreads' count at once), greeted, its other accounts signed in.
    /// Each joins the running apps as soon as it has answered, and `ready` is told: the lanes
    /// then run the cells between the apps that are up while the others still start (an app is
    /// mostly its own tens of milliseconds of loading and meeting the broker).
    /// Every app that started is kept (and so stopped with the run) before a failure is thrown;
    /// an app that could not start at all is the run's `startFailure` at once.
    func start(_ missing: [String: [String]], ready: @escaping @Sendable () -> Void = {}) throws {
        let failures = Locked<[Error]>([])
        let group = DispatchGroup()
        for (bundle, accts) in missing {
            group.enter()
            let t = Thread { [self] in
                defer { group.leave() }
                do {
                    let app = try startApp(bundle, accounts: accts)
                    running.withLock {
                        $0.apps[bundle] = app
                        $0.accounts[bundle] = accts
                        $0.starting.remove(bundle)
                        $0.changes += 1
                    }
                } catch {
                    if let error = error as? ScriptedApp.StartFailure { startFailure.withLock { $0 = $0 ?? error.description } }
                    running.withLock {
                        $0.starting.remove(bundle)
                        $0.changes += 1
                    }
                    failures.update { $0.append(error) }
                }
                ready()
            }
            t.name = "matrix-start"
            t.stackSize = 1 << 20
            t.start()
        }
        group.wait()
        let all = failures.value
        if let first = all.first(where: { $0 is ScriptedApp.StartFailure }) ?? all.first { throw first }
    }

    /// One app launched, greeted and signed in to its other accounts; stopped when any of it fails.
    func startApp(_ bundle: String, accounts accts: [String]) throws -> ScriptedApp {
        let e = try entry(bundle)
        let first = accts.first { $0.lowercased() != "personal" }
        let app = try ScriptedApp.launch(manifest: e.manifest, executable: e.executable,
                                         launcherSocket: device + "/launcher.sock", containers: device + "/containers",
                                         account: e.manifest.integratesSDK ? first : nil,
                                         personal: accts.contains { $0.lowercased() == "personal" }, hidden: [device],
                                         log: device + "/logs/\(bundle).log", allowWeaker: allowWeaker)
        do {
            let hello = try app.call(ScriptCommand("hello"))
            if let error = hello["error"]?.string { throw LiveMatrix.Failure(description: "\(bundle) hello: \(error)") }
            // The other accounts sign in through the SDK, as a user adds them.
            for a in accts where e.manifest.integratesSDK && a != first && a.lowercased() != "personal" {
                // Signed in by the user (the launcher), then enrolled by the app.
                try app.signIn(a)
                let r = try app.call(ScriptCommand("enroll", [a]))
                if let error = r["error"]?.string { throw LiveMatrix.Failure(description: "\(bundle) enroll \(a): \(error)") }
            }
        } catch {
            // Not kept, so stopped here: reaped, its cgroups go with it.
            app.stop()
            throw error
        }
        return app
    }

    func bundle(_ party: PartySpec) throws -> String { try performer.bundle(party) }

    // MARK: cells

    /// Runs the cells in order, grouping consecutive ones that need the same apps.
    func perform(_ cells: [CellResult], done: @escaping @Sendable (Int, CellResult) -> Void) throws {
        // Every app the cells need, started at once (in parallel) before the first cell.
        let upfront = performer.upfront(cells.filter { $0.live == nil }.map(\.cell))
        // Started in the background: the lanes run each cell as soon as its apps are up, and
        // hold back a cell that may reach any app or start one (CellLanes.Claim.blocked) until
        // every app has started.
        stopMismatched(upfront)
        let missing = upfront.filter { apps[$0.key] == nil }
        running.withLock {
            $0.starting.formUnion(missing.keys)
            $0.changes += 1
        }
        // Decided once per cell, not at each look while lanes wait.
        let alone = cells.map { performer.runsAlone($0.cell) }
        // And each cell's apps (bundle id, accounts): a lane looks at up to CellLanes.lookahead
        // cells' claims at every pick.
        let parts = cells.map { performer.parts($0.cell) }
        // Kept while the running apps are the same (called under the lanes' lock, one at a time).
        var claims = [(changes: Int, claim: CellLanes.Claim)?](repeating: nil, count: cells.count)
        let lanes = CellLanes(Array(cells.indices)) { [self] i in
            if startFailure.withLock { $0 } != nil { return .resources([]) }
            let now = running.withLock { $0 }
            if let known = claims[i], known.changes == now.changes { return known.claim }
            let c = claim(cells[i], alone: alone[i], apps: parts[i], running: now)
            claims[i] = (now.changes, c)
            return c
        }
        let started = DispatchGroup()
        if !missing.isEmpty {
            started.enter()
            let t = Thread { [self] in
                defer { started.leave() }
                // A failure is the cells': an app that could not start at all is startFailure,
                // another app is tried again by the first cell that needs it.
                try? start(missing, ready: lanes.wake)
            }
            t.name = "matrix-starter"
            t.start()
        }
        // Whatever happens to the cells, the apps being started are kept (and so stopped).
        defer { started.wait() }
        lanes.run(lanes: cellsInFlight, stop: { Interruption.received != nil }) { [self] i -> (@Sendable () -> Void)? in
            var r = cells[i]
            if r.live != nil {
                // The engine could not even build the cell's parties; nothing to run.
                done(i, r)
                return nil
            }
            if let startFailure = startFailure.withLock({ $0 }) {
                r.live = Verdict(outcome: .blocked, rule: "-", note: "an app could not start: \(startFailure)")
                done(i, r)
                return nil
            }
            let before = auditSize()
            var told: JSONValue?
            do {
                (r.live, told) = try performer.perform(r.cell, on: self, mark: before)
            } catch let error as ScriptedApp.StartFailure {
                startFailure.withLock { $0 = $0 ?? error.description }
                r.live = Verdict(outcome: .blocked, rule: "-", note: "an app could not start: \(error)")
            } catch {
                r.live = Verdict(outcome: .blocked, rule: "-", note: "the run could not perform the cell: \(error)")
            }
            // A cell cut short by an interruption was not answered.
            if Interruption.received != nil { return nil }
            // Every request of the cell was answered, so its records are committed and end
            // here: it is judged by them after its apps are free for the next cell (whose records
            // start past `after`), off the schedule's path.
            let after = max(before, auditSize())
            return { [self, r, told] in
                var r = r
                judgeByRecord(&r, told: told, audit: before..<after)
                if (!r.passed || r.leaked) && r.audit.isEmpty { r.audit = auditLines(before..<after, naming: r.cell) }
                done(i, r)
            }
        }
    }

    /// What a cell claims (CellSchedule.claim), from the apps running now; nothing for a cell
    /// already answered.
    func claim(_ r: CellResult, alone: Bool, apps parts: [(key: String, accounts: [String])?], running now: Running) -> CellLanes.Claim {
        if r.live != nil || startFailure.withLock { $0 } != nil { return .resources([]) }
        return CellSchedule.claim(parts: parts, alone: alone, paste: r.cell.channel.channel == .paste, starting: now.starting) { key in
            now.apps[key] == nil ? nil : now.accounts[key]
        }
    }

    /// The app the broker's last open-url record since `offset` names as the receiver. (A link
    /// that may reach another app runs alone, so the records since are its cell's.)
    func urlReceiver(since offset: UInt64) -> String? {
        decisionRecords(offset..<UInt64.max).last { $0.channel == "open-url" }?.target?.app.lowercased()
    }

    // MARK: audit

    /// Where the log's committed records end (not the file's size: its space is reserved ahead),
    /// read from its mapped header (AuditHeaderMap), twice per cell.
    func auditSize() -> UInt64 {
        let header = auditHeader.withLock { map in
            if map == nil { map = AuditHeaderMap(path: auditPath) }
            return map
        }
        if let end = header?.committed { return UInt64(end) }
        return UInt64(AuditFile.end(atPath: auditPath))
    }

    /// Every record committed in `range` that names one of the cell's apps as a side, as its
    /// line: what a failed cell shows (the cells running beside it claim other apps).
    func auditLines(_ range: Range<UInt64>, naming cell: Cell) -> [String] {
        let apps = cellApps(cell)
        let read = AuditFile.lines(atPath: auditPath, from: Int(range.lowerBound))
        return read.lines.filter { read.start + $0.startIndex < range.upperBound }.compactMap { line in
            guard let r = try? BrokerRecord(line: line) else { return String(decoding: line, as: UTF8.self) }
            return r.names(apps) ? String(decoding: line, as: UTF8.self) : nil
        }
    }

    /// The decision records committed in `range` (AuditTail), read from the file when the tail
    /// no longer holds them.
    func decisionRecords(_ range: Range<UInt64>) -> [BrokerRecord] {
        if let kept = auditTail.records(from: Int(range.lowerBound)) {
            return kept.prefix { $0.offset < range.upperBound }.map(\.record)
        }
        let read = AuditFile.lines(atPath: auditPath, from: Int(range.lowerBound))
        return read.lines.filter { read.start + $0.startIndex < range.upperBound }.compactMap { try? BrokerRecord(line: $0) }
            .filter { AuditTail.decisionChannels.contains($0.channel) }
    }

    func cellApps(_ cell: Cell) -> Set<String> {
        Set(([cell.source] + (cell.target.map { [$0] } ?? [])).compactMap { try? bundle($0) })
    }

    /// Holds the broker's record of the cell's decision against the app's answer and the
    /// prediction (RecordCheck): a disagreement fails the cell, and its records are kept.
    func judgeByRecord(_ r: inout CellResult, told: JSONValue?, audit range: Range<UInt64>) {
        guard told != nil, let source = try? bundle(r.cell.source) else { return }
        let target = r.cell.target.flatMap { try? bundle($0) }
        if RecordCheck.judge(&r, told: told, source: source, target: target, records: decisionRecords(range)) {
            r.audit = auditLines(range, naming: r.cell)
        }
    }

    static func sha256(_ text: String) -> String {
        Hex.lowercase(SHA256.hash(data: Data(text.utf8)))
    }
}

/// The live shell's device: the broker's apps as sandboxed processes (ScriptedApp).
extension PolicyRun: MatrixDevice {
    func accounts(of key: String) -> [String]? {
        let now = running.withLock { $0 }
        return now.apps[key] == nil ? nil : now.accounts[key]
    }

    func stop(_ key: String) {
        guard let app = apps[key] else { return }
        app.stop()
        running.withLock {
            $0.apps[key] = nil
            $0.accounts[key] = nil
            $0.changes += 1
        }
    }

    func app(_ key: String) throws -> ScriptedApp {
        guard let app = apps[key] else { throw LiveMatrix.Failure(description: "\(key) is not running") }
        return app
    }

    func call(_ key: String, _ command: ScriptCommand) throws -> JSONValue { try app(key).call(command) }
    func signIn(_ key: String, _ account: String) throws { try app(key).signIn(account) }
    func event(_ key: String, _ kind: String, wait: Bool) -> JSONValue? { apps[key]?.event(kind, timeout: wait ? 5 : 0) }
    func drainEvents(_ key: String) -> [JSONValue] { apps[key]?.drainEvents() ?? [] }
    func identity(of key: String) -> String? { apps[key]?.identity }
    func setIdentity(_ identity: String?, of key: String) { apps[key]?.identity = identity }
    func recordMark() -> UInt64 { auditSize() }
}
