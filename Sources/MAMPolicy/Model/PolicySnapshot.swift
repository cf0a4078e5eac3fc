import Foundation

/// What an SDK app needs to answer its own policy queries with the engine, in its process: its
/// manifest, the account enrolled in it and the policy that targets (app, account), as the
/// broker knows them. The broker sends it (`policySnapshot`, docs/PROTOCOL.md); MAMKit builds
/// parties from it and asks the same engine functions the broker asks, so a local answer and
/// the broker's decision can never differ for the same party.
///
/// One snapshot covers every account of the app: only the enrolled account is managed there
/// [seed 002 §Stage 5], so the policy of any other account is none.
public struct PolicySnapshot: Sendable, Hashable, Codable {
    public var app: AppManifest
    /// The managed account enrolled in the app, if any.
    public var enrolled: Account?
    /// The policy targeting (app, enrolled account); nil when none does.
    public var policy: Policy?
    /// The identity the broker has the app acting under now.
    public var identity: Identity
    /// The accounts the app has signed in (the run's user, the enrolled account).
    public var signedIn: [Account]
    /// The device's MDM manages the app (matters for "OS sharing").
    public var isMDMManaged: Bool
    /// A personal account is signed in beside the managed one (the broker takes it for every
    /// multi-identity app).
    public var personalAccountSignedIn: Bool
    /// The broker's tenant revision the snapshot was made for.
    public var revision: Int
    /// Which of the snapshots sent to this app it is (1, 2, …): replies to two requests can
    /// resume the app's tasks in either order, and only a later snapshot may replace an earlier
    /// one. Not part of what the snapshot says: the kit takes it off before comparing.
    public var sequence: Int?

    public init(app: AppManifest, enrolled: Account?, policy: Policy?, identity: Identity, signedIn: [Account],
                isMDMManaged: Bool, personalAccountSignedIn: Bool = false, revision: Int) {
        self.app = app
        self.enrolled = enrolled
        self.policy = policy
        self.identity = identity
        self.signedIn = signedIn
        self.isMDMManaged = isMDMManaged
        self.personalAccountSignedIn = personalAccountSignedIn
        self.revision = revision
    }

    /// The app acting under `identity`; nil is a multi-identity app's launch state (no
    /// identity set: unmanaged, no policy applied).
    public func party(_ identity: Identity?) -> Party {
        Party(app: app, identity: identity ?? .personal, enrolled: enrolled, policy: policy,
              personalAccountSignedIn: personalAccountSignedIn || (app.isMultiIdentity && identity == .personal),
              isMDMManaged: isMDMManaged, identityIsSet: identity != nil)
    }

    /// Several accounts at once (a merged view): with at least one of them managed, the
    /// lock-down policy, not a merge [doc: SDK header, `policyForAccountIds:`]; otherwise the
    /// one managed party or an unmanaged one (`Party.showing`, as the broker decides).
    public func party(forAccounts accounts: [Account]) -> Party {
        party(accounts.first.map(Identity.account) ?? .personal).showing(accounts.map(Identity.account))
    }

    /// A view showing `identities` (`""` is personal); nil or empty is the launch state's "no
    /// user" for a multi-identity app.
    public func party(showing identities: [Identity]) -> Party {
        party(identities.first).showing(identities)
    }

    /// An account the app names: one it has signed in or enrolled (matched by UPN or object
    /// id, case-insensitively), else an account the app does not know.
    public func account(named name: String) -> Account {
        let lowered = name.lowercased()
        let known = ([enrolled].compactMap { $0 } + signedIn).first {
            $0.upn?.lowercased() == lowered || $0.oid?.lowercased() == lowered || $0.name.lowercased() == lowered
        }
        return known ?? Account(unknown: name)
    }

    /// An identity from its written form: `""` or `personal` is personal.
    public func identity(named name: String) -> Identity {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        return trimmed.isEmpty || trimmed.lowercased() == "personal" ? .personal : .account(account(named: trimmed))
    }
}

extension PolicySettings {
    /// The generic lock-down policy for a view that shows several accounts, one of them
    /// managed [doc: not a merge]. Its settings are MAMLab's [chosen]: every restriction at
    /// its strictest, since the real lock-down values are not public.
    public static var lockDown: PolicySettings {
        var s = PolicySettings()
        s.send = .none
        s.receive = .none
        s.clipboard = .blocked
        s.exemptedSchemes = []
        s.notificationRestriction = .block
        s.printBlocked = true
        s.contactSyncBlocked = true
        s.dataBackupBlocked = true
        s.managedBrowserRequired = true
        s.pinRequired = true
        s.dialer = .blocked
        s.appDataEncryption = .whenDeviceLocked
        s.applyCouplings()
        return s
    }
}
