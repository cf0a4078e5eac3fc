import Foundation
import MAMPolicy
import Testing

/// The debug-plist keys checked against their sources, one row per statement: seed 004's table
/// of `MAMDebugSettings.plist` settings and the app-protection log reference.
@Suite("Debug settings: keys and values as the sources state them")
struct DebugKeyTests {
    struct Loaded {
        var settings: PolicySettings?
        var diagnostics: [Diagnostic]
    }

    func load(_ dict: [String: Any]) -> Loaded {
        let data = try! PropertyListSerialization.data(fromPropertyList: dict, format: .xml, options: 0)
        do {
            let loaded = try PolicyFile.load(data, file: "d.plist")
            return Loaded(settings: loaded.first?.policy.settings, diagnostics: loaded.flatMap(\.warnings))
        } catch {
            return Loaded(settings: nil, diagnostics: error.diagnostics)
        }
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var source: String
        var key: String
        var value: Int
        /// nil: a load error naming the key.
        var expected: Int?
        var testDescription: String { "\(source): \(key) = \(value)" }
    }

    static let recheckRows: [Row] = [
        Row(source: "seed 004 §Test app protection policy settings in Xcode, AccessRecheckOfflineTimeout: any integer greater than 0",
            key: "AccessRecheckOfflineTimeout", value: 1, expected: 1),
        Row(source: "seed 004 §Test app protection policy settings in Xcode, AccessRecheckOfflineTimeout: any integer greater than 0",
            key: "AccessRecheckOfflineTimeout", value: 90, expected: 90),
        Row(source: "seed 004 §Test app protection policy settings in Xcode, AccessRecheckOfflineTimeout: 0 is not greater than 0",
            key: "AccessRecheckOfflineTimeout", value: 0, expected: nil),
        Row(source: "seed 004 §Test app protection policy settings in Xcode, AccessRecheckOfflineTimeout: a negative is not greater than 0",
            key: "AccessRecheckOfflineTimeout", value: -5, expected: nil),
        Row(source: "seed 004 §Test app protection policy settings in Xcode, AccessRecheckOnlineTimeout: any integer greater than 0",
            key: "AccessRecheckOnlineTimeout", value: 15, expected: 15),
        Row(source: "seed 004 §Test app protection policy settings in Xcode, AccessRecheckOnlineTimeout: 0 is not greater than 0",
            key: "AccessRecheckOnlineTimeout", value: 0, expected: nil),
        Row(source: "seed 004 §Test app protection policy settings in Xcode, AccessRecheckOnlineTimeout: a negative is not greater than 0",
            key: "AccessRecheckOnlineTimeout", value: -1, expected: nil),
    ]

    @Test(arguments: recheckRows)
    func accessRecheckTimeouts(_ row: Row) {
        let loaded = load(["AppSharingToLevel": 1, row.key: row.value])
        #expect(!loaded.diagnostics.contains { $0.message.contains("unknown debug setting") }, "\(loaded.diagnostics)")
        guard let expected = row.expected else {
            #expect(loaded.settings == nil)
            #expect(loaded.diagnostics.contains { $0.severity == .error && $0.path.contains(row.key) }, "\(loaded.diagnostics)")
            return
        }
        let s = try! #require(loaded.settings)
        let value = row.key == "AccessRecheckOnlineTimeout" ? s.accessRecheckOnlineMinutes : s.accessRecheckOfflineMinutes
        #expect(value == expected)
        #expect(DebugSettings.write(s)[row.key]?.value == .integer(expected))
    }

    @Test func aRecheckTimeoutThatIsNotAnIntegerIsAnErrorNamingTheKey() {
        let loaded = load(["AccessRecheckOnlineTimeout": "thirty"])
        #expect(loaded.settings == nil)
        #expect(loaded.diagnostics.contains { $0.severity == .error && $0.path.contains("AccessRecheckOnlineTimeout") })
    }

