import Foundation

/// Reads the tenant file of SEMANTICS §3.
///
/// Loading is pure: policy files that the tenant names with `"$ref"` are fetched through the
/// `resolve` closure the caller passes, which does the file I/O.
public enum TenantFile {
    /// What `resolve` returns: a display name for messages and the file's bytes.
    public typealias Resolver = (_ reference: String) throws -> (name: String, data: Data)

    public struct Loaded: Sendable {
        public var tenant: Tenant
        public var warnings: [Diagnostic]
    }

    private static let topLevelKeys: Set<String> = ["tenant", "users", "groups", "device", "policies", "$schema", "description",
                                                    "personalAccounts", "appConfigurations", "appConfigurationDefault"]

    public static func load(_ data: Data, file: String, resolve: Resolver) throws(LoadFailure) -> Loaded {
        var log = DiagnosticLog()
        let doc = try JSONParser.document(data, file: file)
        if TenantExport.isExport(doc) { return try TenantExport.read(doc) }
        guard let members = doc.object(&log) else { throw LoadFailure(log.items) }
        for (key, value) in members where !topLevelKeys.contains(key) && key != ConditionalAccessFile.key {
            log.append(value.problem(.warning, "unknown tenant key \"\(key)\"; it is ignored"))
        }

        var tenant = Tenant(name: doc.member("tenant")?.string(&log) ?? "")
        var userOrigins: [Origin] = []
        if let users = doc.member("users")?.array(&log) {
            // Every UPN and OID so far, lower-cased, to its user: one lookup per user, not a scan
            // of the users before it (20,000 users took `check` 157 s, the broker as long).
            var named: [String: Int] = [:]
            for u in users {
                guard let user = readUser(u, &log) else { continue }
                // One name, one user: an OID spelled as another user's UPN (or the reverse)
                // would make that name sign in, enroll and wipe someone else.
                let names = [user.upn.lowercased()] + (user.oid.map { [$0.lowercased()] } ?? [])
                if let c = names.lazy.compactMap({ named[$0] }).first {
                    log.append(u.problem("user \(user.upn) repeats the UPN or OID of users[\(c)] (\(tenant.users[c].upn))"))
                    continue
                }
                for n in names { named[n] = tenant.users.count }
                tenant.users.append(user)
                userOrigins.append(Origin(u))
            }
        } else if doc.member("users") == nil {
            log.append(doc.problem(.warning, "the tenant has no \"users\"; no party can be managed"))
        }
        tenant.groups = doc.member("groups")?.strings(&log) ?? []
        tenant.personalAccounts = doc.member("personalAccounts")?.strings(&log) ?? []
        tenant.reindex()
        let knownGroups = Set((tenant.groups + tenant.users.flatMap(\.groups)).map { $0.lowercased() })

        if let device = doc.member("device") { tenant.device = readDevice(device, tenant, &log) }

        if let policies = doc.member("policies") {
            tenant.policies = readPolicies(policies, knownGroups: knownGroups, resolve: resolve, &log)
        }
        indexPolicies(&tenant, &log)
        readAppConfigurations(doc.member("appConfigurations"), doc, into: &tenant, knownGroups: knownGroups, &log)
        if log.hasErrors { throw LoadFailure(log.items) }
        return Loaded(tenant: tenant, warnings: log.items)
    }

    /// Indexes the policies by user and app; two policies for one user and app is an error.
    static func indexPolicies(_ tenant: inout Tenant, _ log: inout DiagnosticLog) {
        let conflicts = tenant.reindex()
        for c in conflicts {
            let first = tenant.policies[c.first], second = tenant.policies[c.second]
            log.append(second.origin.problem(
                "policies \"\(first.displayName)\" (\(first.origin)) and \"\(second.displayName)\" both target user \(tenant.users[c.user].upn) for app \(c.app); a user may have one policy per app"))
        }
    }

    /// App configurations come after the policies: they may name only apps a policy manages.
    static func readAppConfigurations(_ configurations: Located?, _ doc: Located, into tenant: inout Tenant, knownGroups: Set<String>,
                                      _ log: inout DiagnosticLog) {
        let managed = Set(tenant.managedApps)
        if let list = configurations {
            tenant.appConfigurations = GraphAppConfiguration.readList(list, knownGroups: knownGroups, managedApps: managed, &log)
        }
        if let d = doc.member("appConfigurationDefault") {
            tenant.appConfigurationDefault = GraphAppConfiguration.readDefault(d, managedApps: managed, &log)
        }
        if !log.hasErrors { log.append(contentsOf: GraphAppConfiguration.conflictWarnings(tenant)) }
    }

