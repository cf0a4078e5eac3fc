import Foundation
import MAMPolicy
import Testing

/// What the developer guides ask of an SDK app's Info.plist, one row per statement: the row
/// leaves the step out and expects a warning that names the key path and quotes the seed.
@Suite("Manifest requirements of the seeds")
struct ManifestRequirementTests {
    /// The schemes seed 001 (2023) asks every SDK app to query.
    static let required = ["http-intunemam", "https-intunemam", "microsoft-edge-http-intunemam", "microsoft-edge-https-intunemam",
                           "smart-ns", "zips", "lacoonsecurity", "wandera", "lookoutwork-ase", "skycure", "betteractiveshield", "smsec",
                           "mvisionmobile", "scmx"]

    /// An SDK app that does every step.
    static var complete: [String: Any] {
        [
            "CFBundleIdentifier": "com.example.good",
            "CFBundleURLTypes": [["CFBundleURLSchemes": ["good", "good-intunemam"]]],
            "LSApplicationQueriesSchemes": ["mailto", "mailto-intunemam", "ms-outlook-intunemam"] + required,
            "CFBundleDocumentTypes": [["LSItemContentTypes": ["com.adobe.pdf", "com.microsoft.intune.mam.com.adobe.pdf"]]],
            "NSFaceIDUsageDescription": "Face ID can unlock this app.",
            "IntuneMAMSettings": ["MAMPolicyRequired": true, "AutoEnrollOnLaunch": true, "MainNibFile": "MainWindow",
                                  "ADALClientId": "5e1d1a8c-0000-4000-8000-00000000c0de", "ADALRedirectScheme": "msauth"],
        ]
    }

