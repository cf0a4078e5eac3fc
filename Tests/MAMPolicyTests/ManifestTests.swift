import Foundation
import MAMCatalog
import MAMPolicy
import Testing

@Suite("App manifests")
struct ManifestTests {
    @Test func sampleAppsLoadWithTheirSchemesTypesAndSDKSettings() throws {
        let found = Catalog.loadApps(in: SamplePaths.apps)
        #expect(found.diagnostics.isEmpty)
        let mail = try #require(Catalog.find("mail", in: found.apps)).manifest
        #expect(mail.bundleID == "com.contoso.mail" && mail.integratesSDK && mail.isMultiIdentity)
        #expect(mail.urlSchemes == ["contosomail", "contosomail-intunemam"])
        #expect(mail.queries(scheme: "https-intunemam") && mail.queries(scheme: "ms-outlook-intunemam"))
        #expect(mail.contentTypeSet.contains("com.microsoft.intune.mam.com.adobe.pdf"))
        let notes = try #require(Catalog.find("com.example.notes", in: found.apps)).manifest
        #expect(!notes.integratesSDK && !notes.isMultiIdentity)
    }

    @Test func xmlAndBinaryPlistsReadAlike() throws {
        let dict: [String: Any] = [
            "CFBundleIdentifier": "com.ext.share",
            "CFBundleDocumentTypes": [["CFBundleTypeName": "PDF", "LSItemContentTypes": ["com.adobe.pdf"]]],
            "NSExtension": ["NSExtensionPointIdentifier": "com.apple.share-services",
                            "NSExtensionAttributes": ["NSExtensionActivationRule": "SUBQUERY(extensionItems, $e, TRUEPREDICATE).@count > 0"]],
            "IntuneMAMSettings": ["ContainingAppBundleId": "com.ext", "SplashDuration": 1.5, "BackgroundColor": "FFFFFF"],
        ]
        for format in [PropertyListSerialization.PropertyListFormat.xml, .binary] {
            let data = try PropertyListSerialization.data(fromPropertyList: dict, format: format, options: 0)
            let m = try AppManifest.load(data, file: "Info.plist").manifest
            #expect(m.extensionPoint == "com.apple.share-services")
            #expect(m.activationRule == .predicate("SUBQUERY(extensionItems, $e, TRUEPREDICATE).@count > 0"))
            #expect(m.documentTypes == [.init(name: "PDF", contentTypes: ["com.adobe.pdf"])])
            #expect(m.integratesSDK)
        }
    }

    @Test func dictionaryActivationRulesAreKept() throws {
        let dict: [String: Any] = ["CFBundleIdentifier": "x", "NSExtension": ["NSExtensionAttributes": [
            "NSExtensionActivationRule": ["NSExtensionActivationSupportsFileWithMaxCount": 1]]]]
        let data = try PropertyListSerialization.data(fromPropertyList: dict, format: .xml, options: 0)
        let m = try AppManifest.load(data, file: "Info.plist").manifest
        guard case let .dictionary(node)? = m.activationRule else { Issue.record("no dictionary rule"); return }
        #expect(node["NSExtensionActivationSupportsFileWithMaxCount"]?.value == .integer(1))
    }

    @Test func sampleTenantLoadsAndTargetsTheSampleApps() throws {
        let loaded = try Catalog.loadTenant(SamplePaths.policies.appendingPathComponent("tenant.json").path)
        #expect(loaded.warnings.isEmpty)
        let t = loaded.tenant
        #expect(t.users.map(\.upn) == ["adele@contoso.com", "ben@contoso.com"])
        #expect(t.policies.count == 9)
        let adele = try #require(t.knownAccount(named: "ADELE@contoso.com"))
        #expect(t.policy(app: "com.contoso.mail", account: adele)?.displayName == "Managed only")
        #expect(t.policy(app: "com.contoso.mail", account: t.knownAccount(named: "ben@contoso.com")!)?.settings.send == SendLevel.none)
        let manifests = Catalog.loadApps(in: SamplePaths.apps).apps.map(\.manifest)
        #expect(Catalog.unknownApps(t, known: manifests).isEmpty)
    }
}
