import Foundation
import MAMCatalog
import MAMPolicy
import Testing

/// Each kind of bad input gets one clear line naming the file, where, and what is allowed.
@Suite("Bad input")
struct BadInputTests {
    func tenantErrors(_ json: String, files: [String: String] = [:]) -> [String] {
        do {
            _ = try TenantFile.load(Data(json.utf8), file: "t.json") { ref in
                guard let text = files[ref] else { throw LoadFailure([Diagnostic(.error, file: ref, path: "", message: "no such file")]) }
                return (ref, Data(text.utf8))
            }
            return []
        } catch {
            return error.diagnostics.filter { $0.severity == .error }.map(\.description)
        }
    }

    func policyErrors(_ json: String) -> [String] {
        do {
            _ = try PolicyFile.load(Data(json.utf8), file: "p.json")
            return []
        } catch {
            return error.diagnostics.map(\.description)
        }
    }

    static let users = #""users": [{"upn": "adele@contoso.com", "oid": "o-1", "groups": ["sales"]}, {"upn": "ben@contoso.com", "groups": ["finance"]}]"#

    @Test func jsonSyntaxErrorsNameLineAndColumn() {
        let errors = tenantErrors("{\n  \"tenant\": \"c\",\n  \"users\": [,]\n}")
        #expect(errors == ["t.json:3:13: error: unexpected character ','; expected a value"])
        #expect(tenantErrors("{\"a\": 1, \"a\": 2}") == ["t.json:1:10: error: duplicate key \"a\""])
        #expect(tenantErrors("{\"a\": \"unterminated}") == ["t.json:1:21: error: unterminated string"])
        #expect(tenantErrors("{\"a\": 01}").first?.contains("leading zeros") == true)
    }

    /// Credentials are PBKDF2 with their parameters; the old one-SHA-256 form is refused by name,
    /// and each bad one names its user's key path.
    @Test func aCredentialInTheOldFormatOrWithTooFewRoundsIsRefusedAtItsKeyPath() {
        let salt = String(repeating: "ab", count: 16), key = String(repeating: "cd", count: 32)
        func errors(_ credential: String) -> [String] {
            tenantErrors(#"{"users": [{"upn": "adele@contoso.com", "credential": ""# + credential + #""}]}"#)
        }
        #expect(errors("pbkdf2-sha256:600000:\(salt):\(key)") == [])
        let old = errors("sha256:\(salt):\(key)")
        #expect(old.count == 1 && old[0].contains("$.users[0].credential") && old[0].contains("old credential format")
                && old[0].contains("mamlaunch credential"), "\(old)")
        #expect(errors("pbkdf2-sha256:1000:\(salt):\(key)").first?.contains("rounds (1000) must be a number from 100000") == true)
        #expect(errors("pbkdf2-sha256:600000:abcd:\(key)").first?.contains("salt must be at least 16 bytes") == true)
        #expect(errors("pbkdf2-sha256:600000:\(salt):\(key)00").first?.contains("derived key must be 64 hex digits") == true)
        #expect(errors("scrypt:1:2:3").first?.contains("a credential is \"pbkdf2-sha256:<rounds>") == true)
    }

    @Test func wrongTypeNamesThePathAndTheExpectedType() {
        #expect(policyErrors(#"{"saveAsBlocked": "yes"}"#) == [#"p.json:1:19: error: $.saveAsBlocked: expected a boolean, found string "yes""#])
        #expect(policyErrors(#"{"allowedOutboundClipboardSharingExceptionLength": -1}"#).first?.contains("out of range") == true)
        #expect(policyErrors("[1]") == ["p.json:1:2: error: $[0]: expected an object, found integer 1"])
    }

