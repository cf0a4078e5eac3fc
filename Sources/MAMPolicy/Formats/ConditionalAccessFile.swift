import Foundation

/// Reads the `conditionalAccess` section of a tenant file (docs/POLICIES.md) against the tenant
/// `TenantFile` loaded from the same bytes, so users and groups resolve as the tenant's do.
///
/// ```json
/// "conditionalAccess": {
///   "tenantId": "8c3f6a2e-1d4b-4f7a-9e2c-5b6d7e8f9a0b",
///   "policies": [{
///     "displayName": "Require app protection policy",
///     "state": "enabled",
///     "conditions": {"users": {"includeGroups": ["finance"]}, "applications": {"includeApplications": ["All"]}},
///     "grantControls": {"operator": "OR", "builtInControls": ["compliantApplication"]}
///   }],
///   "forceRemediation": {"ben@contoso.com": "networkFailure"}
/// }
/// ```
public enum ConditionalAccessFile {
    public struct Loaded: Sendable {
        public var settings: ConditionalAccessSettings
        public var warnings: [Diagnostic]
    }

    /// The tenant-file key this loader owns; `TenantFile` leaves it alone.
    public static let key = "conditionalAccess"

    private static let sectionKeys: Set<String> = ["tenantId", "policies", "forceRemediation", "description"]
    private static let policyKeys: Set<String> = ["id", "displayName", "state", "conditions", "grantControls", "description"]
    private static let userKeys: Set<String> = ["includeUsers", "excludeUsers", "includeGroups", "excludeGroups"]
    /// Graph's `conditionalAccessGrantControl` values.
    static let grantControls = ["block", "mfa", "compliantDevice", "domainJoinedDevice", "approvedApplication",
                                "compliantApplication", "passwordChange"]

    /// Reads the section from the tenant file's bytes; a file without it has no conditional access.
    public static func load(_ data: Data, file: String, tenant: Tenant) throws(LoadFailure) -> Loaded {
        var log = DiagnosticLog()
        let doc = try JSONParser.document(data, file: file)
        guard let section = doc.member(key) else { return Loaded(settings: .none, warnings: []) }
        let settings = read(section, tenant: tenant, &log)
        if log.hasErrors { throw LoadFailure(log.items) }
        return Loaded(settings: settings, warnings: log.items)
    }

    static func read(_ section: Located, tenant: Tenant, _ log: inout DiagnosticLog) -> ConditionalAccessSettings {
        var settings = ConditionalAccessSettings()
        guard let members = section.object(&log) else { return settings }
        for (k, v) in members where !sectionKeys.contains(k) {
            log.append(v.problem(.warning, "unknown conditional access key \"\(k)\"; it is ignored"))
        }
        if let t = section.member("tenantId"), let id = t.string(&log) {
            if isGUID(id) { settings.tenantId = id } else {
                log.append(t.problem("\"\(id)\" is not a tenant id; expected a GUID such as 8c3f6a2e-1d4b-4f7a-9e2c-5b6d7e8f9a0b"))
            }
        }
        if let list = section.member("policies")?.array(&log) {
            settings.policies = list.compactMap { readPolicy($0, tenant: tenant, &log) }
        }
        if let forced = section.member("forceRemediation") {
            settings.forced = readForced(forced, tenant: tenant, &log)
        }

        // A targeted user is told its home account id `<oid>.<tenantId>`, so both halves must
        // exist; a report-only policy never tells anyone.
        let enforcing = settings.policies.filter { $0.requiresAppProtection && $0.state == .enabled }
        if !enforcing.isEmpty, settings.tenantId == nil, section.member("tenantId") == nil {
            log.append(section.problem("conditional access needs a \"tenantId\" (a GUID): a targeted user's home account id is <oid>.<tenantId>"))
        }
        for (i, user) in tenant.users.enumerated() where user.oid == nil {
            if let p = enforcing.first(where: { $0.assigns(user: i, groups: user.groups) }) {
                log.append(p.origin.problem(
                    "policy \"\(p.displayName)\" targets \(user.upn), who has no \"oid\"; a targeted user's home account id is <oid>.<tenantId>"))
            }
        }
        return settings
    }

