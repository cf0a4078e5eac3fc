import ArgumentParser
import CMAMSandbox
import Foundation
import Glibc
import MAMCatalog
import MAMLauncher
import MAMPolicy
import MAMSandbox
import MAMWire
import SystemPackage

struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run one app in its sandbox, connected to the broker.",
        discussion: """
            APP is a folder name under Apps/ or that app's bundle id, in any case (its executable is \
            the one built beside mamlaunch); an app of the catalog (Policies/catalog/apps.json) by \
            its name, short name or bundle id (Outlook, Gmail, com.microsoft.office.word), run as \
            its stand-in: the sample program the matrix runs for it under the manifest made from \
            its entry, installed in the broker this run starts (docs/CATALOG.md); or, \
            with --manifest, the path of your own app's executable: a binary, a #! script, or an \
            interpreter followed by its script (-- /usr/bin/python3 app.py); your app may read its \
            own folder (docs/SANDBOX.md, "Running your own app"). The app gets its own container \
            folder (its working directory and the only place it may write), one broker connection \
            on descriptor 3 (MAMLAB_BROKER_FD), and mamlaunch's standard input, output and error: \
            pipes and files as they are, a terminal as a pseudo-terminal of mamlaunch's. The broker \
            learns the app's bundle id and pid from mamlaunch, never from the app.

            The broker is the one listening at --broker SOCKET, else a mambroker started for this run with --tenant (default: Policies/contoso/tenant.json); --no-broker runs the app with no channel at all. Each \
            sandbox violation is printed on standard error with the app, pid, system call or path \
            and time, and sent to the broker. The exit status is the app's (128 + signal if it was \
            killed).

            Ctrl-C, SIGTERM or SIGHUP (a closed terminal) stops the app, says "interrupted" and \
            exits 128 + the signal; without --broker or --no-broker it also stops the broker this \
            run started and removes that broker's folder (on a normal exit too; MAMLAB_RUN_KEEP=1 \
            keeps it and says where). With --clean the app's container goes either way.
            """
    )

    @Argument(help: ArgumentHelp("The app: an Apps/ folder name or bundle id, or a catalog app's name (its stand-in); with --manifest, your executable (or give it first after --).", valueName: "APP"))
    var app: String?

    @Option(help: ArgumentHelp("The account the app starts under (a UPN, an OID or personal); one in the tenant's domain that the tenant does not know is refused as a typo.", valueName: "ACCOUNT"))
    var user: String?

    @OptionGroup var tenantFile: TenantOption

    @Option(help: ArgumentHelp("A running broker's launcher socket (else this run starts a broker for --tenant).", valueName: "SOCKET"))
    var broker: String?

    @Flag(help: "Run without any broker connection (the app then has no way out at all).")
    var noBroker = false

    @Option(help: ArgumentHelp("Your app's Info.plist; APP is then its executable.", valueName: "Info.plist"))
    var manifest: String?

    @Flag(help: "Run your own program under an installed app's manifest as that app, knowingly: it is never given an account key (without this flag it runs as an unknown app).")
    var developer = false

    @Option(help: ArgumentHelp("Where containers live (default: /var/lib/mamlab/containers). It must be root's and writable by no one else; a missing one is made so.", valueName: "DIR"))
    var containers: String?

    @Flag(help: "Delete the app's container when it exits.")
    var clean = false

    @OptionGroup var sandbox: SandboxOptions

    @Option(name: .customLong("limit"), help: ArgumentHelp(
        "Override a resource limit: per process processes, address-space, open-files, file-size, core; per app memory (bytes, shmem included), tasks, cpu (CPUs, e.g. 0.5), disk (container bytes). A count or bytes (K, M, G); 'none' lifts it.",
        valueName: "NAME=VALUE"))
    var limits: [String] = []

    @Argument(parsing: .postTerminator, help: "Arguments for the app, after --.")
    var arguments: [String] = []

    func run() throws {
        // A run owns what it started, whichever broker it talks to: a signal stops its app (whose
        // reaping removes its cgroups), the broker it started and that broker's folder, and its
        // container with --clean.
        Interruption.install("mamlaunch run")
        var arguments = self.arguments
        let (manifest, executable, manifestFile, standIn) = try resolveApp(&arguments)
        // What the broker is told the app is made of: the digests of the real files (a symbolic
        // link is judged as what it points at), so that only the program built for an installed
        // app gets its identity (docs/PROTOCOL.md, "Launcher hand-off"). The program is opened
        // once: that descriptor is what runs and what is hashed (launchOnce). A stand-in's
        // manifest is the bytes its entry makes, which the broker this run starts installs.
        let manifestDigest = try standIn.map { try ProgramDigest.sha256(of: $0.entry.manifestData()) }
            ?? ProgramDigest.realPath(manifestFile).flatMap(ProgramDigest.sha256(ofFile:))
        if standIn != nil && (broker != nil || noBroker) {
            throw ValidationError("\(app ?? "the app") is a stand-in for a catalog app: only the broker this run starts installs it; run it without --broker and --no-broker")
        }
        let program = OpenProgram(executable)
        let resourceLimits = try parseLimits()
        // The bundle id names the container folder: checked here again, whatever loaded it, and
        // before the kernel is asked anything, so a bad one is refused alike on every kernel.
        if let problem = AppManifest.bundleIDProblem(manifest.bundleID) {
            throw World.Failure(description: "cannot launch: CFBundleIdentifier \"\(manifest.bundleID.prefix(80))\" \(problem)")
        }
        _ = try sandbox.decide("run \(app ?? "the app")")
        var root = containers ?? Self.defaultContainers
        if !root.hasPrefix("/") { root = (FileManager.default.currentDirectoryPath as NSString).appendingPathComponent(root) }
        let containersRoot = root
        defer {
            if clean {
                do { try Sandbox.removeContainer(root: containersRoot, bundleID: manifest.bundleID) } catch {
                    StandardStreams.writeError("mamlaunch: \(error)\n")
                }
            }
        }

        var link: BrokerLink?
        var started: StartedBroker?
        defer { started?.stop() }
        var brokerFolder: String?
        if !noBroker {
            if let broker { try checkLauncherSocket(broker) }
            var socket = broker ?? ""
            if broker == nil {
                // No broker given: start one for this run, on a device directory of its own.
                let broker = try startBroker(standIn: standIn?.app)
                started = broker
                socket = broker.device + "/launcher.sock"
            }
            // The broker's device folder holds its state and audit: the app must not see it.
            brokerFolder = ((socket.hasPrefix("/") ? socket : FileManager.default.currentDirectoryPath + "/" + socket) as NSString).deletingLastPathComponent
            link = try BrokerLink(path: socket)
        }
        let bundle = manifest.bundleID
        let report: @Sendable (Violation) -> Void = { [link] v in
            StandardStreams.writeError("mamlaunch: \(v)\n")
            link?.report(v)
        }
        var config = LaunchConfiguration(bundleID: bundle, executable: executable, arguments: arguments,
                                         environment: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]
                                             .merging(user.map { ["MAMLAB_ACCOUNT": $0] } ?? [:]) { a, _ in a },
                                         containersRoot: containersRoot, brokerDescriptor: nil, limits: resourceLimits,
                                         allowWeaker: sandbox.allowWeakerSandbox, hidden: brokerFolder.map { [$0] } ?? [])
        if let program, program.isNative { config.executableDescriptor = FileDescriptor(rawValue: program.descriptor.rawValue) }
        if self.manifest != nil {
            config.appFolder = AppFolder.locate(executable: executable, arguments: &config.arguments,
                                                currentDirectory: FileManager.default.currentDirectoryPath)
        }
        // Where the launcher's standard input, output or error is a terminal, the app gets a
        // pseudo-terminal of the launcher's instead, never the user's own; a pipe or a file it
        // gets as it is, so scripts and tests can drive it. Either way it has a session of its own.
        let terminals = (0...2).map { isatty(Int32($0)) == 1 }
        let terminal = terminals.contains(true) ? try TerminalRelay() : nil
        if let terminal {
            if terminals[0] { config.standardInput = terminal.appSide }
            if terminals[1] { config.standardOutput = terminal.appSide }
            if terminals[2] { config.standardError = terminal.appSide }
        }
        if !terminals[0] && fcntl(0, F_GETFD) >= 0 { config.standardInput = .standardInput }
        // The broker may ask for a restart (an app that declined to restart itself after its
        // first policy); a bounded number, so a broken app cannot loop forever.
        var restarts = 0
        var status: Int32
        while true {
            let app = try launchOnce(config, link: link, manifestDigest: manifestDigest, program: program, report: report,
                                     startRelay: restarts == 0 ? terminal.map { t in { t.start(input: terminals[0] ? .standardInput : nil, output: terminals[1] ? .standardOutput : .standardError) } } : nil)
            let watch = link.map { RestartWatch(control: $0.socket, pid: app.pid) }
            // An interruption kills the app's whole namespace; the app is then reaped below,
            // which removes its cgroups.
            let owned = Interruption.own { app.terminate(SIGKILL) }
            // The watch stops before the app is reaped: until then its pid cannot be anyone
            // else's, so a restart request racing the app's own exit kills nothing but it.
            app.waitUntilExited()
            Interruption.release(owned)
            let restartAsked = watch?.stop() ?? false
            status = app.wait()
            if let refusal = watch?.refusal {
                terminal?.closeAppSide()
                terminal?.finish()
                throw World.Failure(description: refusal)
            }
            guard restartAsked, restarts < Self.maximumRestarts, Interruption.received == nil else { break }
            restarts += 1
            StandardStreams.writeError("mamlaunch: \(bundle) restarted at the broker's request (its first policy arrived)\n")
        }
        // The launcher kept its copy of the app's terminal for restarts: closing it lets the
        // relay see the end.
        terminal?.closeAppSide()
        terminal?.finish()
        throw ExitCode(status)
    }

    static let maximumRestarts = 3

    /// Starts the app once: through the broker's link (a new connection handed over with
    /// `adopt`), or alone when there is no broker.
    private func launchOnce(_ config: LaunchConfiguration, link: BrokerLink?, manifestDigest: String?, program: OpenProgram?,
                            report: @escaping @Sendable (Violation) -> Void,
                            startRelay: (() -> Void)?) throws -> SandboxedApp {
        let sandbox = { (launching: LaunchConfiguration) throws -> SandboxedApp in
            let app: SandboxedApp
            do { app = try Sandbox.launch(launching, report: report) } catch { throw World.Failure(description: "\(error)") }
            startRelay?()
            if !app.weakened.isEmpty {
                StandardStreams.writeError("mamlaunch: warning: \(launching.bundleID) runs with a weaker sandbox: \(app.weakened.joined(separator: "; "))\n")
            }
            return app
        }
        guard let link else { return try sandbox(config) }
        do {
            return try link.launch(config, adoption: { app in
                Adoption(bundleID: config.bundleID, pid: app.pid, account: user, manifestDigest: manifestDigest,
                         executableDigest: Handoff.digest(of: program, ran: config), developer: developer)
            }, sandbox: sandbox)
        } catch let error as BrokerLink.NotAdopted {
            throw World.Failure(description: error.description)
        }
    }

    /// A broker this run started, on a device folder of its own: `stop` ends it and removes the
    /// folder (its state and audit were this run's alone), on every way out.
    struct StartedBroker {
        var process: Process
        var device: String
        var owned: Int

        func stop() {
            Interruption.release(owned)
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            if ProcessInfo.processInfo.environment["MAMLAB_RUN_KEEP"] == nil {
                do { try Sandbox.removeFolder(device) } catch {
                    StandardStreams.writeError("mamlaunch: \(error)\n")
                }
            } else {
                StandardStreams.writeError("mamlaunch: the broker's folder is kept at \(device) (MAMLAB_RUN_KEEP)\n")
            }
        }
    }

    /// Where root keeps what lasts from run to run: no other user writes there.
    static let defaultContainers = "/var/lib/mamlab/containers"

    /// Where a run's own broker keeps its device folder: gone at boot, and root's alone.
    static var runtimeFolder: String { geteuid() == 0 ? "/run/mamlab" : NSTemporaryDirectory() }

    /// Starts `mambroker` (built beside mamlaunch) and waits until it serves.
    private func startBroker(standIn: CatalogApp?) throws -> StartedBroker {
        let path = (Catalog.toolDirectory as NSString).appendingPathComponent("mambroker")
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw World.Failure(description: "no broker: mambroker is not built beside mamlaunch; pass --broker SOCKET or --no-broker")
        }
        guard let tenantPath = tenantFile.tenant ?? Catalog.projectRoot().map({ $0.appendingPathComponent("Policies/contoso/tenant.json").path }) else {
            throw ValidationError("no broker: pass --tenant FILE for the broker this run starts, or --broker SOCKET")
        }
        // The tenant is known here (not with --broker): a --user in its own domain that it does
        // not know is a typo, refused before anything starts rather than run as an outsider.
        if let user, let loaded = try? Catalog.loadTenant(tenantPath), loaded.tenant.isUnknownInOwnDomain(user) {
            throw World.Failure(description: "\(user) is not a user of tenant \(loaded.tenant.name) (\(Catalog.relative(tenantPath)))\(loaded.tenant.nearestUser(to: user)), "
                + "yet its domain is one of the tenant's; check the spelling or add the user there")
        }
        // A folder of its own with a name no one can guess, where only root writes: a local
        // user who made the folder first would own the files the broker keeps its keys in.
        let device: String
        do { device = try TrustedPath.uniqueFolder(in: Self.runtimeFolder, prefix: "mamlab-device-\(getpid())-") } catch {
            throw World.Failure(description: "cannot make the broker's folder: \(error)")
        }
        // A stand-in is installed beside the project's apps, in the broker's own folder.
        var apps: [String] = []
        if let standIn, let root = Catalog.projectRoot() {
            let installed = root.appendingPathComponent("Apps")
            do {
                apps = ["--apps", try StandInApps.folder(Catalog.loadApps(in: installed).apps + [standIn], installed: installed, in: device + "/apps")]
            } catch {
                try? Sandbox.removeFolder(device)
                throw World.Failure(description: "cannot install the stand-in for \(standIn.name): \(error)")
            }
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = ["--tenant", tenantPath, "--device", device, "--log-level", "warning"] + apps
            + (sandbox.allowWeakerSandbox ? ["--allow-weaker-sandbox"] : [])
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let started = StartedBroker(process: p, device: device, owned: Interruption.own { if p.isRunning { p.terminate() } })
        let ready = String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
        guard ready.hasPrefix("ready") else {
            started.stop()
            throw World.Failure(description: "mambroker did not start (exit \(p.terminationStatus)); see its messages above")
        }
        return started
    }

    private func parseLimits() throws -> ResourceLimits {
        var l = ResourceLimits()
        for spec in limits {
            let parts = spec.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { throw ValidationError("--limit \(spec): expected NAME=VALUE") }
            if parts[0] == "cpu" {
                if parts[1] == "none" { l.cpu = nil; continue }
                guard let v = Double(parts[1]), v >= 0.01, v <= 1024 else {
                    throw ValidationError("--limit \(spec): \(parts[1]) is not a number of CPUs (0.01 to 1024) or 'none'")
                }
                l.cpu = v
                continue
            }
            let value: UInt64?
            if parts[1] == "none" { value = nil } else if let v = Self.amount(parts[1]) { value = v } else {
                throw ValidationError("--limit \(spec): \(parts[1]) is not a number (K, M or G may follow) or 'none'")
            }
            switch parts[0] {
            case "processes": l.processes = value
            case "address-space": l.addressSpace = value
            case "open-files": l.openFiles = value
            case "file-size": l.fileSize = value
            case "core": l.coreDumps = value
            case "memory": l.memory = value
            case "tasks": l.tasks = value
            case "disk": l.disk = value
            default: throw ValidationError("--limit \(spec): unknown limit \(parts[0]); allowed: \(Self.limitNames)")
            }
        }
        return l
    }

    static let limitNames = "processes, address-space, open-files, file-size, core, memory, tasks, cpu, disk"

    /// "512", "64K", "256M", "2G" (powers of 1024).
    static func amount(_ text: String) -> UInt64? {
        let units: [Character: UInt64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        guard let last = text.last?.uppercased().first, let unit = units[last] else { return UInt64(text) }
        guard let n = UInt64(text.dropLast()) else { return nil }
        let (product, overflow) = n.multipliedReportingOverflow(by: unit)
        return overflow ? nil : product
    }

    /// A catalog app run as its stand-in, and its catalog entry.
    struct StandIn {
        var app: CatalogApp
        var entry: CatalogEntry
    }

    /// The manifest, the executable, the manifest's file, and the stand-in when APP is a
    /// catalog app no Apps/ folder provides.
    private func resolveApp(_ arguments: inout [String]) throws -> (AppManifest, String, String, StandIn?) {
        if let manifest {
            let loaded: (manifest: AppManifest, warnings: [Diagnostic])
            do { loaded = try Catalog.loadManifest(manifest) } catch { throw World.Failure(description: error.description) }
            // A bundle id is an app's identity to the broker (iOS keeps it unique by signing): a
            // manifest of yours may not pass itself off as an installed app, in any spelling.
            if let root = Catalog.projectRoot() {
                let mine = URL(fileURLWithPath: manifest).resolvingSymlinksInPath().path
                for installed in Catalog.loadApps(in: root.appendingPathComponent("Apps")).apps
                where installed.manifest.bundleID.lowercased() == loaded.manifest.bundleID.lowercased()
                    && URL(fileURLWithPath: installed.file).resolvingSymlinksInPath().path != mine {
                    throw World.Failure(description: "\(manifest): CFBundleIdentifier \(loaded.manifest.bundleID) belongs to the installed app \(installed.name) (\(Catalog.relative(installed.file))); give your app a bundle id of its own")
                }
            }
            var path: String
            if let app { path = app } else {
                guard !arguments.isEmpty else { throw ValidationError("--manifest needs your executable, as APP or first after --") }
                path = arguments.removeFirst()
            }
            // The app starts in its container: a relative path would no longer point at it.
            if !path.hasPrefix("/") { path = (FileManager.default.currentDirectoryPath as NSString).appendingPathComponent(path) }
            return (loaded.manifest, (path as NSString).standardizingPath, manifest, nil)
        }
        guard let app else { throw ValidationError("name the app to run (an Apps/ folder name), or give --manifest") }
        guard let root = Catalog.projectRoot() else { throw World.Failure(description: "no MAMLab project found; use --manifest for your own app") }
        let (apps, problems) = Catalog.loadApps(in: root.appendingPathComponent("Apps"))
        var standIn: StandIn?
        let entries = (try? Catalog.loadCatalog(Catalog.builtInCatalogPath(root: root))) ?? []
        if Catalog.find(app, in: apps) == nil, let entry = Catalog.entry(named: app, in: entries),
           let made = Catalog.standIns(for: [entry.bundleID], installed: apps, catalog: entries).apps.first {
            standIn = StandIn(app: made, entry: entry)
        }
        guard let found = Catalog.find(app, in: apps) ?? standIn?.app else {
            // A folder left out for a shared bundle id is not "unknown": say why.
            if let why = problems.first(where: { $0.severity == .error && $0.file.split(separator: "/").dropLast().last.map(String.init)?.lowercased() == app.lowercased() }) {
                throw World.Failure(description: why.description)
            }
            throw ValidationError(Catalog.unknownApp(app, installed: apps, entries: entries))
        }
        guard let binary = found.builtExecutable() else {
            throw World.Failure(description: "\(found.name): CFBundleExecutable must be a plain file name (no slash, . or ..)")
        }
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw World.Failure(description: "\(found.name) has no built executable at \(binary); build it with `swift build --product \(found.executableName)`")
        }
        return (found.manifest, binary, found.file, standIn)
    }
}
