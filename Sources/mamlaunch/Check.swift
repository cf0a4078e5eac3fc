import ArgumentParser
import Foundation
import MAMCatalog
import MAMLauncher
import MAMMatrixLive
import MAMPolicy

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Validate tenants, policy files, app manifests, catalogs and experiments.",
        discussion: """
            Each PATH is a tenant file, a Graph tenant export (iosManagedAppProtections, \
            targetedManagedAppConfigurations and groups with their apps, assignments and \
            members expanded; docs/POLICIES.md), a policy file (Graph JSON: one policy, an \
            array, or a list response {"value": [...]}; or a debug-form .plist), an app's Info.plist, an app \
            catalog ({"apps": [...]}, docs/CATALOG.md), a matrix experiment (JSON or YAML, \
            docs/MATRIX.md; read as `mamlaunch matrix` reads it), or a folder searched for \
            *.json, *.plist, *.yaml and *.yml. With no PATH, checks the project's Policies/ and Apps/. An app of the \
            built-in catalog (Policies/catalog/apps.json) or of a checked catalog counts as known: \
            `mamlaunch matrix` runs it as a stand-in.

            Problems print one per line, like a compiler: file, line and column where known, \
            severity, JSON path or plist key path, and what is wrong, with the allowed values. \
            A policy that targets an app no manifest describes is an error: pass the app's \
            Info.plist too, or --ignore-unknown-apps. A tenant's app configurations are \
            checked with it: a setting that is not text, an unknown group, an app no policy \
            manages are errors; two targeted values for one user and setting are a warning.

            A Graph policy's properties that MAMLab reads but gives no effect (the PIN prompt, \
            an OS service with no stand-in, the object's bookkeeping) are noted one per line \
            with why; they are neither warnings nor errors.

            Exit status: 0 when there is no error (warnings allowed; with --strict, none either), \
            1 otherwise. A pipeline wants --strict: a misspelled key is a warning, and the setting \
            it meant falls to its default, often the permissive one.
            """
    )

    @Argument(help: "Files or folders to check.", completion: .file())
    var paths: [String] = []

    @Option(help: ArgumentHelp("Folder of apps whose Info.plist files are known manifests.", valueName: "DIR"))
    var apps: String?

    @Flag(help: "Do not report policies that target apps with no known manifest.")
    var ignoreUnknownApps = false

    @Flag(name: .shortAndLong, help: "Only print problems, not the summary line.")
    var quiet = false

    @Flag(help: "Fail on warnings too (an unknown key, an ignored setting): exit 1 unless nothing at all is found.")
    var strict = false

    func run() throws {
        var files: [String] = []
        var roots = paths
        let root = Catalog.projectRoot()
        if roots.isEmpty {
            guard let root else {
                throw World.Failure(description: "no PATH given and \(Catalog.noProject), or pass files")
            }
            roots = [root.appendingPathComponent("Policies").path, root.appendingPathComponent("Apps").path]
        }
        var diagnostics: [Diagnostic] = []
        /// A Graph policy's properties MAMLab reads and gives no effect, each with why.
        var noEffect: [String] = []
        for path in roots {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
                let why = Catalog.whyUnreadable(path)
                diagnostics.append(Diagnostic(.error, file: path, path: "", message: why == "no such file" ? "no such file or folder" : why))
                continue
            }
            files += isDir.boolValue ? Self.inputFiles(under: path) : [path]
        }

        var manifests: [AppManifest] = []
        // The manifests checked here, with their files: an app and its Open-in extension are
        // checked as a pair.
        var checked: [(manifest: AppManifest, file: String)] = []
        var known: [(manifest: AppManifest, file: String)] = []
        var installedApps: [CatalogApp] = []
        if let appsDir = apps.map({ URL(fileURLWithPath: $0) }) ?? root?.appendingPathComponent("Apps") {
            let (found, problems) = Catalog.loadApps(in: appsDir)
            // Two apps that one bundle id names (the manifests themselves are checked below).
            diagnostics += problems.filter { $0.severity == .error && $0.path == "CFBundleIdentifier" && $0.message.contains("not installed") }
            manifests += found.map(\.manifest)
            installedApps = found
            known += found.map { ($0.manifest, $0.file) }
        }
        var tenants: [Tenant] = []
        var catalogs: [String] = []
        var experiments: [String] = []
        // Policies that target an app group: resolved through the catalogs once they are read.
        var grouped: [Policy] = []
        for file in files {
            let shown = Catalog.relative(file)
            do {
                let data = try Catalog.read(file)
                switch InputKind.detect(data, path: file) {
                case .tenant:
                    let loaded = try Catalog.loadTenant(shown)
                    diagnostics += loaded.warnings
                    tenants.append(loaded.tenant)
                    grouped += loaded.tenant.policies.filter { $0.appGroup != nil }
                    // Its conditional-access section, read as mambroker reads it.
                    diagnostics += try ConditionalAccessFile.load(data, file: shown, tenant: loaded.tenant).warnings
                case .manifest:
                    let loaded = try AppManifest.load(data, file: shown)
                    diagnostics += loaded.warnings
                    manifests.append(loaded.manifest)
                    checked.append((loaded.manifest, shown))
                case .policy:
                    let loaded = try PolicyFile.load(data, file: shown)
                    diagnostics += loaded.flatMap(\.warnings)
                    grouped += loaded.map(\.policy).filter { $0.appGroup != nil }
                    noEffect += Self.noEffectNotes(data, file: shown)
                case .catalog:
                    catalogs.append(file)
                case .experiment:
                    experiments.append(file)
                }
            } catch {
                diagnostics += error.diagnostics
            }
        }
        // A checked extension's app may be one of the known apps; the finding is the extension's.
        let checkedFiles = Set(checked.map(\.file))
        let pairs = checked + known.filter { !checkedFiles.contains($0.file) }
        let crossChecks = ManifestRequirements.checkAppGroups(pairs) + ManifestRequirements.checkOpenInNames(pairs) + ManifestRequirements.checkOpenInTypes(pairs)
        let cross = crossChecks.filter { checkedFiles.contains($0.file) }
        // With its app checked too, an extension's name is said once, with the app's name in it.
        let named = Set(cross.filter { $0.path == "CFBundleDisplayName" }.map(\.file))
        diagnostics.removeAll { $0.path == "CFBundleDisplayName" && named.contains($0.file) && $0.message.contains(ManifestRequirements.Source.openInName) }
        diagnostics += cross
        // Catalog entries: checked like any input; the built-in catalog's apps are known too.
        if let root, !catalogs.contains(where: { URL(fileURLWithPath: $0).standardizedFileURL.path == Catalog.builtInCatalogPath(root: root) }) {
            let builtIn = Catalog.builtInCatalogPath(root: root)
            if FileManager.default.fileExists(atPath: builtIn) { catalogs.insert(builtIn, at: 0) }
        }
        var allEntries: [CatalogEntry] = []
        for file in catalogs {
            do {
                let loaded = try AppCatalogFile.loadWithWarnings(try Catalog.read(file), file: Catalog.relative(file))
                let entries = loaded.entries
                allEntries += entries
                for e in entries {
                    if let data = try? e.manifestData(), let m = try? AppManifest.load(data, file: "stand-in \(e.bundleID)") { manifests.append(m.manifest) }
                }
                if files.contains(file) { diagnostics += loaded.warnings }
            } catch {
                diagnostics += error.diagnostics
            }
        }
        // Experiment files, read as `mamlaunch matrix` reads them: apps by any name they go by.
        for file in experiments {
            diagnostics += MatrixSetup.checkExperiment(file, root: root, installed: installedApps, entries: allEntries)
        }
        if !ignoreUnknownApps && !manifests.isEmpty {
            for tenant in tenants { diagnostics += Catalog.unknownApps(tenant, known: manifests) }
        }
        // How each app group resolves, as the matrix, explain and mambroker resolve it; a group
        // that holds no app the catalog knows targets nothing, which is worth a warning.
        var notes: [String] = []
        let installed = known.map { CatalogApp(name: $0.manifest.bundleID, manifest: $0.manifest, file: $0.file) }
        for var policy in grouped {
            guard let note = Catalog.resolveAppGroup(&policy, entries: allEntries, installed: installed) else { continue }
            if policy.targetedApps.isEmpty, let group = policy.appGroup, let origin = policy.appGroupOrigin {
                diagnostics.append(origin.problem(.warning, "appGroupType \(group.rawValue) holds no app the catalog knows: the policy targets nothing"))
            } else {
                notes.append(note)
            }
        }
        for var tenant in tenants where tenant.policies.contains(where: { $0.appGroup != nil }) {
            for i in tenant.policies.indices { _ = Catalog.resolveAppGroup(&tenant.policies[i], entries: allEntries, installed: installed) }
            notes += Catalog.appGroupConflicts(&tenant)
        }
        var seen = Set<Diagnostic>()
        diagnostics = diagnostics.filter { seen.insert($0).inserted }
        for d in diagnostics { print(d) }
        if !quiet {
            for n in notes { print("note: \(n)") }
            for n in noEffect { print(n) }
        }
        let errors = diagnostics.filter { $0.severity == .error }.count
        let warnings = diagnostics.count - errors
        if !quiet {
            print("checked \(files.count) file\(files.count == 1 ? "" : "s"): \(errors) error\(errors == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s")")
        }
        if errors > 0 || (strict && warnings > 0) { throw ExitCode(1) }
    }

    /// One line per property of a Graph policy file that changes nothing MAMLab emulates, where
    /// the file sets it (a debug-form plist has none: its keys are the SDK's own).
    static func noEffectNotes(_ data: Data, file: String) -> [String] {
        guard let root = try? JSONParser.parse(data) else { return [] }
        return GraphPolicy.propertiesWithNoEffect(in: Located(root, path: "$", file: file)).map { p in
            let at = p.at.node.position.map { ":\($0.line):\($0.column)" } ?? ""
            return "\(file)\(at): note: \(p.at.path): no effect in MAMLab: \(p.reason)"
        }
    }

    static func inputFiles(under dir: String) -> [String] {
        guard let e = FileManager.default.enumerator(atPath: dir) else { return [] }
        var out: [String] = []
        while let item = e.nextObject() as? String {
            let lower = item.lowercased()
            if [".json", ".plist", ".yaml", ".yml"].contains(where: lower.hasSuffix) { out.append((dir as NSString).appendingPathComponent(item)) }
        }
        return out.sorted()
    }
}

