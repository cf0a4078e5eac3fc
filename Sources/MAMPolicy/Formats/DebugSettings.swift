import Foundation

/// The on-device debug/log form of a policy (`MAMDebugSettings.plist` style).
///
/// It numbers the levels in the opposite order to Graph (0 is the strictest) and uses its own
/// location bitmasks, which are not the SDK API's [doc: the app-protection log reference;
/// SEMANTICS §2]. Values marked [chosen] below fill gaps the sources leave.
public enum DebugSettings {
    /// A numbered level: (number, internal value).
    static let send: [(Int, SendLevel)] = [(0, .none), (1, .managedApps), (2, .allApps)]
    static let receive: [(Int, ReceiveLevel)] = [(0, .none), (1, .managedApps), (2, .allApps)]
    static let clipboard: [(Int, ClipboardLevel)] = [
        (0, .blocked), (1, .managedApps), (2, .managedAppsWithPasteIn), (3, .allApps),
    ]
    // [doc] 0 none, 1 a specific dialer, 3 any dialer; 2 for managed dialers is [chosen].
    static let dialer: [(Int, DialerLevel)] = [(0, .blocked), (1, .customApp), (2, .managedApps), (3, .allApps)]
    static let notification: [(Int, NotificationRestriction)] = [(0, .allow), (1, .blockOrganizationalData), (2, .block)]
    // [doc: log] `PINCharacterType` 0 = Passcode (letters, digits and symbols), 1 = Numeric.
    static let pinCharacters: [(Int, PINCharacterSet)] = [(0, .alphanumericAndSymbol), (1, .numeric)]

    /// `ManagedLocations` bits: note Photo Library is 128 here but 64 in the SDK API [doc].
    public static let saveBits: [(Int, SaveLocation)] = [
        (1, .oneDriveForBusiness), (2, .sharePoint), (4, .box), (32, .localDrive), (128, .cameraRoll),
    ]
    /// `OpenDataFromManagedLocations` bits [doc: log]. Local Storage (8) is an open location the
    /// admin may allow (seed 000 §Supported open locations); Graph's list has no name for it.
    public static let openBits: [(Int, OpenLocation)] = [
        (1, .oneDriveForBusiness), (2, .sharePoint), (4, .camera), (8, .localStorage), (16, .photos),
    ]

    static func boolKeys() -> [(String, WritableKeyPath<PolicySettings, Bool>, Bool)] {
        // (key, field, whether the plist value is the negation of the field)
        [("FileSharingSaveAsDisabled", \.saveAsBlocked, false),
         ("OpenDataIntoOrgDocumentsBlocked", \.blockDataIngestionIntoOrganizationDocuments, false),
         ("ManagedBrowserRequired", \.managedBrowserRequired, false),
         ("EnableOpenInFilter", \.filterOpenInToOnlyManagedApps, false),
         ("ProtectManagedOpenInData", \.disableProtectionOfManagedOutboundOpenInData, true),
         // [doc: log] the reference lists this key, noting that the service does not actively
         // use it; it is the only debug name for the Graph flag.
         ("ProtectAllIncomingUnknownSourceData", \.protectInboundDataFromUnknownSources, false),
         ("PrintingBlocked", \.printBlocked, false),
         ("ContactSyncDisabled", \.contactSyncBlocked, false),
         ("DataBackupDisabled", \.dataBackupBlocked, false),
         // [doc: log] the PIN keys: `PINEnabled` 1 = required, `SimplePINAllowed` 0 = block.
         ("PINEnabled", \.pinRequired, false),
         ("SimplePINAllowed", \.simplePinBlocked, true)]
    }

    static func intKeys() -> [(String, WritableKeyPath<PolicySettings, Int>, Int)] {
        [("ClipboardCharacterLengthException", \.clipboardExceptionLength, 0),
         ("PINMinLength", \.minimumPinLength, 1),
         ("PINNumRetry", \.maximumPinRetries, 1),
         // seed 004 §Test app protection policy settings in Xcode: minutes, any integer greater than 0.
         ("AccessRecheckOfflineTimeout", \.accessRecheckOfflineMinutes, 1),
         ("AccessRecheckOnlineTimeout", \.accessRecheckOnlineMinutes, 1)]
    }

