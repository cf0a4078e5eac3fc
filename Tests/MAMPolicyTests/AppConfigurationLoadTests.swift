import Foundation
import MAMPolicy
import Testing

/// The tenant file's app-configuration sections: what is read, and one exact line for each kind
/// of bad input (file, line:column, JSON path, what is wrong).
@Suite("App configuration loading")
struct AppConfigurationLoadTests {
    /// Line 1 of every tenant below: two users, a spare group, a policy managing Mail and Docs.
    static let head = #"{"users": [{"upn": "adele@contoso.com", "groups": ["sales"]}, {"upn": "ben@contoso.com", "groups": ["finance"]}], "groups": ["pilot"], "policies": [{"displayName": "P", "apps": ["com.contoso.mail", "com.contoso.docs"], "assignments": [{"target": {"groupId": "sales"}}, {"target": {"groupId": "finance"}}]}],"#
    static let targeting = #""apps": ["com.contoso.mail"], "assignments": [{"target": {"groupId": "sales"}}]"#

    /// A tenant whose line 2 is `"appConfigurations": [` + items + `]}`: items start at column 23.
    static func targeted(_ items: String) -> String { head + "\n" + #""appConfigurations": ["# + items + "]}" }
    /// A tenant whose line 2 is `"appConfigurationDefault": ` + object + `}`: it starts at column 28.
    static func withDefault(_ object: String) -> String { head + "\n" + #""appConfigurationDefault": "# + object + "}" }

    func load(_ json: String) throws(LoadFailure) -> TenantFile.Loaded {
        try TenantFile.load(Data(json.utf8), file: "t.json") { _ in throw LoadFailure([]) }
    }

    func errors(_ json: String) -> [String] {
        do {
            _ = try load(json)
            return []
        } catch {
            return error.diagnostics.filter { $0.severity == .error }.map(\.description)
        }
    }

    @Test func targetedConfigurationsAndTheDefaultAreRead() throws {
        let json = Self.head + "\n" + ##""appConfigurations": {"value": [{"@odata.type": "#microsoft.graph.targetedManagedAppConfiguration", "id": "c1", "displayName": "Mail for Sales", "version": "3", "customSettings": [{"@odata.type": "microsoft.graph.keyValuePair", "name": "sync", "value": "15"}, {"name": "signature", "value": ""}], "apps": [{"mobileAppIdentifier": {"@odata.type": "#microsoft.graph.iosMobileAppIdentifier", "bundleId": "com.contoso.Mail"}}], "assignments": [{"target": {"@odata.type": "#microsoft.graph.allLicensedUsersAssignmentTarget"}}, {"target": {"@odata.type": "#microsoft.graph.exclusionGroupAssignmentTarget", "groupId": "finance"}}]}, {"id": "c2", "appGroupType": "allApps", "assignments": [{"target": {"groupId": "pilot"}}]}]}, "appConfigurationDefault": {"customSettings": [{"name": "sync", "value": "30"}]}}"##
        let loaded = try load(json)
        #expect(loaded.warnings.isEmpty, "\(loaded.warnings)")
        let c = loaded.tenant.appConfigurations
        #expect(c.map(\.id) == ["c1", "c2"])
        #expect(c[0].displayName == "Mail for Sales")
        #expect(c[0].settings == [AppConfigSetting(name: "sync", value: "15"), AppConfigSetting(name: "signature", value: "")])
        #expect(c[0].settings[0].origin.description == "t.json:2:181 $.appConfigurations.value[0].customSettings[0]")
        #expect(c[0].targetedApps == ["com.contoso.mail"])
        #expect(c[0].allUsers && c[0].excludedGroups == ["finance"] && !c[0].isTenantDefault)
        #expect(c[1].allApps && c[1].includedGroups == ["pilot"] && c[1].displayName == "c2")
        let d = try #require(loaded.tenant.appConfigurationDefault)
        #expect(d.isTenantDefault && d.displayName == "tenant default" && d.settings.map(\.value) == ["30"])
    }

    /// (what is wrong, tenant text, the one error line).
    static let badInput: [(String, String, String)] = [
        ("a value that is not text",
         targeted(#"{"displayName": "A", "customSettings": [{"name": "k", "value": true}], "# + targeting + "}"),
         #"t.json:2:86: error: $.appConfigurations[0].customSettings[0].value: expected a string (Graph sends every custom setting as text: write "true" or "5"), found boolean true"#),
        ("a setting without a value",
         targeted(#"{"displayName": "A", "customSettings": [{"name": "k"}], "# + targeting + "}"),
         #"t.json:2:63: error: $.appConfigurations[0].customSettings[0]: a custom setting needs a "name" and a "value""#),
        ("the reserved default marker",
         targeted(#"{"displayName": "A", "customSettings": [{"name": "__IsDefault", "value": "true"}], "# + targeting + "}"),
         #"t.json:2:72: error: $.appConfigurations[0].customSettings[0].name: "__IsDefault" is reserved: it marks the tenant default in the app's full data"#),
        ("a name set twice",
         targeted(#"{"displayName": "A", "customSettings": [{"name": "k", "value": "1"}, {"name": "k", "value": "2"}], "# + targeting + "}"),
         #"t.json:2:101: error: $.appConfigurations[0].customSettings[1].name: setting "k" is already set at $.appConfigurations[0].customSettings[0]"#),
        ("an empty name",
         targeted(#"{"displayName": "A", "customSettings": [{"name": "", "value": "v"}], "# + targeting + "}"),
         #"t.json:2:72: error: $.appConfigurations[0].customSettings[0].name: a setting name is empty"#),
        ("settings that are not a list",
         targeted(#"{"displayName": "A", "customSettings": {"k": "v"}, "# + targeting + "}"),
         #"t.json:2:62: error: $.appConfigurations[0].customSettings: expected an array, found object"#),
        ("an unknown group",
         targeted(#"{"displayName": "A", "customSettings": [], "apps": ["com.contoso.mail"], "assignments": [{"target": {"groupId": "nobody"}}]}"#),
         #"t.json:2:135: error: $.appConfigurations[0].assignments[0].target.groupId: unknown group "nobody"; the tenant's groups are: finance, pilot, sales"#),
        ("an app no policy manages",
         targeted(#"{"displayName": "A", "customSettings": [], "apps": ["com.contoso.notes"], "assignments": [{"target": {"groupId": "sales"}}]}"#),
         #"t.json:2:75: error: $.appConfigurations[0].apps[0]: app com.contoso.notes is targeted by no app-protection policy of the tenant; configuration reaches managed apps only"#),
        ("another Graph type",
         targeted(##"{"@odata.type": "#microsoft.graph.iosManagedAppProtection", "displayName": "A", "## + targeting + "}"),
         #"t.json:2:39: error: $.appConfigurations[0].@odata.type: this is a #microsoft.graph.iosManagedAppProtection, not an app configuration; expected #microsoft.graph.targetedManagedAppConfiguration"#),
        ("an app group MAMLab cannot list",
         targeted(#"{"displayName": "A", "appGroupType": "allMicrosoftApps", "# + targeting + "}"),
         #"t.json:2:60: error: $.appConfigurations[0].appGroupType: unknown value "allMicrosoftApps"; allowed values: selectedPublicApps, allApps"#),
        ("one id twice",
         targeted(#"{"id": "x", "displayName": "A", "# + targeting + #"}, {"id": "X", "displayName": "B", "# + targeting + "}"),
         #"t.json:2:137: error: $.appConfigurations[1]: app configuration id "X" is already used at $.appConfigurations[0]"#),
        ("a section that is not a list",
         head + "\n" + #""appConfigurations": "none"}"#,
         #"t.json:2:22: error: $.appConfigurations: expected an array of app configurations or a Graph list response {"value": [...]}, found string "none""#),
        ("assignments on the default",
         withDefault(#"{"customSettings": [], "assignments": []}"#),
         #"t.json:2:66: error: $.appConfigurationDefault.assignments: the tenant default reaches every user; it takes no "assignments""#),
        ("a default that is not an object",
         withDefault("[]"),
         "t.json:2:28: error: $.appConfigurationDefault: expected an object, found array"),
    ]

    @Test("bad input is one exact error", arguments: badInput.indices)
    func badInputIsOneExactError(_ i: Int) {
        let (what, json, line) = Self.badInput[i]
        #expect(errors(json) == [line], "\(what)")
    }

    @Test func configurationsThatReachNobodyAreWarnings() throws {
        let loaded = try load(Self.targeted(#"{"displayName": "Lonely", "customSettings": []}"#))
        #expect(loaded.warnings.map(\.description) == [
            #"t.json:2:23: warning: $.appConfigurations[0]: app configuration "Lonely" names no apps; it reaches no app"#,
            #"t.json:2:23: warning: $.appConfigurations[0]: app configuration "Lonely" has no assignments; it reaches no user"#,
        ])
    }

    @Test func twoTargetedValuesForOneUserAreAConflictWarning() throws {
        let a = #"{"displayName": "A", "customSettings": [{"name": "sync", "value": "15"}, {"name": "same", "value": "x"}], "# + Self.targeting + "}"
        let b = ##"{"displayName": "B", "customSettings": [{"name": "sync", "value": "5"}, {"name": "same", "value": "x"}], "apps": ["com.contoso.mail"], "assignments": [{"target": {"@odata.type": "#microsoft.graph.allLicensedUsersAssignmentTarget"}}]}"##
        let loaded = try load(Self.targeted(a + ", " + b))
        #expect(loaded.warnings.count == 1)
        #expect(loaded.warnings.first?.description.hasSuffix(
            #"$.appConfigurations[1].customSettings[0]: app configurations "A" and "B" give setting "sync" different values ("15", "5") for user adele@contoso.com in app com.contoso.mail; the app sees a conflict"#) == true,
            "\(loaded.warnings)")
        // The default disagreeing with a targeted value is no conflict: targeted values win.
        let quiet = try load(Self.head + "\n" + #""appConfigurations": ["# + a + #"], "appConfigurationDefault": {"customSettings": [{"name": "sync", "value": "30"}]}}"#)
        #expect(quiet.warnings.isEmpty)
    }

    @Test func theSampleTenantHasATargetedSectionAndADefault() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let data = try Data(contentsOf: root.appendingPathComponent("Policies/contoso/tenant.json"))
        let loaded = try TenantFile.load(data, file: "tenant.json") { ref in
            (ref, try Data(contentsOf: root.appendingPathComponent("Policies/contoso").appendingPathComponent(ref)))
        }
        #expect(loaded.warnings.isEmpty, "\(loaded.warnings)")
        #expect(loaded.tenant.appConfigurations.count == 4)  // Mail for Sales, Edge, Docs for Finance, Chat for Finance
        #expect(loaded.tenant.appConfigurationDefault?.isTenantDefault == true)
    }
}

extension AppConfigurationLoadTests {
    @Test func manyConflictingConfigurationsLoadWithTheirWarningsSummed() throws {
        // 200 configurations for one user and app, 40 settings each, every value different.
        let items = (0..<200).map { c in
            let settings = (0..<40).map { #"{"name": "k\#($0)", "value": "\#(c)"}"# }.joined(separator: ", ")
            return #"{"id": "c\#(c)", "customSettings": [\#(settings)], "# + Self.targeting + "}"
        }
        let warnings = try load(Self.targeted(items.joined(separator: ", "))).warnings.map(\.description)
        #expect(warnings.count == GraphAppConfiguration.conflictWarningLimit + 1)
        #expect(warnings.first?.contains(#"app configurations "c0" and "c1" give setting "k0" different values ("0", "1")"#) == true)
        #expect(warnings.last?.hasSuffix("$.appConfigurations[199]: \(199 * 40 - 50) more conflicting settings are not listed") == true, "\(warnings.last ?? "")")
    }

    @Test func aThirdValueIsComparedWithTheFirst() throws {
        func item(_ name: String, _ value: String) -> String {
            #"{"displayName": "\#(name)", "customSettings": [{"name": "k", "value": "\#(value)"}], "# + Self.targeting + "}"
        }
        let loaded = try load(Self.targeted([item("A", "1"), item("B", "1"), item("C", "2")].joined(separator: ", ")))
        #expect(loaded.warnings.map(\.message) == [
            #"app configurations "A" and "C" give setting "k" different values ("1", "2") for user adele@contoso.com in app com.contoso.mail; the app sees a conflict"#,
        ])
    }
}
