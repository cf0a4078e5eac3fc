import MAMPolicy

/// An (app, account) whose configuration differs between two tenants: the app is sent the SDK's
/// `IntuneMAMAppConfigDidChangeNotification` for that account.
public struct AppConfigChange: Sendable, Hashable {
    /// Bundle id, lower-cased.
    public var app: String
    /// The account's UPN as the new tenant writes it (the old one's when the user was removed).
    public var account: String
    public var before: AppConfig
    public var after: AppConfig
}

/// Change notifications on a tenant reload, as a pure function of the two tenants.
public enum AppConfigChanges {
    /// Every (app, user) pair whose resolved configuration changed, sorted by app then account.
    /// Users are matched by UPN (case-insensitive); apps are those either tenant manages. A pair
    /// whose configuration only moved in the file (another line, same settings) is not a change.
    public static func between(old: Tenant, new: Tenant) -> [AppConfigChange] {
        var upns: [String] = [], seen = Set<String>()
        for u in new.users + old.users where seen.insert(u.upn.lowercased()).inserted { upns.append(u.upn) }
        let apps = Set(old.managedApps + new.managedApps).sorted()
        return between(old: old, new: new, pairs: apps.flatMap { app in upns.map { (app: app, account: $0) } })
    }

    /// The pairs among these (for instance the enrolled ones the broker knows) whose configuration changed.
    public static func between(old: Tenant, new: Tenant, pairs: [(app: String, account: String)]) -> [AppConfigChange] {
        var out: [AppConfigChange] = []
        var seen = Set<String>()
        for (app, name) in pairs where seen.insert("\(app.lowercased())\u{0}\(name.lowercased())").inserted {
            let before = resolve(old, app, name), after = resolve(new, app, name)
            if before != after {
                let shown = new.knownAccount(named: name)?.upn ?? old.knownAccount(named: name)?.upn ?? name
                out.append(AppConfigChange(app: app.lowercased(), account: shown, before: before, after: after))
            }
        }
        return out.sorted { ($0.app, $0.account.lowercased()) < ($1.app, $1.account.lowercased()) }
    }

    private static func resolve(_ tenant: Tenant, _ app: String, _ name: String) -> AppConfig {
        guard let account = tenant.knownAccount(named: name) else { return AppConfig(fullData: []) }
        return AppConfig.resolve(tenant, app: app, account: account)
    }
}