    /// Names an earlier MAMLab used for keys the log reference spells otherwise; a file that
    /// still uses one is told the right name instead of "unknown".
    static let renamedKeys: [String: String] = [
        "PINRequired": "PINEnabled", "MinimumPINLength": "PINMinLength", "SimplePINBlocked": "SimplePINAllowed (0 blocks simple PINs)",
        "ProtectInboundDataFromUnknownSources": "ProtectAllIncomingUnknownSourceData",
    ]

    public static let knownKeys: Set<String> = {
        var keys: Set<String> = [
            "AppSharingToLevel", "AppSharingFromLevel", "ClipboardSharingLevel", "DialerRestrictionLevel",
            "NotificationRestriction", "PINCharacterType", "ManagedLocations", "OpenDataFromManagedLocations",
            "ProtocolExclusions", "UnmanagedBrowserProtocol", "SpecificDialerProtocol",
        ]
        for (k, _, _) in boolKeys() { keys.insert(k) }
        for (k, _, _) in intKeys() { keys.insert(k) }
        return keys
    }()

    /// Reads the settings from a debug-form property-list dictionary.
    public static func read(_ root: Located, log: inout DiagnosticLog) -> PolicySettings? {
        guard let members = root.object(&log) else { return nil }
        let errorsBefore = log.items.filter { $0.severity == .error }.count
        var s = PolicySettings()
        for (key, value) in members {
            switch key {
            case "AppSharingToLevel": s.send = level(value, send, &log) ?? s.send
            case "AppSharingFromLevel": s.receive = level(value, receive, &log) ?? s.receive
            case "ClipboardSharingLevel": s.clipboard = level(value, clipboard, &log) ?? s.clipboard
            case "DialerRestrictionLevel": s.dialer = level(value, dialer, &log) ?? s.dialer
            case "NotificationRestriction": s.notificationRestriction = level(value, notification, &log) ?? s.notificationRestriction
            case "PINCharacterType": s.pinCharacterSet = level(value, pinCharacters, &log) ?? s.pinCharacterSet
            case "ManagedLocations":
                if let l = mask(value, saveBits, &log) { s.allowedSaveLocations = SaveLocations(l) }
            case "OpenDataFromManagedLocations":
                if let l = mask(value, openBits, &log) { s.allowedIngestionLocations = OpenLocations(l) }
            case "ProtocolExclusions":
                if let text = value.string(&log) { s.exemptedSchemes = PolicySettings.schemes(in: text) }
            case "UnmanagedBrowserProtocol":
                if let text = value.string(&log) { s.customBrowserProtocol = text.isEmpty ? nil : text }
            case "SpecificDialerProtocol":
                if let text = value.string(&log) { s.customDialerAppProtocol = text.isEmpty ? nil : text }
            default:
                if let (_, path, negated) = boolKeys().first(where: { $0.0 == key }) {
                    if let b = flag(value, &log) { s[keyPath: path] = negated ? !b : b }
                } else if let (_, path, minimum) = intKeys().first(where: { $0.0 == key }) {
                    if let i = value.integer(&log, minimum: minimum) { s[keyPath: path] = i }
                } else if let name = renamedKeys[key] {
                    log.append(value.problem(.warning, "\"\(key)\" is not a key of the app-protection log reference; it is ignored (the key is \(name))"))
                } else {
                    log.append(value.problem(.warning, "unknown debug setting \"\(key)\"; it is ignored"))
                }
            }
        }
        // The debug form names no browser; a required browser without a custom protocol is Edge.
        if s.managedBrowserRequired && s.customBrowserProtocol == nil { s.managedBrowser = .microsoftEdge }
        for violation in s.couplingViolations {
            let key = debugKey(forGraphProperty: violation.property)
            log.append((root.member(key) ?? root).problem(violation.reason))
        }
        s.applyCouplings()
        let errorsAfter = log.items.filter { $0.severity == .error }.count
        return errorsAfter == errorsBefore ? s : nil
    }

