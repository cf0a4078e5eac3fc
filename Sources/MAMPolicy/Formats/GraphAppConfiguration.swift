/// Reads the tenant file's app configurations: `appConfigurations` (an array or a pasted Graph
/// list response of `targetedManagedAppConfiguration` objects) and `appConfigurationDefault`
/// (the tenant default, same shape without assignments).
///
/// Unknown properties are ignored; a wrong type, an unknown group, an app no policy of the tenant
/// manages, a repeated or reserved setting name is an error naming the JSON path.
public enum GraphAppConfiguration {
    public static let odataType = "#microsoft.graph.targetedManagedAppConfiguration"
    /// The key the SDK adds to the tenant default's dictionary in `fullData`; no setting may use it.
    public static let defaultMarker = "__IsDefault"

    /// Graph `appGroupType` values this emulation can honour.
    enum AppGroupType: String, CaseIterable { case selectedPublicApps, allApps }

    static func readList(_ node: Located, knownGroups: Set<String>, managedApps: Set<String>,
                         _ log: inout DiagnosticLog) -> [AppConfiguration] {
        guard let items = node.listOrGraphResponse(of: "app configurations", &log) else { return [] }
        var out: [AppConfiguration] = []
        var ids: [String: Origin] = [:]
        for item in items {
            guard let c = read(item, isDefault: false, knownGroups: knownGroups, managedApps: managedApps, &log) else { continue }
            if let first = ids[c.id.lowercased()] {
                log.append(c.origin.problem("app configuration id \"\(c.id)\" is already used at \(first.path)"))
                continue
            }
            ids[c.id.lowercased()] = c.origin
            out.append(c)
        }
        return out
    }

    static func readDefault(_ node: Located, managedApps: Set<String>, _ log: inout DiagnosticLog) -> AppConfiguration? {
        read(node, isDefault: true, knownGroups: [], managedApps: managedApps, &log)
    }

    /// Reads one configuration; nil when it holds an error (logged).
    static func read(_ object: Located, isDefault: Bool, knownGroups: Set<String>, managedApps: Set<String>,
                     _ log: inout DiagnosticLog) -> AppConfiguration? {
        guard let members = object.object(&log) else { return nil }
        let errorsBefore = log.items.filter { $0.severity == .error }.count
        var c = AppConfiguration(id: "", displayName: "", isTenantDefault: isDefault, origin: Origin(object))
        var sawApps = false, sawAssignments = false
        for (key, value) in members {
            switch key {
            case "@odata.type":
                if let t = value.string(&log), t != odataType {
                    log.append(value.problem("this is a \(t), not an app configuration; expected \(odataType)"))
                }
            case "id": c.id = value.string(&log) ?? ""
            case "displayName": c.displayName = value.string(&log) ?? ""
            case "customSettings": c.settings = settings(value, &log)
            case "appGroupType":
                c.allApps = value.enumeration(AppGroupType.self, &log) == .allApps
            case "apps":
                sawApps = true
                for (app, origin) in GraphPolicy.apps(value, &log) {
                    guard managedApps.contains(app.lowercased()) else {
                        log.append(origin.problem("app \(app) is targeted by no app-protection policy of the tenant; configuration reaches managed apps only"))
                        continue
                    }
                    c.targetedApps.append(app.lowercased())
                }
            case "assignments":
                if isDefault {
                    log.append(value.problem("the tenant default reaches every user; it takes no \"assignments\""))
                    continue
                }
                sawAssignments = true
                var scratch = Policy(id: "", displayName: "")
                GraphPolicy.readAssignments(value, into: &scratch, knownGroups: knownGroups, &log)
                c.includedGroups = scratch.includedGroups
                c.excludedGroups = scratch.excludedGroups
                c.allUsers = scratch.allUsers
            default:
                break // Other Graph properties (description, version, ...) are kept by the document and ignored.
            }
        }
        if c.displayName.isEmpty { c.displayName = c.id.isEmpty ? (isDefault ? "tenant default" : object.path) : c.id }
        if c.id.isEmpty { c.id = c.displayName }
        if !isDefault {
            if !sawApps && !c.allApps {
                log.append(object.problem(.warning, "app configuration \"\(c.displayName)\" names no apps; it reaches no app"))
            }
            if !sawAssignments {
                log.append(object.problem(.warning, "app configuration \"\(c.displayName)\" has no assignments; it reaches no user"))
            }
        }
        let errorsAfter = log.items.filter { $0.severity == .error }.count
        return errorsAfter == errorsBefore ? c : nil
    }