    private static func readUser(_ u: Located, _ log: inout DiagnosticLog) -> TenantUser? {
        guard u.object(&log) != nil else { return nil }
        guard let upnNode = u.member("upn") else { log.append(u.problem("a user needs a \"upn\"")); return nil }
        guard let upn = upnNode.string(&log) else { return nil }
        guard upn.contains("@") else {
            log.append(upnNode.problem("\"\(upn)\" is not a user principal name; expected name@domain"))
            return nil
        }
        var user = TenantUser(upn: upn)
        if let oid = u.member("oid") {
            if case .null = oid.node.value {} else { user.oid = oid.string(&log) }
        }
        user.groups = u.member("groups")?.strings(&log) ?? []
        if let c = u.member("credential"), let text = c.string(&log) {
            switch CredentialFormat.parse(text) {
            case .success: user.credential = text.lowercased()
            case let .failure(p): log.append(c.problem(p.message))
            }
        }
        return user
    }

    static func readDevice(_ d: Located, _ tenant: Tenant, _ log: inout DiagnosticLog) -> Device {
        var device = Device()
        guard d.object(&log) != nil else { return device }
        device.mdmEnrolled = d.member("mdmEnrolled")?.bool(&log) ?? false
        func account(_ l: Located) -> Account? {
            if case .null = l.node.value { return nil }
            guard let name = l.string(&log) else { return nil }
            guard let a = tenant.knownAccount(named: name) else {
                let known = tenant.users.map(\.upn).joined(separator: ", ")
                log.append(l.problem("unknown user \"\(name)\"; the tenant's users are: \(known)"))
                return nil
            }
            return a
        }
        if let u = d.member("mdmUser") { device.mdmUser = account(u) }
        if let e = d.member("enrollments"), let pairs = e.object(&log) {
            for (bundle, value) in pairs { if let a = account(value) { device.enrollments[bundle.lowercased()] = a } }
        }
        if let apps = d.member("mdmManagedApps")?.strings(&log) { device.mdmManagedApps = Set(apps.map { $0.lowercased() }) }
        if let allowed = d.member("allowedAccounts"), !{ if case .null = allowed.node.value { return true }; return false }(), let items = allowed.array(&log) {
            // Only tenant users can be allowed: a typo would otherwise lock everyone out silently.
            device.allowedAccounts = items.compactMap(account)
        }
        device.profile = readProfile(d, &log)
        return device
    }

    /// The phone's profile from the `device` object's keys (DeviceProfile.keys); each missing
    /// key keeps `base`'s value.
    public static func readProfile(_ d: Located, base: DeviceProfile = .standard, _ log: inout DiagnosticLog) -> DeviceProfile {
        var p = base
        if let v = d.member("os"), let text = v.string(&log) {
            if let os = Version(text) { p.os = os } else {
                log.append(v.problem("\"\(text)\" is not an OS version; expected numbers joined by dots, such as 17.5 or 12.4.4"))
            }
        }
        if let v = d.member("model"), let text = v.string(&log) {
            if text.isEmpty || text.utf8.count > 64 { log.append(v.problem("a model is 1 to 64 characters, such as iPhone15,2")) } else { p.model = text }
        }
        if let b = d.member("jailbroken")?.bool(&log) { p.jailbroken = b }
        if let v = d.member("threatLevel"), let t = v.enumeration(ThreatLevel.self, &log) {
            if t == .notConfigured { log.append(v.problem("a device's threat level is secured, low, medium or high")) } else { p.threatLevel = t }
        }
        if let b = d.member("biometrics")?.bool(&log) { p.biometrics = b }
        if let b = d.member("passcode")?.bool(&log) { p.passcode = b }
        if let v = d.member("offlineSince") {
            if case .null = v.node.value { p.offlineSince = nil } else if let text = v.string(&log) {
                if let date = DeviceProfile.date(text) { p.offlineSince = date } else {
                    log.append(v.problem("\"\(text)\" is not a time; expected ISO 8601 such as 2026-11-28T09:00:00Z"))
                }
            }
        }
        return p
    }

    /// `policies` is an array or a pasted Graph list response `{"value": [...]}`; each element
    /// is a policy object, a list response, or `{"$ref": "file"}` with optional targeting.
    static func readPolicies(_ node: Located, knownGroups: Set<String>, resolve: Resolver,
                                     _ log: inout DiagnosticLog) -> [Policy] {
        guard let items = node.listOrGraphResponse(of: "policies", &log) else { return [] }
        var out: [Policy] = []
        for item in items {
            if let ref = item.member("$ref") {
                out += readReference(item, ref, knownGroups: knownGroups, resolve: resolve, &log)
            } else if let nested = item.member("value") {
                out += (nested.array(&log) ?? []).compactMap { GraphPolicy.read($0, knownGroups: knownGroups, log: &log) }
            } else if let p = GraphPolicy.read(item, knownGroups: knownGroups, log: &log) {
                out.append(p)
            }
        }
        return out
    }

