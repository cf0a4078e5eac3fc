/// Writes a typed tenant back as a tenant file (SEMANTICS §3, docs/POLICIES.md) that
/// `TenantFile.load` and `ConditionalAccessFile.load` read into the same tenant: every policy
/// inline in its Graph form, users, devices, app configurations and conditional access.
///
/// The live matrix hands the broker the tenant its prediction decides by through this one
/// writer, so the two cannot read the author's files two ways. What a file says about where a
/// value was written (origins, positions) is not part of the tenant and is not written.
extension TenantFile {
    public static func write(_ tenant: Tenant, conditionalAccess: ConditionalAccessSettings? = nil) -> Node {
        var pairs: [(key: String, value: Node)] = [
            ("tenant", string(tenant.name)),
            ("users", Node(.array(tenant.users.map(write)))),
            ("groups", strings(tenant.groups)),
            ("personalAccounts", strings(tenant.personalAccounts)),
            ("device", write(tenant.device)),
            ("policies", Node(.array(tenant.policies.map(GraphPolicy.write)))),
            ("appConfigurations", Node(.array(tenant.appConfigurations.map { GraphAppConfiguration.write($0) }))),
        ]
        if let d = tenant.appConfigurationDefault { pairs.append(("appConfigurationDefault", GraphAppConfiguration.write(d))) }
        if let ca = conditionalAccess, ca.tenantId != nil || !ca.policies.isEmpty || !ca.forced.isEmpty {
            pairs.append((ConditionalAccessFile.key, ConditionalAccessFile.write(ca, users: tenant.users)))
        }
        return Node(.object(pairs))
    }

    static func write(_ user: TenantUser) -> Node {
        var pairs: [(key: String, value: Node)] = [("upn", string(user.upn))]
        if let oid = user.oid { pairs.append(("oid", string(oid))) }
        pairs.append(("groups", strings(user.groups)))
        if let c = user.credential { pairs.append(("credential", string(c))) }
        return Node(.object(pairs))
    }

    static func write(_ device: Device) -> Node {
        var pairs: [(key: String, value: Node)] = [("mdmEnrolled", Node(.bool(device.mdmEnrolled)))]
        if let u = device.mdmUser { pairs.append(("mdmUser", string(name(of: u)))) }
        pairs.append(("enrollments", Node(.object(device.enrollments.sorted { $0.key < $1.key }.map { ($0.key, string(name(of: $0.value))) }))))
        pairs.append(("mdmManagedApps", strings(device.mdmManagedApps.sorted())))
        if let allowed = device.allowedAccounts { pairs.append(("allowedAccounts", strings(allowed.map(name(of:))))) }
        let p = device.profile
        pairs += [("os", Node(.string(p.os.text))), ("model", Node(.string(p.model))), ("jailbroken", Node(.bool(p.jailbroken))),
                  ("threatLevel", Node(.string(p.threatLevel.rawValue))), ("biometrics", Node(.bool(p.biometrics))),
                  ("passcode", Node(.bool(p.passcode)))]
        if let since = p.offlineSince { pairs.append(("offlineSince", Node(.string(DeviceProfile.text(since))))) }
        return Node(.object(pairs))
    }

    /// How the loader finds an account again: by its UPN (tenant users have one).
    static func name(of account: Account) -> String { account.upn ?? account.name }

    static func string(_ s: String) -> Node { Node(.string(s)) }
    static func strings(_ list: [String]) -> Node { Node(.array(list.map(string))) }
}

extension GraphAppConfiguration {
    /// One configuration in Graph's `targetedManagedAppConfiguration` shape (the tenant default
    /// without assignments, as it is read).
    public static func write(_ c: AppConfiguration) -> Node {
        var pairs: [(key: String, value: Node)] = [
            ("@odata.type", Node(.string(odataType))),
            ("id", Node(.string(c.id))),
            ("displayName", Node(.string(c.displayName))),
            ("customSettings", Node(.array(c.settings.map { s in
                Node(.object([("name", Node(.string(s.name))), ("value", Node(.string(s.value)))]))
            }))),
        ]
        if c.allApps { pairs.append(("appGroupType", Node(.string(AppGroupType.allApps.rawValue)))) }
        if !c.targetedApps.isEmpty || !c.isTenantDefault { pairs.append(("apps", GraphPolicy.appList(c.targetedApps))) }
        if !c.isTenantDefault {
            var scratch = Policy(id: c.id, displayName: c.displayName)
            scratch.includedGroups = c.includedGroups
            scratch.excludedGroups = c.excludedGroups
            scratch.allUsers = c.allUsers
            pairs.append(("assignments", GraphPolicy.assignments(of: scratch)))
        }
        return Node(.object(pairs))
    }
}

extension ConditionalAccessFile {
    /// The section in the shape `read` takes; users are named by UPN (`users` is the tenant's,
    /// whose indices the settings hold).
    public static func write(_ settings: ConditionalAccessSettings, users: [TenantUser]) -> Node {
        func upns(_ indices: Set<Int>) -> Node {
            Node(.array(indices.sorted().filter { $0 < users.count }.map { Node(.string(users[$0].upn)) }))
        }
        var pairs: [(key: String, value: Node)] = []
        if let id = settings.tenantId { pairs.append(("tenantId", Node(.string(id)))) }
        pairs.append(("policies", Node(.array(settings.policies.map { p in
            var policy: [(key: String, value: Node)] = []
            if let id = p.id { policy.append(("id", Node(.string(id)))) }
            policy.append(("displayName", Node(.string(p.displayName))))
            policy.append(("state", Node(.string(p.state.rawValue))))
            var included = upns(p.includedUsers)
            if p.includesAllUsers, case let .array(list) = included.value { included = Node(.array([Node(.string("All"))] + list)) }
            let userConditions: [(key: String, value: Node)] = [
                ("includeUsers", included), ("excludeUsers", upns(p.excludedUsers)),
                ("includeGroups", Node(.array(p.includedGroups.sorted().map { Node(.string($0)) }))),
                ("excludeGroups", Node(.array(p.excludedGroups.sorted().map { Node(.string($0)) }))),
            ]
            policy.append(("conditions", Node(.object([
                ("users", Node(.object(userConditions))),
                ("applications", Node(.object([("includeApplications", Node(.array([Node(.string("All"))])))]))),
            ]))))
            // The one control the emulation reads; a policy without it is written with "block",
            // a control it knows and ignores, so that it still reads as a policy of its own.
            let control = p.requiresAppProtection ? "compliantApplication" : "block"
            policy.append(("grantControls", Node(.object([
                ("operator", Node(.string("OR"))), ("builtInControls", Node(.array([Node(.string(control))]))),
            ]))))
            return Node(.object(policy))
        }))))
        let forced = settings.forced.sorted { $0.key < $1.key }.filter { $0.key < users.count }
        pairs.append(("forceRemediation", Node(.object(forced.map { user, f in
            var kinds: [(key: String, value: Node)] = []
            if let s = f.silent { kinds.append(("silent", Node(.string(s.name)))) }
            if let s = f.interactive { kinds.append(("interactive", Node(.string(s.name)))) }
            return (users[user].upn, Node(.object(kinds)))
        }))))
        return Node(.object(pairs))
    }
}
