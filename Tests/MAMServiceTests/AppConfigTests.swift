import Foundation
import MAMCatalog
import MAMPolicy
import MAMService
import Testing

/// The app configuration an (app, account) receives and the SDK's queries on it (SDK reference,
/// user status and app config): full data with the default marked, targeted values winning over
/// the default, conflicts only among targeted values, nil or empty for an absent key.
@Suite("App configuration")
struct AppConfigTests {
    static let users = #""users": [{"upn": "adele@contoso.com", "groups": ["sales", "pilot"]}, {"upn": "ben@contoso.com", "groups": ["finance"]}, {"upn": "cara@contoso.com", "groups": ["sales", "finance"]}], "personalAccounts": ["dana@outlook.com"]"#
    static let policy = ##""policies": [{"displayName": "P", "apps": ["com.contoso.mail", "com.contoso.docs"], "assignments": [{"target": {"@odata.type": "#microsoft.graph.allLicensedUsersAssignmentTarget"}}]}]"##
    static let salesMail = #"{"id": "sales-mail", "displayName": "Sales mail", "customSettings": [{"name": "sync", "value": "15"}, {"name": "beta", "value": "TRUE"}, {"name": "signature", "value": "Sales"}], "apps": ["com.contoso.mail"], "assignments": [{"target": {"groupId": "sales"}}]}"#
    static let financeMail = #"{"id": "finance-mail", "displayName": "Finance mail", "customSettings": [{"name": "sync", "value": "5"}, {"name": "beta", "value": "0"}, {"name": "signature", "value": "Sales"}], "apps": ["com.contoso.mail"], "assignments": [{"target": {"groupId": "finance"}}]}"#
    static let notPilot = ##"{"id": "not-pilot", "displayName": "Everyone but the pilot", "customSettings": [{"name": "banner", "value": "hello"}], "apps": ["com.contoso.docs"], "assignments": [{"target": {"@odata.type": "#microsoft.graph.allLicensedUsersAssignmentTarget"}}, {"target": {"@odata.type": "#microsoft.graph.exclusionGroupAssignmentTarget", "groupId": "pilot"}}]}"##
    static let defaults = #""appConfigurationDefault": {"displayName": "Defaults", "customSettings": [{"name": "sync", "value": "30"}, {"name": "support", "value": "https://help.contoso.com"}, {"name": "retries", "value": "3"}, {"name": "beta", "value": "false"}]}"#

    static func tenant(_ configurations: [String], _ extra: String = defaults) -> Tenant {
        let json = "{" + users + ", " + policy + #", "appConfigurations": ["# + configurations.joined(separator: ", ") + "], " + extra + "}"
        return try! TenantFile.load(Data(json.utf8), file: "t.json") { _ in throw LoadFailure([]) }.tenant
    }

    static let lab = tenant([salesMail, financeMail, notPilot])

    static func config(_ upn: String, _ app: String = "com.contoso.mail", in tenant: Tenant = lab) -> AppConfig {
        AppConfig.resolve(tenant, app: app, account: tenant.identity(named: upn).account!)
    }

    // MARK: Full data