    private static func readReference(_ item: Located, _ ref: Located, knownGroups: Set<String>, resolve: Resolver,
                                      _ log: inout DiagnosticLog) -> [Policy] {
        guard let reference = ref.string(&log) else { return [] }
        let fetched: (name: String, data: Data)
        do {
            fetched = try resolve(reference)
        } catch {
            log.append(ref.problem("cannot read policy file \"\(reference)\": \(error)"))
            return []
        }
        var policies: [Policy]
        do {
            let loaded = try PolicyFile.load(fetched.data, file: fetched.name, knownGroups: knownGroups)
            // The referenced file's warnings (an unknown key) are the tenant's too: whoever loads
            // only the tenant (explain, matrix, the broker) must hear of them.
            log.append(contentsOf: loaded.flatMap(\.warnings))
            policies = loaded.map(\.policy)
        } catch {
            log.append(contentsOf: error.diagnostics)
            return []
        }
        // Targeting written beside the reference applies to every policy the file holds.
        var overrides = item.node
        if case var .object(pairs) = overrides.value {
            pairs.removeAll { $0.key == "$ref" }
            overrides.value = .object(pairs)
        }
        guard let target = GraphPolicy.read(Located(overrides, path: item.path, file: item.file),
                                            knownGroups: knownGroups, log: &log) else { return [] }
        let keys = Set(item.object(&log)?.map(\.key) ?? [])
        for i in policies.indices {
            if keys.contains("displayName") { policies[i].displayName = target.displayName }
            if keys.contains("id") { policies[i].id = target.id }
            if keys.contains("apps") {
                // Apps listed beside the reference are the targets, whatever app group the file names.
                policies[i].targetedApps = target.targetedApps
                policies[i].appOrigins = target.appOrigins
                policies[i].appGroup = target.appGroup
                policies[i].appGroupOrigin = target.appGroupOrigin
            }
            if keys.contains("assignments") {
                policies[i].includedGroups = target.includedGroups
                policies[i].excludedGroups = target.excludedGroups
                policies[i].allUsers = target.allUsers
            }
            // The reference is where the user looks for a conflict's cause.
            policies[i].settingsFile = fetched.name
            policies[i].origin = Origin(item)
        }
        return policies
    }
}

/// Reads a standalone policy file: Graph JSON (one policy, an array, or a list response) or a
/// debug-form property list (`.plist`, XML or binary).
public enum PolicyFile {
    public struct Loaded: Sendable {
        public var policy: Policy
        public var warnings: [Diagnostic]
    }

    public static func load(_ data: Data, file: String, knownGroups: Set<String>? = nil) throws(LoadFailure) -> [Loaded] {
        var log = DiagnosticLog()
        var policies: [Policy] = []
        if looksLikePropertyList(data) {
            if let problem = BinaryPropertyList.problem(data) {
                throw LoadFailure([Diagnostic(.error, file: file, path: "", message: "not a valid property list: \(problem)")])
            }
            let root: Any
            do {
                root = try PropertyListSerialization.propertyList(from: data, format: nil)
            } catch {
                throw LoadFailure([Diagnostic(.error, file: file, path: "", message: "not a valid property list: \(PropertyListText.reason(error))")])
            }
            let doc = Located(Node(propertyList: root), path: "", file: file)
            if let settings = DebugSettings.read(doc, log: &log) {
                let name = (file as NSString).lastPathComponent
                policies.append(Policy(id: name, displayName: name, settings: settings, origin: Origin(doc)))
            }
        } else {
            let doc = try JSONParser.document(data, file: file)
            let items: [Located]
            if let value = doc.member("value") {
                items = value.array(&log) ?? []
            } else if case .array = doc.node.value {
                items = doc.array(&log) ?? []
            } else {
                items = [doc]
            }
            policies = items.compactMap { GraphPolicy.read($0, knownGroups: knownGroups, log: &log) }
        }
        if log.hasErrors { throw LoadFailure(log.items) }
        let warnings = log.items
        return policies.enumerated().map { Loaded(policy: $0.element, warnings: $0.offset == 0 ? warnings : []) }
    }

    static func looksLikePropertyList(_ data: Data) -> Bool {
        if data.starts(with: Array("bplist".utf8)) { return true }
        let head = String(decoding: data.prefix(256), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return head.hasPrefix("<?xml") || head.hasPrefix("<plist") || head.hasPrefix("<!DOCTYPE plist")
    }
}

/// Turns Foundation's property-list errors into the one line a person needs.
enum PropertyListText {
    static func reason(_ error: Error) -> String {
        let ns = error as NSError
        var texts: [String] = []
        if let d = ns.userInfo[NSDebugDescriptionErrorKey] as? String { texts.append(d) }
        return texts.first ?? ns.localizedDescription
    }
}