    /// An Open-in action extension as seed 000 §'Copy To' actions writes it.
    static var openInExtension: [String: Any] {
        [
            "CFBundleIdentifier": "com.example.good.openin",
            "CFBundleDisplayName": "Open in Good",
            "NSExtension": [
                "NSExtensionPointIdentifier": "com.apple.ui-services",
                "NSExtensionAttributes": ["NSExtensionActivationRule":
                    #"SUBQUERY(extensionItems, $e, SUBQUERY($e.attachments, $a, ANY $a.registeredTypeIdentifiers UTI-CONFORMS-TO "com.microsoft.intune.mam.com.adobe.pdf").@count == 1).@count == 1"#],
            ],
            "IntuneMAMSettings": ["ContainingAppBundleId": "com.example.good", "OpenInActionExtension": true],
        ]
    }

    static var shareExtension: [String: Any] {
        [
            "CFBundleIdentifier": "com.example.good.share",
            "NSExtension": [
                "NSExtensionPointIdentifier": "com.apple.share-services",
                "NSExtensionAttributes": ["NSExtensionActivationRule":
                    #"SUBQUERY(extensionItems, $e, SUBQUERY($e.attachments, $a, ANY $a.registeredTypeIdentifiers UTI-CONFORMS-TO "public.image" || ANY $a.registeredTypeIdentifiers UTI-CONFORMS-TO "com.microsoft.intune.mam.public.image").@count == 1).@count == 1"#],
            ],
            "IntuneMAMSettings": ["ContainingAppBundleId": "com.example.good"],
        ]
    }

    static func warnings(_ plist: [String: Any]) throws -> [Diagnostic] {
        let data = try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)
        return try AppManifest.load(data, file: "Info.plist").warnings
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var statement: String
        var seed: String
        var base: @Sendable () -> [String: Any]
        var change: @Sendable (inout [String: Any]) -> Void
        var path: String
        var testDescription: String { "\(seed): \(statement)" }
    }

    static let rows: [Row] = [
        Row(statement: "a URL scheme without its -intunemam twin", seed: "seed 004 §Build the SDK into your mobile app, step 8",
            base: { complete }, change: { $0["CFBundleURLTypes"] = [["CFBundleURLSchemes": ["good"]]] },
            path: "CFBundleURLTypes[0].CFBundleURLSchemes[0]"),
        Row(statement: "a queried scheme without its -intunemam copy", seed: "seed 001 §Build the SDK into your mobile app, step 5",
            base: { complete }, change: { $0["LSApplicationQueriesSchemes"] = ["mailto", "ms-outlook-intunemam"] + required },
            path: "LSApplicationQueriesSchemes[0]"),
        Row(statement: "a queries list without the managed browser's twins and the threat-defence schemes",
            seed: "seed 001 (2023 edition) §Build the SDK into your mobile app, step 5",
            base: { complete }, change: { $0["LSApplicationQueriesSchemes"] = ["mailto", "mailto-intunemam", "ms-outlook-intunemam"] },
            path: "LSApplicationQueriesSchemes"),
        Row(statement: "a queries list without scmx, the threat-defence scheme", seed: "seed 001 (2023 edition) §Build the SDK into your mobile app, step 5",
            base: { complete }, change: { $0["LSApplicationQueriesSchemes"] = ["mailto", "mailto-intunemam", "ms-outlook-intunemam"] + required.dropLast() },
            path: "LSApplicationQueriesSchemes"),
        Row(statement: "an app that queries mailto without ms-outlook-intunemam", seed: "seed 001 (2023 edition) §Build the SDK into your mobile app, step 5",
            base: { complete }, change: { $0["LSApplicationQueriesSchemes"] = ["mailto", "mailto-intunemam"] + required },
            path: "LSApplicationQueriesSchemes"),
        Row(statement: "no ADALClientId", seed: "seed 001 (2023 edition) §Configure settings for the Intune App SDK",
            base: { complete }, change: { $0["IntuneMAMSettings"] = ["MAMPolicyRequired": true, "AutoEnrollOnLaunch": true, "ADALRedirectUri": "msauth.com.example.good://auth"] },
            path: "IntuneMAMSettings"),
        Row(statement: "neither ADALRedirectUri nor ADALRedirectScheme", seed: "seed 001 (2023 edition) §Configure settings for the Intune App SDK",
            base: { complete }, change: { $0["IntuneMAMSettings"] = ["MAMPolicyRequired": true, "AutoEnrollOnLaunch": true, "ADALClientId": "x"] },
            path: "IntuneMAMSettings"),
        Row(statement: "no queries list at all", seed: "seed 001 (2023 edition) §Build the SDK into your mobile app, step 5",
            base: { complete }, change: { $0["LSApplicationQueriesSchemes"] = nil }, path: ""),
        Row(statement: "a document type without its com.microsoft.intune.mam. twin", seed: "seed 004 §Build the SDK into your mobile app, step 9",
            base: { complete }, change: { $0["CFBundleDocumentTypes"] = [["LSItemContentTypes": ["com.adobe.pdf"]]] },
            path: "CFBundleDocumentTypes[0].LSItemContentTypes[0]"),
        Row(statement: "a share extension rule without the twin types", seed: "seed 000 §Update existing Share and Action extensions",
            base: { shareExtension },
            change: {
                $0["NSExtension"] = ["NSExtensionPointIdentifier": "com.apple.share-services",
                                     "NSExtensionAttributes": ["NSExtensionActivationRule": #"ANY $a.registeredTypeIdentifiers UTI-CONFORMS-TO "public.image""#]]
            },
            path: "NSExtension.NSExtensionAttributes.NSExtensionActivationRule"),
        Row(statement: "an action extension rule in the dictionary form", seed: "seed 000 §Update existing Share and Action extensions",
            base: { shareExtension },
            change: {
                $0["NSExtension"] = ["NSExtensionPointIdentifier": "com.apple.ui-services",
                                     "NSExtensionAttributes": ["NSExtensionActivationRule": ["NSExtensionActivationSupportsImageWithMaxCount": 1]]]
            },
            path: "NSExtension.NSExtensionAttributes.NSExtensionActivationRule"),
        Row(statement: "no NSFaceIDUsageDescription", seed: "seed 000 and seed 001 §Build the SDK into your mobile app, step 6",
            base: { complete }, change: { $0["NSFaceIDUsageDescription"] = nil }, path: ""),
        Row(statement: "an empty NSFaceIDUsageDescription", seed: "seed 000 and seed 001 §Build the SDK into your mobile app, step 6",
            base: { complete }, change: { $0["NSFaceIDUsageDescription"] = " " }, path: "NSFaceIDUsageDescription"),
        Row(statement: "an Open-in extension rule taking one or more attachments", seed: "seed 000 §'Copy To' actions, step 7",
            base: { openInExtension },
            change: {
                $0["NSExtension"] = ["NSExtensionPointIdentifier": "com.apple.ui-services", "NSExtensionAttributes": ["NSExtensionActivationRule":
                    #"SUBQUERY(extensionItems, $e, SUBQUERY($e.attachments, $a, ANY $a.registeredTypeIdentifiers UTI-CONFORMS-TO "com.microsoft.intune.mam.com.adobe.pdf").@count >= 1).@count == 1"#]]
            },
            path: "NSExtension.NSExtensionAttributes.NSExtensionActivationRule"),
        Row(statement: "an Open-in extension rule that counts nothing", seed: "seed 000 §'Copy To' actions, step 7",
            base: { openInExtension },
            change: {
                $0["NSExtension"] = ["NSExtensionPointIdentifier": "com.apple.ui-services", "NSExtensionAttributes": ["NSExtensionActivationRule":
                    #"SUBQUERY(extensionItems, $e, ANY $e.attachments.registeredTypeIdentifiers UTI-CONFORMS-TO "com.microsoft.intune.mam.com.adobe.pdf").@count > 0"#]]
            },
            path: "NSExtension.NSExtensionAttributes.NSExtensionActivationRule"),
        Row(statement: "an Open-in extension, checked alone, not named \"Open in\" and its app's name", seed: "seed 000 §'Copy To' actions, step 4",
            base: { openInExtension }, change: { $0["CFBundleDisplayName"] = "Send to Good" }, path: "CFBundleDisplayName"),
        Row(statement: "MAMPolicyRequired without AutoEnrollOnLaunch", seed: "seed 001 §Configure settings for the Intune App SDK",
            base: { complete }, change: { $0["IntuneMAMSettings"] = ["MAMPolicyRequired": true, "ADALClientId": "x", "ADALRedirectScheme": "msauth"] },
            path: "IntuneMAMSettings.MAMPolicyRequired"),
    ]

    @Test func aManifestThatDoesEveryStepHasNoWarning() throws {
        let app = try Self.warnings(Self.complete), ext = try Self.warnings(Self.shareExtension)
        #expect(app.isEmpty, "\(app)")
        #expect(ext.isEmpty, "\(ext)")
        let openIn = try Self.warnings(Self.openInExtension)
        #expect(openIn.isEmpty, "\(openIn)")
    }

    @Test(arguments: rows)
    func aMissingStepIsAWarningQuotingItsSeed(_ row: Row) throws {
        var plist = row.base()
        row.change(&plist)
        let found = try Self.warnings(plist)
        #expect(found.count == 1, "\(found)")
        let w = try #require(found.first)
        #expect(w.severity == .warning)
        #expect(w.path == row.path, "\(w)")
        #expect(w.message.contains(row.seed), "\(w.message)")
    }

    @Test func anAppWithoutTheSDKOwesNothing() throws {
        var plist = Self.complete
        plist["IntuneMAMSettings"] = nil
        plist["CFBundleURLTypes"] = [["CFBundleURLSchemes": ["plain"]]]
        #expect(try Self.warnings(plist).isEmpty)
    }

    // seed 004 §Configure settings for the Intune App SDK lists the main nib and storyboard keys.
    @Test(arguments: ["MainNibFile", "MainNibFile~ipad", "MainStoryboardFile", "MainStoryboardFile~ipad"])
    func mainNibAndStoryboardKeysAreKnown(key: String) throws {
        var plist = Self.complete
        plist["IntuneMAMSettings"] = ["MAMPolicyRequired": false, key: "Main", "ADALClientId": "x", "ADALRedirectScheme": "msauth"]
        #expect(try Self.warnings(plist).isEmpty)
        plist["IntuneMAMSettings"] = [key: 3]
        #expect(throws: LoadFailure.self) { try Self.warnings(plist) }
    }

    // seed 000 §'Copy To' actions, step 2: the app and its Open-in action extension share an App Group.
    @Test func anOpenInExtensionMustShareAnAppGroupWithItsApp() throws {
        func manifest(_ id: String, _ settings: [String: Any]) throws -> AppManifest {
            let data = try PropertyListSerialization.data(fromPropertyList: ["CFBundleIdentifier": id, "IntuneMAMSettings": settings],
                                                          format: .xml, options: 0)
            return try AppManifest.load(data, file: id).manifest
        }
        let app = try manifest("com.example.good", ["AppGroupIdentifiers": ["group.a", "group.b"]])
        let sharing = try manifest("com.example.good.openin", ["OpenInActionExtension": true, "ContainingAppBundleId": "com.example.good",
                                                              "AppGroupIdentifiers": ["group.b"]])
        let apart = try manifest("com.example.good.openin", ["OpenInActionExtension": true, "ContainingAppBundleId": "com.example.good",
                                                            "AppGroupIdentifiers": ["group.c"]])
        #expect(ManifestRequirements.checkAppGroups([(app, "app"), (sharing, "ext")]).isEmpty)
        let found = ManifestRequirements.checkAppGroups([(app, "app"), (apart, "ext")])
        #expect(found.count == 1 && found[0].file == "ext" && found[0].path == "IntuneMAMSettings.AppGroupIdentifiers")
        #expect(found.first?.message.contains("seed 000 §'Copy To' actions, step 2") == true)
    }

    // seed 000 §'Copy To' actions, step 4: "Open in" and the app's name.
    @Test func anOpenInExtensionIsNamedOpenInAndTheAppsName() throws {
        func manifest(_ plist: [String: Any]) throws -> AppManifest {
            try AppManifest.load(try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0), file: "x").manifest
        }
        var app = Self.complete
        app["CFBundleDisplayName"] = "Good"
        var other = Self.openInExtension
        other["CFBundleDisplayName"] = "Share to Good"
        #expect(ManifestRequirements.checkOpenInNames([(try manifest(app), "app"), (try manifest(Self.openInExtension), "ext")]).isEmpty)
        let found = ManifestRequirements.checkOpenInNames([(try manifest(app), "app"), (try manifest(other), "ext")])
        #expect(found.count == 1 && found[0].file == "ext" && found[0].message.contains("not \"Open in Good\""), "\(found)")
        #expect(found.first?.message.contains("seed 000 §'Copy To' actions, step 4") == true)
    }

    // seed 000 §'Copy To' actions, step 7: the rule takes every document type's twin.
    @Test func anOpenInExtensionAcceptsTheTwinOfEveryDocumentTypeOfItsApp() throws {
        func manifest(_ plist: [String: Any]) throws -> AppManifest {
            try AppManifest.load(try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0), file: "x").manifest
        }
        var app = Self.complete
        #expect(ManifestRequirements.checkOpenInTypes([(try manifest(app), "app"), (try manifest(Self.openInExtension), "ext")]).isEmpty)
        app["CFBundleDocumentTypes"] = [["LSItemContentTypes": ["com.adobe.pdf", "com.microsoft.intune.mam.com.adobe.pdf", "public.text", "com.microsoft.intune.mam.public.text"]]]
        let found = ManifestRequirements.checkOpenInTypes([(try manifest(app), "app"), (try manifest(Self.openInExtension), "ext")])
        #expect(found.count == 1 && found[0].message.contains("does not accept com.microsoft.intune.mam.public.text of com.example.good"), "\(found)")
        #expect(found.first?.message.contains("seed 000 §'Copy To' actions, step 7") == true)
    }
}
