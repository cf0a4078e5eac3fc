import Foundation

/// Reads a tenant as an admin exports it from Microsoft Graph (docs/POLICIES.md, "A Graph tenant
/// export"): the iOS app-protection policies with their `apps` and `assignments` expanded, the
/// targeted app configurations likewise, and the groups with their `members` expanded. The
/// users are the groups' user members; an assignment names a group by its Graph `id`.
///
/// Pure, like TenantFile: every problem names the export's own key path.
public enum TenantExport {
    /// The key that tells an export from a tenant file.
    public static let policiesKey = "iosManagedAppProtections"

    static let topLevelKeys: Set<String> = [policiesKey, "targetedManagedAppConfigurations", "groups", "device",
                                            "personalAccounts", "tenant", "description", "$schema", "@odata.context"]

    public static func isExport(_ doc: Located) -> Bool { doc.member(policiesKey) != nil }

    public static func read(_ doc: Located) throws(LoadFailure) -> TenantFile.Loaded {
        var log = DiagnosticLog()
        guard let members = doc.object(&log) else { throw LoadFailure(log.items) }
        for (key, value) in members where !topLevelKeys.contains(key) {
            log.append(value.problem(.warning, "unknown key \"\(key)\" in a Graph tenant export; it is ignored (allowed: \(topLevelKeys.sorted().joined(separator: ", ")))"))
        }
        var tenant = Tenant(name: doc.member("tenant")?.string(&log) ?? "")
        if let groups = doc.member("groups") {
            readGroups(groups, into: &tenant, &log)
        } else {
            log.append(doc.problem(.warning, "the export has no \"groups\" (GET /groups?$expand=members); no user, so no party can be managed"))
        }
        if tenant.name.isEmpty, let upn = tenant.users.first?.upn, let at = upn.lastIndex(of: "@") {
            tenant.name = String(upn[upn.index(after: at)...])
        }
        tenant.personalAccounts = doc.member("personalAccounts")?.strings(&log) ?? []
        tenant.reindex()
        let knownGroups = Set(tenant.groups.map { $0.lowercased() })
        if let device = doc.member("device") { tenant.device = TenantFile.readDevice(device, tenant, &log) }
        for key in [policiesKey, "targetedManagedAppConfigurations", "groups"] {
            if let next = doc.member(key)?.member("@odata.nextLink") {
                log.append(next.problem(.warning, "only the first page of \(key) is here (a next link): follow @odata.nextLink and put every page's items in one \"value\""))
            }
        }
        tenant.policies = TenantFile.readPolicies(doc.member(policiesKey)!, knownGroups: knownGroups, resolve: { (reference: String) throws -> (name: String, data: Data) in
            // An export holds its policies whole; a file reference belongs in a tenant file.
            throw LoadFailure([Diagnostic(.error, file: doc.file, path: "", message: "\"$ref\" \(reference): a Graph export holds its policies, not references to files")])
        }, &log)
        for (i, p) in tenant.policies.enumerated() where p.targetedApps.isEmpty && p.appGroup == nil {
            log.append(p.origin.problem(.warning, "policy \"\(p.displayName)\" (\(policiesKey)[\(i)]) has no \"apps\": export it with $expand=apps,assignments"))
        }
        TenantFile.indexPolicies(&tenant, &log)
        TenantFile.readAppConfigurations(doc.member("targetedManagedAppConfigurations"), doc, into: &tenant, knownGroups: knownGroups, &log)
        if log.hasErrors { throw LoadFailure(log.items) }
        return TenantFile.Loaded(tenant: tenant, warnings: log.items)
    }

    /// Groups with `members` expanded: each group's `id` is what assignments name; each user
    /// member becomes a tenant user (its `id` the OID), in every group that lists it.
    static func readGroups(_ node: Located, into tenant: inout Tenant, _ log: inout DiagnosticLog) {
        guard let groups = node.listOrGraphResponse(of: "groups", &log) else { return }
        var byUPN: [String: Int] = [:], byOID: [String: Int] = [:]
        // Group ids so far, lower-cased: a lookup, not a scan (20,000 groups took `check` 31 s).
        var groupIDs: Set<String> = []
        for group in groups {
            guard group.object(&log) != nil else { continue }
            guard let idNode = group.member("id") else { log.append(group.problem("a group needs its \"id\" (assignments name it)")); continue }
            guard let id = idNode.string(&log), !id.isEmpty else { continue }
            guard groupIDs.insert(id.lowercased()).inserted else {
                log.append(idNode.problem("group id \"\(id)\" is listed twice"))
                continue
            }
            tenant.groups.append(id)
            guard let list = group.member("members") else {
                log.append(group.problem(.warning, "group \(id) has no \"members\": export the groups with $expand=members"))
                continue
            }
            // Graph's $expand returns a bounded number of directory objects (20 members) and
            // says so with a next link: a group cut short would lose users silently.
            if let next = group.member("members@odata.nextLink") ?? list.member("@odata.nextLink") {
                log.append(next.problem(.warning, "group \(id)'s members are not all here (a next link): $expand lists at most 20; export GET /groups/\(id)/members, follow its @odata.nextLink, and put every member under \"members\""))
            }
            for member in list.listOrGraphResponse(of: "members", &log) ?? [] {
                guard member.object(&log) != nil else { continue }
                let type = member.member("@odata.type")?.string(&log) ?? "#microsoft.graph.user"
                guard type == "#microsoft.graph.user" else {
                    log.append(member.problem(.warning, "a \(type) member is not followed: only users are (a nested group's members are listed in its own entry)"))
                    continue
                }
                guard let upnNode = member.member("userPrincipalName") else {
                    log.append(member.problem("a user member needs its \"userPrincipalName\""))
                    continue
                }
                if case .null = upnNode.node.value {
                    // Graph answers only @odata.type and id for objects the exporter may not read.
                    log.append(upnNode.problem("the user's userPrincipalName is null: the export was made without permission to read users (User.Read.All)"))
                    continue
                }
                guard let upn = upnNode.string(&log) else { continue }
                guard upn.contains("@") else { log.append(upnNode.problem("\"\(upn)\" is not a user principal name; expected name@domain")); continue }
                let oid = member.member("id")?.string(&log)
                if let i = byUPN[upn.lowercased()] {
                    if let oid, let known = tenant.users[i].oid, known.lowercased() != oid.lowercased() {
                        log.append(member.problem("user \(upn) has id \(oid) here and \(known) in another group"))
                        continue
                    }
                    if !tenant.users[i].groups.contains(id) { tenant.users[i].groups.append(id) }
                    continue
                }
                if let oid, let i = byOID[oid.lowercased()] ?? byUPN[oid.lowercased()] {
                    log.append(member.problem("user id \(oid) is \(tenant.users[i].upn) in another group, \(upn) here"))
                    continue
                }
                // One name, one user: a UPN that is another user's id would sign in as, enroll and wipe that user.
                if let i = byOID[upn.lowercased()] {
                    log.append(upnNode.problem("\(upn) is the id of user \(tenant.users[i].upn); a name may be one user's only"))
                    continue
                }
                var user = TenantUser(upn: upn)
                user.oid = oid
                user.groups = [id]
                byUPN[upn.lowercased()] = tenant.users.count
                if let oid { byOID[oid.lowercased()] = tenant.users.count }
                tenant.users.append(user)
            }
        }
    }
}
