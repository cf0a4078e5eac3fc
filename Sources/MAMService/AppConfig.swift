import MAMPolicy

/// How `AppConfig.boolValue` picks among several values (the SDK's `IntuneMAMBoolQueryType`).
public enum AppConfigBoolQuery: Int, Sendable, CaseIterable {
    /// One of the values: the first, in the tenant file's order [chosen].
    case any = 0
    /// True when any value is true.
    case or = 1
    /// True when every value is true.
    case and = 2
}

/// How `AppConfig.numberValue` and `stringValue` pick among several values (the SDK's
/// `IntuneMAMNumberQueryType` and `IntuneMAMStringQueryType`).
public enum AppConfigOrderQuery: Int, Sendable, CaseIterable {
    /// One of the values: the first, in the tenant file's order [chosen].
    case any = 0
    case min = 1
    case max = 2
}

/// One dictionary of an app's full configuration data, with the configuration it came from.
public struct AppConfigDictionary: Sendable, Hashable {
    public var sourceID: String
    public var sourceName: String
    /// The tenant default; its dictionary carries `__IsDefault` = true.
    public var isDefault: Bool
    /// Settings in the order written.
    public var settings: [AppConfigSetting]

    public init(_ configuration: AppConfiguration) {
        sourceID = configuration.id
        sourceName = configuration.displayName
        isDefault = configuration.isTenantDefault
        settings = configuration.settings
    }

    public func value(for key: String) -> String? { settings.first { $0.name == key }?.value }

    /// The dictionary as the SDK's `fullData` hands it to the app: every setting as text, and
    /// `__IsDefault` = "true" on the tenant default's.
    public var values: [String: String] {
        var d: [String: String] = [:]
        for s in settings { d[s.name] = s.value }
        if isDefault { d[GraphAppConfiguration.defaultMarker] = "true" }
        return d
    }
}

/// A key to which two or more targeted configurations give different values.
public struct AppConfigConflict: Sendable, Hashable {
    public var key: String
    /// Each differing configuration's name and value, in the tenant file's order.
    public var values: [(source: String, value: String)]

    public static func == (a: AppConfigConflict, b: AppConfigConflict) -> Bool {
        a.key == b.key && a.values.elementsEqual(b.values) { $0.source == $1.source && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(key)
        for v in values { hasher.combine(v.source); hasher.combine(v.value) }
    }
}

/// The app configuration an (app, account) receives: the SDK's `IntuneMAMAppConfig`, as a value.
///
/// Rules (SDK reference, app config):
/// - `fullData` holds every configuration dictionary that reaches the account in the app:
///   targeted ones in the tenant file's order, then the tenant default, marked as such.
/// - Targeted values win over the default: a getter uses the default's value only when no targeted
///   configuration sets the key.
/// - `hasConflict` is true only when two or more targeted values differ; the default never makes one.
/// - Single-value getters return nil when the key is absent, `all…` getters an empty list.
/// - Values are text (Graph custom settings are strings). A number is written as a decimal
///   (`-2`, `3.5`, `1e3`), a boolean as `true`/`false` (any case) or `1`/`0` [chosen]; a value that
///   does not read as the asked type is left out of that type's getters [chosen].
public struct AppConfig: Sendable, Hashable {
    public var fullData: [AppConfigDictionary]

    public init(fullData: [AppConfigDictionary]) { self.fullData = fullData }

    /// What this account receives in this app from this tenant.
    public static func resolve(_ tenant: Tenant, app bundleID: String, account: Account) -> AppConfig {
        AppConfig(fullData: tenant.appConfigurations(app: bundleID, account: account).map(AppConfigDictionary.init))
    }

    /// `appConfigForAccountIds:`: the dictionaries of every account, each configuration once.
    public static func resolve(_ tenant: Tenant, app bundleID: String, accounts: [Account]) -> AppConfig {
        var seen = Set<String>(), targeted: [AppConfigDictionary] = [], defaults: [AppConfigDictionary] = []
        for a in accounts {
            for d in resolve(tenant, app: bundleID, account: a).fullData where seen.insert("\(d.isDefault)\u{0}\(d.sourceID)").inserted {
                if d.isDefault { defaults.append(d) } else { targeted.append(d) }
            }
        }
        return AppConfig(fullData: targeted + defaults)
    }

