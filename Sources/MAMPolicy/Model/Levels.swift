// The levels of the data-transfer settings, named and ordered as the Graph API names them
// (SEMANTICS §2). The debug-plist form numbers them the other way round; see DebugSettings.swift.

/// "Send org data to other apps" (`allowedOutboundDataTransferDestinations`).
public enum SendLevel: String, Sendable, Codable, CaseIterable, Hashable, Comparable {
    case allApps, managedApps, none
    /// Higher is stricter.
    var strictness: Int { Self.allCases.firstIndex(of: self)! }
    public static func < (a: Self, b: Self) -> Bool { a.strictness < b.strictness }
}

/// "Receive data from other apps" (`allowedInboundDataTransferSources`).
public enum ReceiveLevel: String, Sendable, Codable, CaseIterable, Hashable, Comparable {
    case allApps, managedApps, none
    var strictness: Int { Self.allCases.firstIndex(of: self)! }
    public static func < (a: Self, b: Self) -> Bool { a.strictness < b.strictness }
}

/// "Restrict cut, copy and paste between other apps" (`allowedOutboundClipboardSharingLevel`).
public enum ClipboardLevel: String, Sendable, Codable, CaseIterable, Hashable, Comparable {
    case allApps, managedAppsWithPasteIn, managedApps, blocked
    var strictness: Int { Self.allCases.firstIndex(of: self)! }
    public static func < (a: Self, b: Self) -> Bool { a.strictness < b.strictness }
}

/// "Transfer telecommunication data to" (`dialerRestrictionLevel`).
public enum DialerLevel: String, Sendable, Codable, CaseIterable, Hashable {
    case allApps, managedApps, customApp, blocked
}

/// "Org data notifications" (`notificationRestriction`).
public enum NotificationRestriction: String, Sendable, Codable, CaseIterable, Hashable {
    case allow, blockOrganizationalData, block
}

/// `managedBrowser`.
public enum ManagedBrowser: String, Sendable, Codable, CaseIterable, Hashable {
    case notConfigured, microsoftEdge
}

/// `appDataEncryptionType`.
public enum AppDataEncryption: String, Sendable, Codable, CaseIterable, Hashable {
    case useDeviceSettings, afterDeviceRestart, whenDeviceLockedExceptOpenFiles, whenDeviceLocked
}

/// `pinCharacterSet`.
public enum PINCharacterSet: String, Sendable, Codable, CaseIterable, Hashable {
    case numeric, alphanumericAndSymbol
}