/// What a file holds, judged from its content rather than its name.
enum InputKind {
    case tenant, policy, manifest, catalog, experiment

    static func detect(_ data: Data, path: String) -> InputKind {
        if path.hasSuffix("Info.plist") { return .manifest }
        let lower = path.lowercased()
        if lower.hasSuffix(".yaml") || lower.hasSuffix(".yml") { return .experiment }
        // (A binary list Foundation would crash on is left to the policy loader, which says why.)
        if !path.lowercased().hasSuffix(".json"), BinaryPropertyList.problem(data) == nil,
           let object = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any] {
            return object["CFBundleIdentifier"] != nil ? .manifest : .policy
        }
        guard let node = try? JSONParser.parse(data) else { return .policy }
        // An experiment names parties, channels or cells (and may list policies, as a tenant does).
        if node["parties"] != nil || node["channels"] != nil || node["cells"] != nil { return .experiment }
        if node["users"] != nil || node["device"] != nil || (node["policies"] != nil && node["@odata.type"] == nil)
            || node["iosManagedAppProtections"] != nil {
            return .tenant
        }
        // A catalog is {"apps": [...]} alone; a Graph policy with its apps has settings beside them.
        if node["apps"] != nil && node["@odata.type"] == nil && node["displayName"] == nil {
            return .catalog
        }
        return .policy
    }
}