    private static func settings(_ value: Located, _ log: inout DiagnosticLog) -> [AppConfigSetting] {
        guard let items = value.array(&log) else { return [] }
        var out: [AppConfigSetting] = []
        var seen: [String: String] = [:]
        for item in items {
            guard item.object(&log) != nil else { continue }
            guard let nameNode = item.member("name"), let valueNode = item.member("value") else {
                log.append(item.problem("a custom setting needs a \"name\" and a \"value\""))
                continue
            }
            let name = nameNode.string(&log)
            var text: String?
            if case let .string(s) = valueNode.node.value {
                text = s
            } else {
                log.append(valueNode.wrongType("a string (Graph sends every custom setting as text: write \"true\" or \"5\")"))
            }
            guard let name, let text else { continue }
            if name.isEmpty { log.append(nameNode.problem("a setting name is empty")); continue }
            if name == defaultMarker {
                log.append(nameNode.problem("\"\(defaultMarker)\" is reserved: it marks the tenant default in the app's full data"))
                continue
            }
            if let first = seen[name] {
                log.append(nameNode.problem("setting \"\(name)\" is already set at \(first)"))
                continue
            }
            seen[name] = item.path
            out.append(AppConfigSetting(name: name, value: text, origin: Origin(item)))
        }
        return out
    }

    /// A warning for each setting that a targeted configuration reaching some user in some app
    /// gives another value than the first configuration (in file order) that sets it for that user
    /// and app: the app sees a conflict (`hasConflict`) and must pick with a query type. Each
    /// (first configuration, other configuration, setting) is reported once; the work is linear in
    /// the settings that reach each (app, user), so a large hostile file cannot stall a load.
    public static func conflictWarnings(_ tenant: Tenant) -> [Diagnostic] {
        guard tenant.appConfigurations.count > 1 else { return [] }
        var out: [Diagnostic] = []
        var reported = Set<String>()
        for app in tenant.managedApps {
            for (u, user) in tenant.users.enumerated() {
                let account = Account(userIndex: u, upn: user.upn, oid: user.oid)
                let targeted = tenant.appConfigurations(app: app, account: account).filter { !$0.isTenantDefault }
                guard targeted.count > 1 else { continue }
                var first: [String: (config: AppConfiguration, value: String)] = [:]
                for c in targeted {
                    for s in c.settings {
                        guard let f = first[s.name] else { first[s.name] = (c, s.value); continue }
                        guard f.value != s.value, reported.insert("\(f.config.id)\u{0}\(c.id)\u{0}\(s.name)").inserted else { continue }
                        let at = s.origin.file.isEmpty ? c.origin : s.origin
                        out.append(at.problem(.warning,
                            "app configurations \"\(f.config.displayName)\" and \"\(c.displayName)\" give setting \"\(s.name)\" different values (\"\(f.value)\", \"\(s.value)\") for user \(user.upn) in app \(app); the app sees a conflict"))
                    }
                }
            }
        }
        if out.count > conflictWarningLimit, let last = tenant.appConfigurations.last {
            let more = out.count - conflictWarningLimit
            out.removeLast(more)
            out.append(last.origin.problem(.warning, "\(more) more conflicting settings are not listed"))
        }
        return out
    }

    /// How many conflict warnings one load lists before summing up the rest.
    public static let conflictWarningLimit = 50
}