    @Test func unknownEnumValueListsTheAllowedOnes() {
        let e = policyErrors("{\n \"allowedOutboundDataTransferDestinations\": \"managedAppsOnly\"\n}")
        #expect(e == [#"p.json:2:45: error: $.allowedOutboundDataTransferDestinations: unknown value "managedAppsOnly"; allowed values: allApps, managedApps, none"#])
        let loc = policyErrors(#"{"allowedDataStorageLocations": ["oneDrive"]}"#)
        #expect(loc.first?.contains("$.allowedDataStorageLocations[0]: unknown value \"oneDrive\"; allowed values: oneDriveForBusiness, sharePoint, box, localStorage, photoLibrary") == true)
    }

    @Test func impossibleCouplingsAreErrors() {
        let f = policyErrors(#"{"allowedOutboundDataTransferDestinations": "allApps", "filterOpenInToOnlyManagedApps": true}"#)
        #expect(f.first?.contains("$.filterOpenInToOnlyManagedApps: Open-In/Share filtering is valid only with allowedOutboundDataTransferDestinations = managedApps (it is allApps)") == true)
        let os = policyErrors(#"{"allowedOutboundDataTransferDestinations": "none", "disableProtectionOfManagedOutboundOpenInData": true}"#)
        #expect(os.first?.contains("$.disableProtectionOfManagedOutboundOpenInData: OS sharing") == true)
        let inbound = policyErrors(#"{"allowedInboundDataTransferSources": "managedApps", "protectInboundDataFromUnknownSources": true}"#)
        #expect(inbound.first?.contains("$.protectInboundDataFromUnknownSources: valid only with allowedInboundDataTransferSources = allApps") == true)
        let dialer = policyErrors(#"{"dialerRestrictionLevel": "customApp"}"#)
        #expect(dialer.first?.contains("needs a customDialerAppProtocol") == true)
    }

    @Test func notAnIOSPolicy() {
        let e = policyErrors(##"{"@odata.type": "#microsoft.graph.androidManagedAppProtection"}"##)
        #expect(e.first?.contains("not an iOS app-protection policy") == true)
    }

    @Test func unknownGroupUserAndConflicts() {
        let group = tenantErrors(#"{"#+Self.users+##", "policies": [{"apps": ["com.a"], "assignments": [{"target": {"groupId": "marketing"}}]}]}"##)
        #expect(group.first?.contains("$.policies[0].assignments[0].target.groupId: unknown group \"marketing\"; the tenant's groups are: finance, sales") == true)

        let user = tenantErrors(#"{"#+Self.users+#", "device": {"mdmEnrolled": true, "mdmUser": "carol@contoso.com"}}"#)
        #expect(user.first?.contains("$.device.mdmUser: unknown user \"carol@contoso.com\"") == true)

        let allowed = tenantErrors(#"{"#+Self.users+#", "device": {"allowedAccounts": ["adele@contoso.com", "carol@contoso.com"]}}"#)
        #expect(allowed.first?.contains("$.device.allowedAccounts[1]: unknown user \"carol@contoso.com\"") == true, "\(allowed)")
        let notAList = tenantErrors(#"{"#+Self.users+#", "device": {"allowedAccounts": "adele@contoso.com"}}"#)
        #expect(notAList.first?.contains("$.device.allowedAccounts") == true && notAList.first?.contains("array") == true, "\(notAList)")

        let two = tenantErrors(#"{"#+Self.users+#", "policies": [{"displayName": "One", "apps": ["com.a"], "assignments": [{"target": {"groupId": "sales"}}]}, {"displayName": "Two", "apps": ["COM.A"], "assignments": [{"target": {"groupId": "sales"}}]}]}"#)
        #expect(two.count == 1)
        #expect(two.first?.contains("policies \"One\"") == true && two.first?.contains("\"Two\"") == true)
        #expect(two.first?.contains("both target user adele@contoso.com for app com.a") == true)

        let dup = tenantErrors(#"{"users": [{"upn": "a@c.com"}, {"upn": "A@C.com"}]}"#)
        #expect(dup.first?.contains("repeats the UPN or OID") == true)
    }

    @Test func referencedFilesReportTheirOwnErrors() {
        let missing = tenantErrors(#"{"#+Self.users+#", "policies": [{"$ref": "nope.json"}]}"#)
        #expect(missing.first?.contains("$.policies[0].$ref: cannot read policy file \"nope.json\"") == true)
        let bad = tenantErrors(#"{"#+Self.users+#", "policies": [{"$ref": "p.json"}]}"#, files: ["p.json": #"{"saveAsBlocked": 1}"#])
        #expect(bad == ["p.json:1:19: error: $.saveAsBlocked: expected a boolean, found integer 1"])
    }

    @Test func unknownAppsAreReportedAgainstTheKnownManifests() throws {
        let loaded = try TenantFile.load(Data((#"{"#+Self.users+#", "policies": [{"displayName": "P", "apps": ["com.contoso.mail", "com.contoso.typo"], "assignments": [{"target": {"groupId": "sales"}}]}]}"#).utf8), file: "t.json") { _ in throw LoadFailure([]) }
        let problems = Catalog.unknownApps(loaded.tenant, known: Lab.apps)
        #expect(problems.count == 1)
        #expect(problems.first?.description.hasPrefix("t.json:1:") == true)
        #expect(problems.first?.description.contains("$.policies[0].apps[1]: policy \"P\" targets unknown app com.contoso.typo") == true)
    }

    @Test func debugPlistLevelsAndMasks() throws {
        func errors(_ dict: [String: Any]) throws -> [String] {
            let data = try PropertyListSerialization.data(fromPropertyList: dict, format: .xml, options: 0)
            do { _ = try PolicyFile.load(data, file: "d.plist"); return [] } catch { return error.diagnostics.map(\.description) }
        }
        #expect(try errors(["AppSharingToLevel": 7]) == ["d.plist: error: AppSharingToLevel: unknown level 7; allowed values: 0 (none), 1 (managedApps), 2 (allApps)"])
        #expect(try errors(["AppSharingToLevel": 1, "FileSharingSaveAsDisabled": true, "ManagedLocations": 64]).first?.contains("bitmask 64 has unknown bits 64; allowed bits: 1 (oneDriveForBusiness), 2 (sharePoint), 4 (box), 32 (localDrive), 128 (cameraRoll)") == true)
        #expect(try errors(["PrintingBlocked": 2]).first?.contains("PrintingBlocked: value 2 is not a flag") == true)
        #expect(try errors(["ClipboardSharingLevel": "1"]).first?.contains("ClipboardSharingLevel: expected an integer, found string \"1\"") == true)
        let warned = try PolicyFile.load(try PropertyListSerialization.data(fromPropertyList: ["Nonsense": 1], format: .xml, options: 0), file: "d.plist")
        #expect(warned.first?.warnings.first?.description == "d.plist: warning: Nonsense: unknown debug setting \"Nonsense\"; it is ignored")
        do {
            _ = try PolicyFile.load(Data("<plist><dict><key>a</key></dict>".utf8), file: "broken.plist")
            Issue.record("a broken plist loaded")
        } catch {
            #expect(error.diagnostics.first?.description.hasPrefix("broken.plist: error: not a valid property list") == true)
        }
    }

    @Test func manifestProblemsNameTheKeyPath() throws {
        func load(_ dict: [String: Any]) throws -> (errors: [String], warnings: [String]) {
            let data = try PropertyListSerialization.data(fromPropertyList: dict, format: .binary, options: 0)
            do {
                let r = try AppManifest.load(data, file: "Info.plist")
                return ([], r.warnings.map(\.description))
            } catch {
                return (error.diagnostics.filter { $0.severity == .error }.map(\.description), [])
            }
        }
        let base: [String: Any] = ["CFBundleIdentifier": "com.x"]
        var d = base
        d["IntuneMAMSettings"] = ["MultiIdentity": "YES"]
        #expect(try load(d).errors == [#"Info.plist: error: IntuneMAMSettings.MultiIdentity: expected a boolean, found string "YES""#])
        d["IntuneMAMSettings"] = ["AccentColor": "#12345G"]
        #expect(try load(d).errors.first?.contains("IntuneMAMSettings.AccentColor: \"#12345G\" is not a colour") == true)
        d["IntuneMAMSettings"] = ["MaxFileProtectionLevel": "Complete"]
        #expect(try load(d).errors.first?.contains("allowed values: NSFileProtectionComplete,") == true)
        d["IntuneMAMSettings"] = ["MultiIdentity": true, "Frobnicate": 1]
        // (The manifest also lacks the queries list the guides ask for: ManifestRequirementTests.)
        #expect(try load(d).warnings.contains(#"Info.plist: warning: IntuneMAMSettings.Frobnicate: unknown IntuneMAMSettings key "Frobnicate"; the SDK ignores it"#))
        d = base
        d["NSExtension"] = ["NSExtensionPointIdentifier": "com.apple.share-services"]
        d["IntuneMAMSettings"] = [String: Any]()
        #expect(try load(d).errors.first?.contains("ContainingAppBundleId") == true)
        d = base
        d["CFBundleURLTypes"] = [["CFBundleURLSchemes": "notarray"]]
        #expect(try load(d).errors == [#"Info.plist: error: CFBundleURLTypes[0].CFBundleURLSchemes: expected an array, found string "notarray""#])
        #expect(try load(["CFBundleName": "x"]).errors == ["Info.plist: error: missing CFBundleIdentifier"])
    }
}
