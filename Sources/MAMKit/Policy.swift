import MAMPolicy

/// The policy object for one identity (`IntuneMAMPolicy`). Every answer is the engine's, asked
/// in this process of a party built from the broker's policy snapshot: the same functions the
/// broker asks, so a query and the broker's later decision agree.
///
/// An unmanaged identity gets the unrestricted answers (`isManaged == false`).
public struct AppPolicy: Sendable {
    let engine: PolicyEngine
    let snapshot: PolicySnapshot
    /// The party the answers are for.
    public let party: Party
    let view: PolicyView

    init(engine: PolicyEngine, snapshot: PolicySnapshot, party: Party) {
        self.engine = engine
        self.snapshot = snapshot
        self.party = party
        self.view = PolicyView(party)
    }

    public var isManaged: Bool { view.isManaged }
    /// The identity the answers are for; nil for a multi-identity app with none set.
    public var identity: Identity? { party.identityIsSet ? party.identity : nil }

    // MARK: Queries the engine answers

    /// `isURLAllowed(_:isKnownManagedAppScheme:)`: whether opening the URL would succeed.
    public func isURLAllowed(_ url: String, isKnownManagedAppScheme: Bool = false) -> Bool {
        urlDecision(url, isKnownManagedAppScheme: isKnownManagedAppScheme).allowed
    }

    /// The same, with the engine's decision (the rule, the URL as it would be delivered).
    public func urlDecision(_ url: String, isKnownManagedAppScheme: Bool = false) -> SharingDecision {
        SharingDecision(engine.isURLAllowed(url, by: party, isKnownManagedAppScheme: isKnownManagedAppScheme))
    }

    /// `isSaveToAllowed(for:withAccountId:)`: may this identity's data be saved to the location
    /// for that account (nil: the location's account is unknown)?
    public func isSaveToAllowed(for location: SaveLocation, account: String?) -> Bool {
        saveToDecision(for: location, account: account).allowed
    }

    public func saveToDecision(for location: SaveLocation, account: String?) -> SharingDecision {
        SharingDecision(engine.saveTo(location, account: account.map(snapshot.account(named:)), owner: party))
    }

    /// `isOpenFromAllowed(for:withAccountId:)`: may data from the location be opened here?
    public func isOpenFromAllowed(for location: OpenLocation, account: String?) -> Bool {
        openFromDecision(for: location, account: account).allowed
    }

    public func openFromDecision(for location: OpenLocation, account: String?) -> SharingDecision {
        SharingDecision(engine.openFrom(location, account: account.map(snapshot.account(named:)), receiver: party))
    }

    /// `getSaveToLocations(forAccountId:)`: every location and whether saving there is allowed.
    public func saveToLocations(account: String?) -> [SaveLocation: Bool] {
        Dictionary(uniqueKeysWithValues: SaveLocation.allCases.map { ($0, isSaveToAllowed(for: $0, account: account)) })
    }

    /// `getOpenFromLocations(forAccountId:)`.
    public func openFromLocations(account: String?) -> [OpenLocation: Bool] {
        Dictionary(uniqueKeysWithValues: OpenLocation.allCases.map { ($0, isOpenFromAllowed(for: $0, account: account)) })
    }

    // MARK: The policy view's properties (SEMANTICS §4.7)

    public var isPINRequired: Bool { view.isPINRequired }
    public var isFileEncryptionRequired: Bool { view.isFileEncryptionRequired }
    public var notificationPolicy: NotificationRestriction { view.notificationPolicy }
    public var isAppSharingAllowed: Bool { view.isAppSharingAllowed }
    public var isSpotlightIndexingAllowed: Bool { view.isSpotlightIndexingAllowed }
    public var areSiriIntentsAllowed: Bool { view.areSiriIntentsAllowed }
    public var isManagedBrowserRequired: Bool { view.isManagedBrowserRequired }
    public var isContactSyncAllowed: Bool { view.isContactSyncAllowed }
    public var isPrintingAllowed: Bool { view.isPrintingAllowed }
    public var isBackupAllowed: Bool { view.isBackupAllowed }

    /// Minutes before conditional launch asks again (the policy's online recheck).
    public var accessRecheckMinutes: Int { party.activePolicy?.accessRecheckOnlineMinutes ?? 0 }
}
