/// The data-protection settings of one app-protection policy: the one internal model that both
/// the Graph JSON form and the debug-plist form load into and are written back from.
///
/// Defaults are the service defaults of SEMANTICS §2.
public struct PolicySettings: Sendable, Hashable, Codable {
    public var send: SendLevel = .allApps
    public var filterOpenInToOnlyManagedApps = false
    public var disableProtectionOfManagedOutboundOpenInData = false
    /// URL schemes a managed app may still open when Send is `managedApps`; lower-cased.
    public var exemptedSchemes: [String] = PolicySettings.defaultExemptedSchemes {
        didSet { exemptedSchemeSet = Set(exemptedSchemes) }
    }
    public private(set) var exemptedSchemeSet: Set<String> = Set(PolicySettings.defaultExemptedSchemes)

    public var receive: ReceiveLevel = .allApps
    public var protectInboundDataFromUnknownSources = false

    public var clipboard: ClipboardLevel = .allApps
    public var clipboardExceptionLength = 0

    public var saveAsBlocked = false
    public var allowedSaveLocations: SaveLocations = []

    public var blockDataIngestionIntoOrganizationDocuments = false
    public var allowedIngestionLocations = OpenLocations([OpenLocation.oneDriveForBusiness, .sharePoint, .camera, .photos])

    public var managedBrowserRequired = false
    public var managedBrowser: ManagedBrowser = .notConfigured
    public var customBrowserProtocol: String?

    public var dialer: DialerLevel = .allApps
    public var customDialerAppProtocol: String?

    public var notificationRestriction: NotificationRestriction = .allow
    public var printBlocked = false
    public var contactSyncBlocked = false
    public var dataBackupBlocked = false
    public var appDataEncryption: AppDataEncryption = .whenDeviceLocked

    public var pinRequired = false
    public var pinCharacterSet: PINCharacterSet = .numeric
    public var minimumPinLength = 4
    public var maximumPinRetries = 5
    public var simplePinBlocked = false

    /// Minutes of inactivity before the access requirements (PIN, sign-in) are asked again;
    /// Graph `periodOnlineBeforeAccessCheck`, debug `AccessRecheckOnlineTimeout` [doc: admin
    /// default 30 minutes; seed 004 §Test app protection policy settings in Xcode: an integer > 0].
    public var accessRecheckOnlineMinutes = 30
    /// Minutes the app may stay offline before access is blocked; Graph
    /// `periodOfflineBeforeAccessCheck`, debug `AccessRecheckOfflineTimeout` [doc: admin default
    /// 720 minutes; seed 004: an integer > 0].
    public var accessRecheckOfflineMinutes = 720

    /// Conditional launch: what the device must be for the app to open (docs/SEMANTICS.md §9).
    public var launch = LaunchRequirements()

    public init() {}

    /// The service's default exemption list [doc].
    public static let defaultExemptedSchemes = [
        "skype", "app-settings", "calshow", "itms", "itmss", "itms-apps", "itms-appss", "itms-services",
    ]

    /// Splits a `;`-joined scheme list (Graph `value`, debug `ProtocolExclusions`).
    public static func schemes(in list: String) -> [String] {
        list.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
    }

    /// Applies the couplings the service enforces [doc, SEMANTICS §2]: Send `allApps` allows
    /// save-as, Send `none` blocks it with no locations; the same for Receive and open-into.
    public mutating func applyCouplings() {
        switch send {
        case .allApps: saveAsBlocked = false
        case .none: saveAsBlocked = true; allowedSaveLocations = []
        case .managedApps: break
        }
        switch receive {
        case .allApps: blockDataIngestionIntoOrganizationDocuments = false
        case .none: blockDataIngestionIntoOrganizationDocuments = true; allowedIngestionLocations = []
        case .managedApps: break
        }
    }

    /// The combinations that are load errors [doc], as (property, reason).
    public var couplingViolations: [(property: String, reason: String)] {
        var out: [(String, String)] = []
        if filterOpenInToOnlyManagedApps && send != .managedApps {
            out.append(("filterOpenInToOnlyManagedApps",
                        "Open-In/Share filtering is valid only with allowedOutboundDataTransferDestinations = managedApps (it is \(send.rawValue))"))
        }
        if disableProtectionOfManagedOutboundOpenInData && send != .managedApps {
            out.append(("disableProtectionOfManagedOutboundOpenInData",
                        "OS sharing is valid only with allowedOutboundDataTransferDestinations = managedApps (it is \(send.rawValue))"))
        }
        if protectInboundDataFromUnknownSources && receive != .allApps {
            out.append(("protectInboundDataFromUnknownSources",
                        "valid only with allowedInboundDataTransferSources = allApps (it is \(receive.rawValue))"))
        }
        if dialer == .customApp && (customDialerAppProtocol ?? "").isEmpty {
            out.append(("customDialerAppProtocol", "dialerRestrictionLevel = customApp needs a customDialerAppProtocol"))
        }
        return out
    }
}

import Foundation
