import Foundation
import MAMPolicy
import Testing

@Suite("Policy formats: Graph JSON and the debug plist")
struct FormatTests {
    func graph(_ json: String) throws -> Policy {
        try #require(PolicyFile.load(Data(json.utf8), file: "p.json").first).policy
    }

    func debug(_ dict: [String: Any]) throws -> PolicySettings {
        let data = try PropertyListSerialization.data(fromPropertyList: dict, format: .xml, options: 0)
        return try #require(PolicyFile.load(data, file: "d.plist").first).policy.settings
    }

    @Test func missingPropertiesTakeTheServiceDefaults() throws {
        let p = try graph(##"{"@odata.type": "#microsoft.graph.iosManagedAppProtection", "displayName": "Empty"}"##)
        let s = p.settings
        #expect(s.send == .allApps && s.receive == .allApps && s.clipboard == .allApps)
        #expect(s.clipboardExceptionLength == 0 && !s.saveAsBlocked && s.allowedSaveLocations.isEmpty)
        #expect(s.allowedIngestionLocations == OpenLocations([.oneDriveForBusiness, .sharePoint, .camera, .photos]))
        #expect(s.exemptedSchemes == ["skype", "app-settings", "calshow", "itms", "itmss", "itms-apps", "itms-appss", "itms-services"])
        #expect(s.dialer == .allApps && s.notificationRestriction == .allow)
    }

    @Test func graphPropertiesLoadValueByValue() throws {
        let p = try graph("""
        {"id": "abc", "displayName": "Sales", "allowedOutboundDataTransferDestinations": "managedApps",
         "filterOpenInToOnlyManagedApps": true, "allowedInboundDataTransferSources": "managedApps",
         "allowedOutboundClipboardSharingLevel": "managedAppsWithPasteIn", "allowedOutboundClipboardSharingExceptionLength": 12,
         "saveAsBlocked": true, "allowedDataStorageLocations": ["oneDriveForBusiness", "localStorage", "photoLibrary"],
         "blockDataIngestionIntoOrganizationDocuments": true, "allowedDataIngestionLocations": ["camera"],
         "exemptedAppProtocols": [{"name": "a", "value": "Zoom;Webex;"}, {"name": "b", "value": "zoom"}],
         "managedBrowserToOpenLinksRequired": true, "managedBrowser": "microsoftEdge",
         "dialerRestrictionLevel": "customApp", "customDialerAppProtocol": "mydialer",
         "notificationRestriction": "block", "printBlocked": true, "contactSyncBlocked": true, "dataBackupBlocked": true,
         "someFutureProperty": {"kept": true}}
        """)
        let s = p.settings
        #expect(p.id == "abc" && p.displayName == "Sales")
        #expect(s.send == .managedApps && s.filterOpenInToOnlyManagedApps && s.receive == .managedApps)
        #expect(s.clipboard == .managedAppsWithPasteIn && s.clipboardExceptionLength == 12)
        // Graph localStorage is the SDK's localDrive, photoLibrary its cameraRoll (bit 64).
        #expect(s.saveAsBlocked && s.allowedSaveLocations.rawValue == 1 | 32 | 64)
        #expect(s.blockDataIngestionIntoOrganizationDocuments && s.allowedIngestionLocations.locations == [.camera])
        #expect(s.exemptedSchemes == ["zoom", "webex"])
        #expect(s.managedBrowserRequired && s.managedBrowser == .microsoftEdge)
        #expect(s.dialer == .customApp && s.customDialerAppProtocol == "mydialer")
        #expect(s.notificationRestriction == .block && s.printBlocked && s.contactSyncBlocked && s.dataBackupBlocked)
    }

    @Test func listResponsesAndArraysHoldSeveralPolicies() throws {
        let list = #"{"@odata.context": "x", "value": [{"displayName": "A"}, {"displayName": "B", "allowedOutboundDataTransferDestinations": "none"}]}"#
        let loaded = try PolicyFile.load(Data(list.utf8), file: "list.json")
        #expect(loaded.map(\.policy.displayName) == ["A", "B"])
        #expect(loaded[1].policy.settings.send == .none)
        let array = try PolicyFile.load(Data(#"[{"displayName": "A"}, {"displayName": "B"}]"#.utf8), file: "a.json")
        #expect(array.count == 2)
    }

    @Test func couplingsAreApplied() throws {
        let all = try graph(#"{"allowedOutboundDataTransferDestinations": "allApps", "saveAsBlocked": true}"#)
        #expect(!all.settings.saveAsBlocked)
        let none = try graph(#"{"allowedOutboundDataTransferDestinations": "none", "saveAsBlocked": false, "allowedDataStorageLocations": ["box"]}"#)
        #expect(none.settings.saveAsBlocked && none.settings.allowedSaveLocations.isEmpty)
        let inAll = try graph(#"{"allowedInboundDataTransferSources": "allApps", "blockDataIngestionIntoOrganizationDocuments": true}"#)
        #expect(!inAll.settings.blockDataIngestionIntoOrganizationDocuments)
        let inNone = try graph(#"{"allowedInboundDataTransferSources": "none"}"#)
        #expect(inNone.settings.blockDataIngestionIntoOrganizationDocuments && inNone.settings.allowedIngestionLocations.isEmpty)
    }

    // The debug form numbers levels the other way round from Graph [doc].
    @Test(arguments: [(0, SendLevel.none), (1, .managedApps), (2, .allApps)])
    func appSharingLevels(number: Int, level: SendLevel) throws {
        let s = try debug(["AppSharingToLevel": number, "AppSharingFromLevel": number])
        #expect(s.send == level)
        #expect(s.receive.rawValue == level.rawValue)
        #expect(DebugSettings.write(s)["AppSharingToLevel"]?.value == .integer(number))
        #expect(DebugSettings.write(s)["AppSharingFromLevel"]?.value == .integer(number))
    }

    @Test(arguments: [(0, ClipboardLevel.blocked), (1, .managedApps), (2, .managedAppsWithPasteIn), (3, .allApps)])
    func clipboardLevels(number: Int, level: ClipboardLevel) throws {
        let s = try debug(["ClipboardSharingLevel": number])
        #expect(s.clipboard == level)
        #expect(DebugSettings.write(s)["ClipboardSharingLevel"]?.value == .integer(number))
    }

    @Test(arguments: [(0, DialerLevel.blocked), (1, .customApp), (2, .managedApps), (3, .allApps)])
    func dialerLevels(number: Int, level: DialerLevel) throws {
        let s = try debug(["DialerRestrictionLevel": number, "SpecificDialerProtocol": "d"])
        #expect(s.dialer == level)
        #expect(DebugSettings.write(s)["DialerRestrictionLevel"]?.value == .integer(number))
    }

    // ManagedLocations bits differ from the SDK API's: Photo Library is 128 here, 64 there [doc].
    @Test(arguments: [(1, SaveLocation.oneDriveForBusiness, 1), (2, .sharePoint, 2), (4, .box, 4),
                      (32, .localDrive, 32), (128, .cameraRoll, 64)])
    func saveLocationBits(debugBit: Int, location: SaveLocation, apiBit: Int) throws {
        let s = try debug(["AppSharingToLevel": 1, "FileSharingSaveAsDisabled": true, "ManagedLocations": debugBit])
        #expect(s.allowedSaveLocations.locations == [location])
        #expect(s.allowedSaveLocations.rawValue == apiBit)
        #expect(location.rawValue == apiBit)
        #expect(DebugSettings.write(s)["ManagedLocations"]?.value == .integer(debugBit))
    }

    @Test(arguments: [(1, OpenLocation.oneDriveForBusiness), (2, .sharePoint), (4, .camera), (8, .localStorage), (16, .photos)])
    func openLocationBits(bit: Int, location: OpenLocation) throws {
        let s = try debug(["AppSharingFromLevel": 1, "OpenDataFromManagedLocations": bit])
        #expect(s.allowedIngestionLocations.locations == [location])
        #expect(location.rawValue == bit)
        #expect(DebugSettings.write(s)["OpenDataFromManagedLocations"]?.value == .integer(bit))
    }

    @Test func combinedBitmasks() throws {
        let s = try debug(["AppSharingToLevel": 1, "FileSharingSaveAsDisabled": 1, "ManagedLocations": 1 | 2 | 128])
        #expect(s.allowedSaveLocations.locations == [.oneDriveForBusiness, .sharePoint, .cameraRoll])
    }

    @Test func debugFlagsAndStrings() throws {
        let s = try debug([
            "AppSharingToLevel": 1, "EnableOpenInFilter": true, "OpenDataIntoOrgDocumentsBlocked": 1, "AppSharingFromLevel": 1,
            "ProtocolExclusions": "zoom;teams;", "ManagedBrowserRequired": true, "UnmanagedBrowserProtocol": "mybrowser",
            "NotificationRestriction": 2, "PrintingBlocked": 1, "ContactSyncDisabled": true, "DataBackupDisabled": 1,
            "ClipboardCharacterLengthException": 20, "PINEnabled": true, "PINCharacterType": 0, "PINMinLength": 6,
        ])
        #expect(s.filterOpenInToOnlyManagedApps && s.blockDataIngestionIntoOrganizationDocuments)
        #expect(s.exemptedSchemes == ["zoom", "teams"])
        #expect(s.managedBrowserRequired && s.customBrowserProtocol == "mybrowser" && s.managedBrowser == .notConfigured)
        #expect(s.notificationRestriction == .block && s.printBlocked && s.contactSyncBlocked && s.dataBackupBlocked)
        #expect(s.clipboardExceptionLength == 20 && s.pinRequired && s.pinCharacterSet == .alphanumericAndSymbol && s.minimumPinLength == 6)
        // ProtectManagedOpenInData is the negation of Graph's disableProtection…
        let os = try debug(["AppSharingToLevel": 1, "ProtectManagedOpenInData": 0])
        #expect(os.disableProtectionOfManagedOutboundOpenInData)
        #expect(DebugSettings.write(os)["ProtectManagedOpenInData"]?.value == .bool(false))
        // …and a required browser with no protocol is Edge.
        #expect(try debug(["ManagedBrowserRequired": 1]).managedBrowser == .microsoftEdge)
    }

    @Test func graphAndDebugFormsRoundTripThroughTheModel() throws {
        for file in ["managed-only", "managed-only-filtered", "managed-os-sharing", "locked-down", "level1-basic",
                     "level2-enhanced", "level3-high", "allow-all"] {
            let data = try Data(contentsOf: SamplePaths.policies.appendingPathComponent("policies/\(file).json"))
            var original = try #require(PolicyFile.load(data, file: file).first).policy.settings
            // The debug form has no "not configured" browser and no encryption level.
            if original.managedBrowserRequired && original.customBrowserProtocol == nil { original.managedBrowser = .microsoftEdge }
            let viaDebug = try #require(PolicyFile.load(try DebugSettings.plistData(original), file: "x.plist").first).policy.settings
            var expected = original
            expected.appDataEncryption = viaDebug.appDataEncryption
            expected.managedBrowser = viaDebug.managedBrowser
            #expect(viaDebug == expected, "\(file) via the debug form")
            // And Graph → write → read is exact.
            let policy = try #require(PolicyFile.load(data, file: file).first).policy
            let written = try JSONSerialization.data(withJSONObject: GraphPolicy.write(policy).propertyListObject!)
            let reread = try #require(PolicyFile.load(written, file: "w.json").first).policy
            #expect(reread.settings == policy.settings, "\(file) via Graph JSON")
        }
        // The sample debug plist equals the managed-only policy's data-transfer settings.
        let plist = try Data(contentsOf: SamplePaths.policies.appendingPathComponent("policies/debug-managed-only.plist"))
        let d = try #require(PolicyFile.load(plist, file: "debug").first).policy.settings
        #expect(d.send == .managedApps && d.receive == .managedApps && d.clipboard == .managedAppsWithPasteIn)
        #expect(d.allowedSaveLocations.locations == [.oneDriveForBusiness, .sharePoint])
        #expect(d.allowedIngestionLocations.locations == [.oneDriveForBusiness, .sharePoint, .camera, .photos])
    }

    @Test func binaryPlistPoliciesLoad() throws {
        let data = try PropertyListSerialization.data(fromPropertyList: ["AppSharingToLevel": 0], format: .binary, options: 0)
        #expect(try PolicyFile.load(data, file: "b.plist").first?.policy.settings.send == SendLevel.none)
    }
}

enum SamplePaths {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let policies = root.appendingPathComponent("Policies/contoso")
    static let apps = root.appendingPathComponent("Apps")
}
