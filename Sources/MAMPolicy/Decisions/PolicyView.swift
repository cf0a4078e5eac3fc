/// What the SDK's policy object answers for a party's current identity (SEMANTICS §4.7).
/// An unmanaged party gets the unrestricted answers.
public struct PolicyView: Sendable, Hashable {
    public var isManaged: Bool
    public var isFileEncryptionRequired: Bool
    public var notificationPolicy: NotificationRestriction
    /// App sharing, Spotlight indexing and Siri intents: false for a managed party unless Send is `allApps` [doc].
    public var isAppSharingAllowed: Bool
    public var isSpotlightIndexingAllowed: Bool
    public var areSiriIntentsAllowed: Bool
    public var isManagedBrowserRequired: Bool
    public var isContactSyncAllowed: Bool
    public var isPINRequired: Bool
    public var isPrintingAllowed: Bool
    public var isBackupAllowed: Bool

    public init(_ party: Party) {
        let p = party.activePolicy
        isManaged = p != nil
        isFileEncryptionRequired = p.map { $0.appDataEncryption != .useDeviceSettings } ?? false
        notificationPolicy = p?.notificationRestriction ?? .allow
        let sharing = p.map { $0.send == .allApps } ?? true
        isAppSharingAllowed = sharing
        isSpotlightIndexingAllowed = sharing
        areSiriIntentsAllowed = sharing
        isManagedBrowserRequired = p?.managedBrowserRequired ?? false
        isContactSyncAllowed = !(p?.contactSyncBlocked ?? false)
        isPINRequired = p?.pinRequired ?? false
        isPrintingAllowed = !(p?.printBlocked ?? false)
        isBackupAllowed = !(p?.dataBackupBlocked ?? false)
    }
}