    @Test func recheckTimeoutsRoundTripThroughGraphDurations() throws {
        var s = PolicySettings()
        s.accessRecheckOnlineMinutes = 45
        s.accessRecheckOfflineMinutes = 1440
        let policy = Policy(id: "p", displayName: "p", settings: s, targetedApps: [], includedGroups: [])
        let graph = GraphPolicy.write(policy)
        #expect(graph["periodOnlineBeforeAccessCheck"]?.value == .string("PT45M"))
        let json = try JSONSerialization.data(withJSONObject: graph.propertyListObject!)
        let reread = try #require(PolicyFile.load(json, file: "g.json").first).policy.settings
        #expect(reread.accessRecheckOnlineMinutes == 45 && reread.accessRecheckOfflineMinutes == 1440)
        let days = try #require(PolicyFile.load(Data(#"{"periodOfflineBeforeAccessCheck": "P1DT2H"}"#.utf8), file: "g.json").first)
        #expect(days.policy.settings.accessRecheckOfflineMinutes == 26 * 60)
        #expect(throws: LoadFailure.self) { try PolicyFile.load(Data(#"{"periodOnlineBeforeAccessCheck": "PT0M"}"#.utf8), file: "g.json") }
        #expect(throws: LoadFailure.self) { try PolicyFile.load(Data(#"{"periodOnlineBeforeAccessCheck": "30"}"#.utf8), file: "g.json") }
    }

    // The log reference's PIN keys (and the unknown-sources flag), value by value.
    struct PINRow: Sendable, CustomTestStringConvertible {
        var statement: String
        var entries: [String: Int]
        var check: @Sendable (PolicySettings) -> Bool
        var testDescription: String { "log reference: \(statement)" }
    }

    static let pinRows: [PINRow] = [
        PINRow(statement: "PINCharacterType 0 = Passcode", entries: ["PINCharacterType": 0]) { $0.pinCharacterSet == .alphanumericAndSymbol },
        PINRow(statement: "PINCharacterType 1 = Numeric", entries: ["PINCharacterType": 1]) { $0.pinCharacterSet == .numeric },
        PINRow(statement: "PINEnabled 0 = Not required", entries: ["PINEnabled": 0]) { !$0.pinRequired },
        PINRow(statement: "PINEnabled 1 = Require", entries: ["PINEnabled": 1]) { $0.pinRequired },
        PINRow(statement: "PINMinLength x characters", entries: ["PINMinLength": 8]) { $0.minimumPinLength == 8 },
        PINRow(statement: "PINNumRetry x attempts", entries: ["PINNumRetry": 3]) { $0.maximumPinRetries == 3 },
        PINRow(statement: "SimplePINAllowed 0 = Block", entries: ["SimplePINAllowed": 0]) { $0.simplePinBlocked },
        PINRow(statement: "SimplePINAllowed 1 = Allow", entries: ["SimplePINAllowed": 1]) { !$0.simplePinBlocked },
        PINRow(statement: "ProtectAllIncomingUnknownSourceData 1", entries: ["ProtectAllIncomingUnknownSourceData": 1, "AppSharingFromLevel": 2]) {
            $0.protectInboundDataFromUnknownSources
        },
    ]

    @Test(arguments: pinRows)
    func pinKeys(_ row: PINRow) throws {
        let loaded = load(row.entries)
        #expect(loaded.diagnostics.isEmpty, "\(loaded.diagnostics)")
        let s = try #require(loaded.settings)
        #expect(row.check(s))
        // Written back, the same number comes out.
        let written = DebugSettings.write(s)
        for (key, value) in row.entries {
            let node = try #require(written[key])
            switch node.value {
            case let .integer(i): #expect(i == value)
            case let .bool(b): #expect(b == (value == 1))
            default: Issue.record("\(key) written as \(node.value)")
            }
        }
    }

    @Test(arguments: ["PINRequired", "MinimumPINLength", "SimplePINBlocked", "ProtectInboundDataFromUnknownSources"])
    func olderPINKeyNamesAreWarningsThatNameTheLogKey(key: String) {
        let loaded = load([key: 1])
        let warning = loaded.diagnostics.first { $0.path.contains(key) }
        #expect(warning?.severity == .warning)
        #expect(warning?.message.contains("log reference") == true, "\(String(describing: warning))")
    }

    // Log reference, OpenDataFromManagedLocations: "8 = Local Storage", an open location the
    // admin may allow (seed 000 §Supported open locations): held, and no warning.
    @Test func localStorageOpenBitIsHeld() throws {
        let loaded = load(["AppSharingFromLevel": 1, "OpenDataIntoOrgDocumentsBlocked": 1, "OpenDataFromManagedLocations": 8 | 4])
        let s = try #require(loaded.settings)
        #expect(s.allowedIngestionLocations.locations == [.camera, .localStorage])
        #expect(!loaded.diagnostics.contains { $0.path.contains("OpenDataFromManagedLocations") })
    }
}