    static func debugKey(forGraphProperty p: String) -> String {
        switch p {
        case "filterOpenInToOnlyManagedApps": return "EnableOpenInFilter"
        case "disableProtectionOfManagedOutboundOpenInData": return "ProtectManagedOpenInData"
        case "customDialerAppProtocol": return "SpecificDialerProtocol"
        case "protectInboundDataFromUnknownSources": return "ProtectAllIncomingUnknownSourceData"
        default: return p
        }
    }

    /// Writes the settings as a debug-form dictionary (every key, so a reader sees the whole policy).
    public static func write(_ s: PolicySettings) -> Node {
        func number<T: Equatable>(_ table: [(Int, T)], _ v: T) -> Node {
            Node(.integer(table.first(where: { $0.1 == v })!.0))
        }
        var pairs: [(key: String, value: Node)] = [
            ("AppSharingToLevel", number(send, s.send)),
            ("AppSharingFromLevel", number(receive, s.receive)),
            ("ClipboardSharingLevel", number(clipboard, s.clipboard)),
            ("DialerRestrictionLevel", number(dialer, s.dialer)),
            ("NotificationRestriction", number(notification, s.notificationRestriction)),
            ("PINCharacterType", number(pinCharacters, s.pinCharacterSet)),
            ("ManagedLocations", Node(.integer(saveBits.filter { s.allowedSaveLocations.contains($0.1) }.reduce(0) { $0 | $1.0 }))),
            ("OpenDataFromManagedLocations", Node(.integer(openBits.filter { s.allowedIngestionLocations.contains($0.1) }.reduce(0) { $0 | $1.0 }))),
            ("ProtocolExclusions", Node(.string(s.exemptedSchemes.map { $0 + ";" }.joined()))),
            ("UnmanagedBrowserProtocol", Node(.string(s.customBrowserProtocol ?? ""))),
            ("SpecificDialerProtocol", Node(.string(s.customDialerAppProtocol ?? ""))),
        ]
        for (key, path, negated) in boolKeys() {
            pairs.append((key, Node(.bool(negated ? !s[keyPath: path] : s[keyPath: path]))))
        }
        for (key, path, _) in intKeys() { pairs.append((key, Node(.integer(s[keyPath: path])))) }
        return Node(.object(pairs.sorted { $0.key < $1.key }))
    }

    /// Property-list bytes (XML) of `write(_:)`.
    public static func plistData(_ s: PolicySettings) throws -> Data {
        try PropertyListSerialization.data(fromPropertyList: write(s).propertyListObject!, format: .xml, options: 0)
    }

    private static func level<T>(_ value: Located, _ table: [(Int, T)], _ log: inout DiagnosticLog) -> T? {
        guard let n = value.integer(&log) else { return nil }
        if let hit = table.first(where: { $0.0 == n }) { return hit.1 }
        let allowed = table.map { "\($0.0) (\($0.1))" }.joined(separator: ", ")
        log.append(value.problem("unknown level \(n); allowed values: \(allowed)"))
        return nil
    }

    private static func mask<T>(_ value: Located, _ bits: [(Int, T)], _ log: inout DiagnosticLog) -> [T]? {
        guard let n = value.integer(&log, minimum: 0) else { return nil }
        let known = bits.reduce(0) { $0 | $1.0 }
        if n & ~known != 0 {
            let allowed = bits.map { "\($0.0) (\($0.1))" }.joined(separator: ", ")
            log.append(value.problem("bitmask \(n) has unknown bits \(n & ~known); allowed bits: \(allowed)"))
            return nil
        }
        return bits.filter { n & $0.0 != 0 }.map(\.1)
    }

    /// Log-form booleans are 0/1; the debug plist may also use `<true/>`/`<false/>`.
    private static func flag(_ value: Located, _ log: inout DiagnosticLog) -> Bool? {
        switch value.node.value {
        case let .bool(b): return b
        case let .integer(i) where i == 0 || i == 1: return i == 1
        case let .integer(i):
            log.append(value.problem("value \(i) is not a flag; allowed values: 0, 1, true, false")); return nil
        default: log.append(value.wrongType("a boolean or 0/1")); return nil
        }
    }
}
