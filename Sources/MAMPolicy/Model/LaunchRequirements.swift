/// What a device must be for a managed app to open under a policy: the conditional launch half
/// of Graph's `iosManagedAppProtection` (docs/SEMANTICS.md §9). Each check has an action the
/// admin picks for when it fails: a warning the user may dismiss, a block of the account's data,
/// or a wipe of it.
public struct LaunchRequirements: Sendable, Hashable, Codable {
    /// `minimumWarningOsVersion`, `minimumRequiredOsVersion`, `minimumWipeOsVersion`.
    public var os = VersionMinimums()
    /// `minimumWarningAppVersion`, `minimumRequiredAppVersion`, `minimumWipeAppVersion`.
    public var app = VersionMinimums()
    /// `minimumWarningSdkVersion`, `minimumRequiredSdkVersion`, `minimumWipeSdkVersion`.
    public var sdk = VersionMinimums()
    /// `deviceComplianceRequired`: a jailbroken device fails; Graph's default is true.
    public var complianceRequired = true
    /// `appActionIfDeviceComplianceRequired`.
    public var complianceAction: LaunchAction = .block
    /// `maximumAllowedDeviceThreatLevel`; `notConfigured` checks nothing.
    public var maximumThreatLevel: ThreatLevel = .notConfigured
    /// `mobileThreatDefenseRemediationAction`.
    public var threatAction: LaunchAction = .block
    /// `allowedIosDeviceModels` (Graph's `;`-joined list); empty allows every model.
    public var allowedModels: [String] = []
    /// `appActionIfIosDeviceModelNotAllowed`.
    public var modelAction: LaunchAction = .block
    /// `periodOfflineBeforeWipeIsEnforced` in minutes; Graph's default is 90 days.
    public var offlineWipeMinutes = 90 * 24 * 60

    public init() {}

    /// The three minimums of one version check; nil is not set (Graph's null).
    public struct VersionMinimums: Sendable, Hashable, Codable {
        public var warning: Version?
        public var required: Version?
        public var wipe: Version?
        public init(warning: Version? = nil, required: Version? = nil, wipe: Version? = nil) {
            self.warning = warning
            self.required = required
            self.wipe = wipe
        }
    }
}

/// What happens when a launch check fails (Graph `managedAppRemediationAction`), weakest first.
public enum LaunchAction: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    /// The user is told and may go on.
    case warn
    /// The account's data stays closed until the check passes.
    case block
    /// The account's data (its files and keys) is removed from the app.
    case wipe

    public static func < (a: Self, b: Self) -> Bool { a.rank < b.rank }
    var rank: Int { Self.allCases.firstIndex(of: self)! }
}

/// A device's threat level as a mobile threat defence partner reports it (Graph
/// `managedAppDeviceThreatLevel`), lowest first; `notConfigured` is a policy's "no maximum".
public enum ThreatLevel: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    case notConfigured, secured, low, medium, high

    public static func < (a: Self, b: Self) -> Bool { a.rank < b.rank }
    var rank: Int { Self.allCases.firstIndex(of: self)! }
}

/// A dotted version (`12.4.6`), compared part by part as numbers; a missing part is 0, so
/// `12.4` and `12.4.0` are the same version.
public struct Version: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    public let parts: [Int]
    /// As written: the parts joined by dots.
    public var text: String { parts.map(String.init).joined(separator: ".") }

    /// nil unless `text` is one to eight whole numbers of at most nine digits joined by dots.
    public init?(_ text: String) {
        let pieces = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...8).contains(pieces.count) else { return nil }
        var parts: [Int] = []
        for p in pieces {
            guard (1...9).contains(p.utf8.count), p.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let n = Int(p) else { return nil }
            parts.append(n)
        }
        self.parts = parts
    }

    public var description: String { text }

    public static func < (a: Version, b: Version) -> Bool {
        for i in 0..<max(a.parts.count, b.parts.count) {
            let x = i < a.parts.count ? a.parts[i] : 0, y = i < b.parts.count ? b.parts[i] : 0
            if x != y { return x < y }
        }
        return false
    }

    public static func == (a: Version, b: Version) -> Bool { !(a < b) && !(b < a) }
    public func hash(into h: inout Hasher) {
        var p = parts
        while p.last == 0 { p.removeLast() }
        h.combine(p)
    }
}