    private static func readPolicy(_ p: Located, tenant: Tenant, _ log: inout DiagnosticLog) -> ConditionalAccessPolicy? {
        guard let members = p.object(&log) else { return nil }
        for (k, v) in members where !policyKeys.contains(k) {
            log.append(v.problem(.warning, "unknown conditional access policy key \"\(k)\"; it is ignored"))
        }
        guard let nameNode = p.member("displayName") else { log.append(p.problem("a conditional access policy needs a \"displayName\"")); return nil }
        guard let stateNode = p.member("state") else { log.append(p.problem("a conditional access policy needs a \"state\"")); return nil }
        guard let name = nameNode.string(&log), let state = stateNode.enumeration(ConditionalAccessPolicy.State.self, &log) else { return nil }
        var policy = ConditionalAccessPolicy(displayName: name, state: state, requiresAppProtection: false, origin: Origin(p))
        if let id = p.member("id") { policy.id = id.string(&log) }

        if let conditions = p.member("conditions"), conditions.object(&log) != nil {
            if let users = conditions.member("users"), let pairs = users.object(&log) {
                for (k, v) in pairs where !userKeys.contains(k) {
                    log.append(v.problem(.warning, "unknown key \"\(k)\" in the policy's users; it is ignored"))
                }
                readUsers(users.member("includeUsers"), tenant, &log, all: &policy.includesAllUsers, into: &policy.includedUsers)
                var ignored = false
                readUsers(users.member("excludeUsers"), tenant, &log, all: &ignored, into: &policy.excludedUsers)
                if ignored, let e = users.member("excludeUsers") {
                    log.append(e.problem("\"All\" cannot be excluded; a policy that excludes everyone targets nobody"))
                }
                policy.includedGroups = readGroups(users.member("includeGroups"), tenant, &log)
                policy.excludedGroups = readGroups(users.member("excludeGroups"), tenant, &log)
            }
            if let apps = conditions.member("applications"), apps.object(&log) != nil,
               let include = apps.member("includeApplications"), let names = include.strings(&log), names != ["All"] {
                log.append(include.problem(.warning,
                    "MAMLab emulates every token request as one for all cloud apps; includeApplications other than [\"All\"] is ignored"))
            }
        }
        if !policy.includesAllUsers && policy.includedUsers.isEmpty && policy.includedGroups.isEmpty {
            log.append(p.problem(.warning, "policy \"\(name)\" includes no users or groups; it targets nobody"))
        }

        if let grant = p.member("grantControls"), grant.object(&log) != nil {
            if let op = grant.member("operator"), let s = op.string(&log), s != "OR", s != "AND" {
                log.append(op.problem("unknown value \"\(s)\"; allowed values: OR, AND"))
            }
            for c in grant.member("builtInControls")?.array(&log) ?? [] {
                guard let s = c.string(&log) else { continue }
                if s == "compliantApplication" {
                    policy.requiresAppProtection = true
                } else if !grantControls.contains(s) {
                    log.append(c.problem("unknown value \"\(s)\"; allowed values: \(grantControls.joined(separator: ", "))"))
                }
            }
        }
        if !policy.requiresAppProtection {
            log.append(p.problem(.warning,
                "policy \"\(name)\" does not grant with \"compliantApplication\" (Require app protection policy); MAMLab emulates only that control, so it changes no token request"))
        }
        return policy
    }

    private static func readUsers(_ node: Located?, _ tenant: Tenant, _ log: inout DiagnosticLog, all: inout Bool, into set: inout Set<Int>) {
        for item in node?.array(&log) ?? [] {
            guard let name = item.string(&log) else { continue }
            if name == "All" { all = true; continue }
            if let i = tenant.knownAccount(named: name)?.userIndex { set.insert(i) } else {
                log.append(item.problem("unknown user \"\(name)\"; the tenant's users are: \(tenant.users.map(\.upn).joined(separator: ", "))"))
            }
        }
    }

    private static func readGroups(_ node: Located?, _ tenant: Tenant, _ log: inout DiagnosticLog) -> Set<String> {
        let known = tenant.groups + tenant.users.flatMap(\.groups)
        let knownLowered = Set(known.map { $0.lowercased() })
        var out: Set<String> = []
        for item in node?.array(&log) ?? [] {
            guard let name = item.string(&log) else { continue }
            if knownLowered.contains(name.lowercased()) { out.insert(name.lowercased()) } else {
                log.append(item.problem("unknown group \"\(name)\"; the tenant's groups are: \(knownLowered.sorted().joined(separator: ", "))"))
            }
        }
        return out
    }

    /// `{"ACCOUNT": "STATUS"}` forces every remediation of the account, except that
    /// `interactionRequired` concerns silent ones only; `{"ACCOUNT": {"silent": S, "interactive": S}}`
    /// forces each kind apart.
    private static func readForced(_ node: Located, tenant: Tenant, _ log: inout DiagnosticLog) -> [Int: ForcedRemediation] {
        var out: [Int: ForcedRemediation] = [:]
        for (name, value) in node.object(&log) ?? [] {
            guard let user = tenant.knownAccount(named: name)?.userIndex else {
                log.append(value.problem("unknown user \"\(name)\"; the tenant's users are: \(tenant.users.map(\.upn).joined(separator: ", "))"))
                continue
            }
            if out[user] != nil {
                log.append(value.problem("\(tenant.users[user].upn) is forced twice (by UPN and by OID)"))
                continue
            }
            var forced = ForcedRemediation(origin: Origin(value))
            if case .string = value.node.value {
                guard let s = status(value, &log) else { continue }
                forced.silent = s
                forced.interactive = s == .interactionRequired ? nil : s
            } else if case .object = value.node.value, let pairs = value.object(&log) {
                for (k, v) in pairs {
                    switch k {
                    case "silent": forced.silent = status(v, &log)
                    case "interactive":
                        guard let s = status(v, &log) else { continue }
                        if s == .interactionRequired {
                            log.append(v.problem("an interactive remediation is the interaction; it cannot end in interactionRequired"))
                        } else {
                            forced.interactive = s
                        }
                    default: log.append(v.problem(.warning, "unknown key \"\(k)\"; expected silent or interactive; it is ignored"))
                    }
                }
            } else {
                log.append(value.wrongType("a status name or an object {\"silent\": …, \"interactive\": …}"))
                continue
            }
            out[user] = forced
        }
        return out
    }

    private static func status(_ node: Located, _ log: inout DiagnosticLog) -> ComplianceStatus? {
        guard let s = node.string(&log) else { return nil }
        if let status = ComplianceStatus(name: s) { return status }
        log.append(node.problem("unknown value \"\(s)\"; allowed values: \(ComplianceStatus.allCases.map(\.name).joined(separator: ", "))"))
        return nil
    }

    static func isGUID(_ s: String) -> Bool {
        let parts = s.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.map(\.count) == [8, 4, 4, 4, 12] else { return false }
        return parts.allSatisfy { $0.allSatisfy(\.isHexDigit) }
    }
}