    /// The SDK's `fullData` as plain dictionaries.
    public var fullDataValues: [[String: String]] { fullData.map(\.values) }

    /// Every value the getters see for a key: the targeted ones, or the default's when it is the only one.
    public func values(for key: String) -> [String] {
        let targeted = fullData.filter { !$0.isDefault }.compactMap { $0.value(for: key) }
        if !targeted.isEmpty { return targeted }
        return fullData.filter(\.isDefault).compactMap { $0.value(for: key) }
    }

    public func hasConflict(_ key: String) -> Bool { conflict(key) != nil }

    /// The conflict on a key, with each targeted configuration's value; nil when there is none.
    public func conflict(_ key: String) -> AppConfigConflict? {
        let pairs = fullData.filter { !$0.isDefault }.compactMap { d in d.value(for: key).map { (source: d.sourceName, value: $0) } }
        guard Set(pairs.map(\.value)).count > 1 else { return nil }
        return AppConfigConflict(key: key, values: pairs)
    }

    /// Every conflicting key, in the order keys first appear.
    public var conflicts: [AppConfigConflict] {
        var keys: [String] = [], byKey: [String: [(source: String, value: String)]] = [:]
        for d in fullData where !d.isDefault {
            for s in d.settings {
                if byKey[s.name] == nil { keys.append(s.name) }
                byKey[s.name, default: []].append((d.sourceName, s.value))
            }
        }
        return keys.compactMap { key in
            let pairs = byKey[key]!
            return Set(pairs.map(\.value)).count > 1 ? AppConfigConflict(key: key, values: pairs) : nil
        }
    }

    // MARK: Getters

    public func allStrings(_ key: String) -> [String] { values(for: key) }
    public func allNumbers(_ key: String) -> [Double] { values(for: key).compactMap(Self.number) }
    public func allBools(_ key: String) -> [Bool] { values(for: key).compactMap(Self.bool) }

    public func stringValue(_ key: String, query: AppConfigOrderQuery = .any) -> String? {
        Self.pick(allStrings(key), query)
    }

    public func numberValue(_ key: String, query: AppConfigOrderQuery = .any) -> Double? {
        Self.pick(allNumbers(key), query)
    }

    public func boolValue(_ key: String, query: AppConfigBoolQuery = .any) -> Bool? {
        let all = allBools(key)
        guard let first = all.first else { return nil }
        switch query {
        case .any: return first
        case .or: return all.contains(true)
        case .and: return !all.contains(false)
        }
    }

    private static func pick<T: Comparable>(_ all: [T], _ query: AppConfigOrderQuery) -> T? {
        switch query {
        case .any: return all.first
        case .min: return all.min()
        case .max: return all.max()
        }
    }

    /// A decimal number: optional sign, digits, optional fraction and exponent; finite.
    static func number(_ text: String) -> Double? {
        var rest = Substring(text)
        if rest.first == "-" || rest.first == "+" { rest = rest.dropFirst() }
        func digits() -> Int {
            let n = rest.prefix { $0.isASCII && $0.isNumber }.count
            rest = rest.dropFirst(n)
            return n
        }
        var count = digits()
        if rest.first == "." { rest = rest.dropFirst(); count += digits() }
        guard count > 0 else { return nil }
        if rest.first == "e" || rest.first == "E" {
            rest = rest.dropFirst()
            if rest.first == "-" || rest.first == "+" { rest = rest.dropFirst() }
            guard digits() > 0 else { return nil }
        }
        guard rest.isEmpty, let d = Double(text), d.isFinite else { return nil }
        return d
    }

    static func bool(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true", "1": return true
        case "false", "0": return false
        default: return nil
        }
    }
}