    @Test func fullDataListsEveryReachingConfigurationThenTheMarkedDefault() {
        #expect(Self.config("cara@contoso.com").fullData.map(\.sourceName) == ["Sales mail", "Finance mail", "Defaults"])
        #expect(Self.config("adele@contoso.com").fullData.map(\.sourceName) == ["Sales mail", "Defaults"])
        #expect(Self.config("ben@contoso.com").fullData.map(\.sourceName) == ["Finance mail", "Defaults"])
        let values = Self.config("adele@contoso.com").fullDataValues
        #expect(values == [
            ["sync": "15", "beta": "TRUE", "signature": "Sales"],
            ["sync": "30", "support": "https://help.contoso.com", "retries": "3", "beta": "false", "__IsDefault": "true"],
        ])
        #expect(Self.config("adele@contoso.com").fullData.map(\.isDefault) == [false, true])
    }

    @Test func groupTargetingIncludesAndExcludes() {
        // "Everyone but the pilot" in Docs: all licensed users, minus the pilot group (adele).
        #expect(Self.config("ben@contoso.com", "com.contoso.docs").fullData.map(\.sourceID) == ["not-pilot", "Defaults"])
        #expect(Self.config("adele@contoso.com", "com.contoso.docs").fullData.map(\.sourceID) == ["Defaults"])
        // Bundle ids compare without case.
        #expect(Self.config("ben@contoso.com", "COM.Contoso.Docs").fullData.count == 2)
    }

    @Test func nobodyOutsideTheTenantOrTheManagedAppsReceivesConfiguration() {
        let personal = AppConfig.resolve(Self.lab, app: "com.contoso.mail", account: Account(unknown: "dana@outlook.com"))
        #expect(personal.fullData.isEmpty)
        #expect(Self.config("adele@contoso.com", "com.contoso.notes").fullData.isEmpty)
        #expect(personal.stringValue("sync") == nil && personal.allStrings("sync").isEmpty && !personal.hasConflict("sync"))
    }

    @Test func aTenantWithoutTheSectionGivesNothing() {
        let json = "{" + Self.users + ", " + Self.policy + "}"
        let t = try! TenantFile.load(Data(json.utf8), file: "t.json") { _ in throw LoadFailure([]) }.tenant
        #expect(Self.config("adele@contoso.com", in: t).fullData.isEmpty)
    }

    @Test func severalAccountsShareEachConfigurationOnce() {
        let both = AppConfig.resolve(Self.lab, app: "com.contoso.mail",
                                     accounts: ["adele@contoso.com", "ben@contoso.com", "cara@contoso.com"].map { Self.lab.identity(named: $0).account! })
        #expect(both.fullData.map(\.sourceName) == ["Sales mail", "Finance mail", "Defaults"])
    }

    // MARK: Queries

    /// (account, query, expected): every getter and query type of the SDK, on Mail.
    static let queries: [(String, String, @Sendable (AppConfig) -> String)] = [
        // cara is in sales and finance: sync is 15 and 5, beta TRUE and 0, the default says 30 and false.
        ("cara@contoso.com", "string any is the first in file order", { "\($0.stringValue("sync", query: .any) ?? "nil")" }),
        ("cara@contoso.com", "string min compares text", { "\($0.stringValue("sync", query: .min) ?? "nil")" }),
        ("cara@contoso.com", "string max compares text", { "\($0.stringValue("sync", query: .max) ?? "nil")" }),
        ("cara@contoso.com", "number any", { "\($0.numberValue("sync", query: .any).map(String.init(describing:)) ?? "nil")" }),
        ("cara@contoso.com", "number min", { "\($0.numberValue("sync", query: .min).map(String.init(describing:)) ?? "nil")" }),
        ("cara@contoso.com", "number max", { "\($0.numberValue("sync", query: .max).map(String.init(describing:)) ?? "nil")" }),
        ("cara@contoso.com", "bool any", { "\($0.boolValue("beta", query: .any).map(String.init(describing:)) ?? "nil")" }),
        ("cara@contoso.com", "bool or", { "\($0.boolValue("beta", query: .or).map(String.init(describing:)) ?? "nil")" }),
        ("cara@contoso.com", "bool and", { "\($0.boolValue("beta", query: .and).map(String.init(describing:)) ?? "nil")" }),
        ("cara@contoso.com", "all strings leave the default out", { "\($0.allStrings("sync"))" }),
        ("cara@contoso.com", "all numbers", { "\($0.allNumbers("sync"))" }),
        ("cara@contoso.com", "all bools", { "\($0.allBools("beta"))" }),
        ("cara@contoso.com", "conflict on sync", { "\($0.hasConflict("sync"))" }),
        ("cara@contoso.com", "equal targeted values are no conflict", { "\($0.hasConflict("signature"))" }),
        ("cara@contoso.com", "the default alone is no conflict", { "\($0.hasConflict("support"))" }),
        ("cara@contoso.com", "every conflict with its sources", { $0.conflicts.map { "\($0.key): " + $0.values.map { "\($0.source)=\($0.value)" }.joined(separator: ", ") }.joined(separator: "; ") }),
        ("cara@contoso.com", "the default's value when it is the only one", { "\($0.stringValue("support") ?? "nil")" }),
        ("cara@contoso.com", "the default's number when it is the only one", { "\($0.numberValue("retries", query: .max).map(String.init(describing:)) ?? "nil")" }),
        ("cara@contoso.com", "text that is no number is left out", { "\($0.numberValue("support").map(String.init(describing:)) ?? "nil") \($0.allNumbers("support"))" }),
        ("cara@contoso.com", "text that is no boolean is left out", { "\($0.boolValue("signature").map(String.init(describing:)) ?? "nil") \($0.allBools("signature"))" }),
        ("cara@contoso.com", "an absent key is nil or empty", { "\($0.stringValue("nope") ?? "nil") \($0.numberValue("nope").map(String.init(describing:)) ?? "nil") \($0.boolValue("nope").map(String.init(describing:)) ?? "nil") \($0.allStrings("nope")) \($0.allNumbers("nope")) \($0.allBools("nope")) \($0.hasConflict("nope"))" }),
        // adele is in sales only: the targeted 15 wins over the default's 30, and there is no conflict.
        ("adele@contoso.com", "a targeted value wins over the default", { "\($0.numberValue("sync", query: .max).map(String.init(describing:)) ?? "nil") \($0.allStrings("sync")) \($0.hasConflict("sync"))" }),
        ("adele@contoso.com", "a targeted true beats the default's false under and", { "\($0.boolValue("beta", query: .and).map(String.init(describing:)) ?? "nil")" }),
    ]

    static let expected = [
        "15", "15", "5", "15.0", "5.0", "15.0", "true", "true", "false",
        #"["15", "5"]"#, "[15.0, 5.0]", "[true, false]", "true", "false", "false",
        "sync: Sales mail=15, Finance mail=5; beta: Sales mail=TRUE, Finance mail=0",
        "https://help.contoso.com", "3.0", "nil []", "nil []", "nil nil nil [] [] [] false",
        #"15.0 ["15"] false"#, "true",
    ]

    @Test("queries", arguments: queries.indices)
    func query(_ i: Int) {
        let (upn, what, ask) = Self.queries[i]
        #expect(ask(Self.config(upn)) == Self.expected[i], "\(what)")
    }

    @Test func queryTypesHaveTheSDKsRawValues() {
        #expect(AppConfigBoolQuery.allCases.map(\.rawValue) == [0, 1, 2])
        #expect([AppConfigBoolQuery.any, .or, .and].map(\.rawValue) == [0, 1, 2])
        #expect([AppConfigOrderQuery.any, .min, .max].map(\.rawValue) == [0, 1, 2])
    }

    /// (text, what a number getter reads, what a boolean getter reads).
    static let texts: [(String, Double?, Bool?)] = [
        ("15", 15, nil), ("-2", -2, nil), ("+4", 4, nil), ("3.5", 3.5, nil), (".5", 0.5, nil), ("1e3", 1000, nil),
        ("2E-1", 0.2, nil), ("1", 1, true), ("0", 0, false), ("true", nil, true), ("False", nil, false),
        ("TRUE", nil, true), ("yes", nil, nil), ("", nil, nil), (" 5", nil, nil), ("5 ", nil, nil), ("nan", nil, nil),
        ("inf", nil, nil), ("0x10", nil, nil), ("1e", nil, nil), ("-", nil, nil), ("1e999", nil, nil), ("1,5", nil, nil),
    ]

    @Test("how text reads as a number and a boolean", arguments: texts.indices)
    func textReadsAs(_ i: Int) {
        let (text, number, bool) = Self.texts[i]
        let c = AppConfig(fullData: [AppConfigDictionary(AppConfiguration(id: "c", displayName: "c", settings: [AppConfigSetting(name: "k", value: text)]))])
        #expect(c.numberValue("k") == number, "\(text)")
        #expect(c.boolValue("k") == bool, "\(text)")
        #expect(c.stringValue("k") == text)
    }

    // MARK: Change notifications

    @Test func aChangedValueNotifiesEveryPairItReaches() {
        let new = Self.tenant([Self.salesMail.replacingOccurrences(of: #""value": "15""#, with: #""value": "20""#), Self.financeMail, Self.notPilot])
        let changes = AppConfigChanges.between(old: Self.lab, new: new)
        #expect(changes.map { "\($0.app) \($0.account)" } == ["com.contoso.mail adele@contoso.com", "com.contoso.mail cara@contoso.com"])
        #expect(changes.first?.before.stringValue("sync") == "15")
        #expect(changes.first?.after.stringValue("sync") == "20")
    }

    @Test func sameSettingsElsewhereInTheFileIsNoChange() {
        // Other line breaks and indentation: every origin moves, nothing the app sees changes.
        let moved = Self.tenant([Self.salesMail.replacingOccurrences(of: ", ", with: ",\n  "), Self.financeMail, Self.notPilot])
        #expect(AppConfigChanges.between(old: Self.lab, new: moved).isEmpty)
        #expect(AppConfigChanges.between(old: Self.lab, new: Self.lab).isEmpty)
    }

    @Test func theDefaultGroupsAndRemovedConfigurationsNotify() {
        // A new default value reaches everyone in both apps.
        let newDefault = Self.tenant([Self.salesMail, Self.financeMail, Self.notPilot],
                                     Self.defaults.replacingOccurrences(of: "help.contoso", with: "support.contoso"))
        #expect(AppConfigChanges.between(old: Self.lab, new: newDefault).count == 6)
        // Removing "Everyone but the pilot" changes Docs for ben and cara, not for adele (excluded).
        let removed = Self.tenant([Self.salesMail, Self.financeMail])
        #expect(AppConfigChanges.between(old: Self.lab, new: removed).map { "\($0.app) \($0.account)" }
            == ["com.contoso.docs ben@contoso.com", "com.contoso.docs cara@contoso.com"])
        // Only the pairs the broker asks about.
        let asked = AppConfigChanges.between(old: Self.lab, new: removed, pairs: [(app: "com.contoso.docs", account: "BEN@contoso.com"),
                                                                                  (app: "com.contoso.mail", account: "ben@contoso.com")])
        #expect(asked.map { "\($0.app) \($0.account)" } == ["com.contoso.docs ben@contoso.com"])
        #expect(asked.first?.after.fullData.map(\.sourceID) == ["Defaults"])
    }

    @Test func aUserWhoLeavesTheTenantLosesTheConfiguration() {
        let json = "{" + Self.users.replacingOccurrences(of: #", {"upn": "ben@contoso.com", "groups": ["finance"]}"#, with: "") + ", " + Self.policy + ", " + Self.defaults + "}"
        let fewer = try! TenantFile.load(Data(json.utf8), file: "t.json") { _ in throw LoadFailure([]) }.tenant
        let ben = AppConfigChanges.between(old: Self.lab, new: fewer).filter { $0.account == "ben@contoso.com" }
        #expect(ben.count == 2)
        #expect(ben.allSatisfy { $0.after.fullData.isEmpty })
    }

    @Test func theSampleTenantGivesSalesMailItsSettings() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let t = try Catalog.loadTenant(root.appendingPathComponent("Policies/contoso/tenant.json").path).tenant
        let adele = Self.config("adele@contoso.com", in: t)
        #expect(adele.numberValue("com.contoso.syncIntervalMinutes") == 15)
        #expect(adele.stringValue("com.contoso.supportURL") == "https://help.contoso.com")
        #expect(adele.fullData.last?.isDefault == true)
        let edge = Self.config("ben@contoso.com", "com.microsoft.msedge", in: t)
        #expect(edge.boolValue("com.contoso.betaFeatures") == true)
        #expect(edge.allStrings("com.contoso.betaFeatures") == ["true"])
        #expect(!edge.hasConflict("com.contoso.betaFeatures"))
    }
}
