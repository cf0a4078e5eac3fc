/// One custom setting of an app configuration: a name and a text value, delivered to the app as
/// written. Graph's `keyValuePair` carries strings only; the SDK's typed getters read the text.
public struct AppConfigSetting: Sendable, Hashable {
    public var name: String
    public var value: String
    /// Where the setting was written; not part of what it is.
    public var origin: Origin

    public init(name: String, value: String, origin: Origin = Origin(file: "", path: "")) {
        self.name = name
        self.value = value
        self.origin = origin
    }

    public static func == (a: AppConfigSetting, b: AppConfigSetting) -> Bool { a.name == b.name && a.value == b.value }
    public func hash(into hasher: inout Hasher) { hasher.combine(name); hasher.combine(value) }
}

/// An app configuration of the tenant, in the shape of Graph's `targetedManagedAppConfiguration`:
/// custom settings sent as-is to the targeted apps of the users in the assigned groups.
///
/// The tenant default has the same shape, is marked `isTenantDefault`, reaches every user of the
/// tenant and, unless it lists apps, every app the tenant manages.
public struct AppConfiguration: Sendable, Hashable {
    public var id: String
    public var displayName: String
    public var settings: [AppConfigSetting]
    /// Bundle ids, lower-cased.
    public var targetedApps: [String]
    /// Graph `appGroupType` = `allApps`: every app the tenant manages.
    public var allApps: Bool
    public var includedGroups: [String]
    public var excludedGroups: [String]
    /// An `allLicensedUsersAssignmentTarget` assignment.
    public var allUsers: Bool
    public var isTenantDefault: Bool
    /// Where the configuration was read from; not part of what it is.
    public var origin: Origin

    public init(id: String, displayName: String, settings: [AppConfigSetting] = [], targetedApps: [String] = [],
                allApps: Bool = false, includedGroups: [String] = [], excludedGroups: [String] = [],
                allUsers: Bool = false, isTenantDefault: Bool = false, origin: Origin = Origin(file: "", path: "")) {
        self.id = id
        self.displayName = displayName
        self.settings = settings
        self.targetedApps = targetedApps.map { $0.lowercased() }
        self.allApps = allApps
        self.includedGroups = includedGroups
        self.excludedGroups = excludedGroups
        self.allUsers = allUsers
        self.isTenantDefault = isTenantDefault
        self.origin = origin
    }

    public static func == (a: AppConfiguration, b: AppConfiguration) -> Bool {
        a.id == b.id && a.displayName == b.displayName && a.settings == b.settings && a.targetedApps == b.targetedApps
            && a.allApps == b.allApps && a.includedGroups == b.includedGroups && a.excludedGroups == b.excludedGroups
            && a.allUsers == b.allUsers && a.isTenantDefault == b.isTenantDefault
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(id); hasher.combine(settings) }

    /// The value written for a name, if the configuration sets it.
    public func value(for name: String) -> String? { settings.first { $0.name == name }?.value }

    /// Whether the configuration names this app (`allApps` is decided by the tenant, which knows its apps).
    public func names(app bundleID: String) -> Bool { allApps || targetedApps.contains(bundleID.lowercased()) }

    /// Whether the configuration is assigned to a user in these groups (the default: to everyone).
    public func isAssigned(toGroups groups: [String]) -> Bool {
        if isTenantDefault { return true }
        let lowered = Set(groups.map { $0.lowercased() })
        if excludedGroups.contains(where: { lowered.contains($0.lowercased()) }) { return false }
        return allUsers || includedGroups.contains(where: { lowered.contains($0.lowercased()) })
    }
}

extension Tenant {
    /// The app configurations an account receives in an app, in the tenant file's order, the
    /// tenant default (when it reaches the app) last. Configuration goes to the tenant's users in
    /// the apps the tenant manages (some app-protection policy targets them); an account the tenant
    /// does not know, or an unmanaged app, receives none.
    public func appConfigurations(app bundleID: String, account: Account) -> [AppConfiguration] {
        guard let u = account.userIndex, u < users.count, isTargeted(app: bundleID) else { return [] }
        let groups = users[u].groups
        var out = appConfigurations.filter { $0.names(app: bundleID) && $0.isAssigned(toGroups: groups) }
        if let d = appConfigurationDefault, d.targetedApps.isEmpty || d.names(app: bundleID) { out.append(d) }
        return out
    }

    /// Every bundle id some app-protection policy targets (lower-cased, sorted).
    public var managedApps: [String] { Set(policies.flatMap(\.targetedApps)).sorted() }

    /// Leaves each app configuration only the apps a policy targets, and drops one that named
    /// apps and has none left: configuration reaches managed apps only (the tenant file may not
    /// name another), so after the policies' targets change, the rest no longer apply.
    public mutating func keepConfigurationsOfManagedApps() {
        let managed = Set(managedApps)
        appConfigurations = appConfigurations.compactMap { c in
            var c = c
            let named = !c.targetedApps.isEmpty
            c.targetedApps = c.targetedApps.filter(managed.contains)
            return named && c.targetedApps.isEmpty && !c.allApps ? nil : c
        }
        if var d = appConfigurationDefault, !d.targetedApps.isEmpty {
            d.targetedApps = d.targetedApps.filter(managed.contains)
            appConfigurationDefault = d.targetedApps.isEmpty ? nil : d
        }
    }
}
