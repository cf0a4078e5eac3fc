/// Views that show several accounts at once (a merged view: a unified inbox, a list of every
/// account's documents), docs/SEMANTICS.md §1.view.
///
/// The SDK gives such a view a list of accounts (`setUIPolicyAccountIds:forWindow:`) and its
/// policy is not a merge of theirs: with at least one account managed, the view is under a
/// generic lock-down policy [doc: headers, `policyForAccountIds:`]; seed 002 §Exit criteria
/// asks that policy be applied on every page that shows several accounts' data. MAMLab's
/// lock-down is `PolicySettings.lockDown` (every restriction at its strictest [chosen]: the
/// real values are not public), so org data leaves such a view for no other app: a share is
/// refused by 4.1.3 (send none), a paste elsewhere by 4.3.2 (clipboard blocked), a save by 4.6,
/// a web link opens only in the managed browser, and nothing comes in.
extension Party {
    /// The identities a view shows, each once, in the order given (`""` once for personal).
    public static func distinct(_ identities: [Identity]) -> [Identity] {
        var seen: Set<Identity> = []
        return identities.filter { seen.insert($0).inserted }
    }

    /// This app showing `identities` in one view: one identity acts as itself; several with
    /// none of them managed here act unmanaged (as the first); several with one managed act
    /// under that account with the lock-down policy, so the view's data counts as org data and
    /// every restriction applies.
    public func showing(_ identities: [Identity]) -> Party {
        let shown = Self.distinct(identities)
        var acting = self
        guard shown.count > 1 else {
            acting.identity = shown.first ?? .personal
            return acting
        }
        guard let managed = shown.lazy.compactMap({ $0.account }).first(where: { isPolicyManaged(under: $0) }) else {
            acting.identity = shown[0]
            return acting
        }
        return Party(app: app, identity: .account(managed), enrolled: managed, policy: Policy.lockDown,
                     personalAccountSignedIn: personalAccountSignedIn, isMDMManaged: isMDMManaged)
    }
}

extension Policy {
    /// The generic policy of a view that shows a managed account beside others.
    public static let lockDown = Policy(id: "lock-down", displayName: "Lock-down (a view of several accounts)", settings: .lockDown)
}

extension PolicyEngine {
    /// An app asks to show `wanted` together in one view (`setUIPolicyAccountIds`): each must
    /// be one it may act under (`setIdentity`'s rules: signed in, not a second managed
    /// account), and only a multi-identity app shows several [chosen: the headers keep merged
    /// views for apps with several managed accounts, which MAMLab does not emulate; seed 002's
    /// exit criteria test them in a multi-identity app with one managed and one unmanaged
    /// account]. An empty list is "no user" [doc: headers], one account is `setIdentity`.
    ///
    /// - Returns: allowed by `identityViewSet`, with the identity the view acts under.
    public func setViewIdentities(_ wanted: [Identity], for party: Party, signedIn: [Account]) -> Decision {
        let shown = Party.distinct(wanted)
        guard shown.count > 1 else { return setIdentity(shown.first ?? .personal, for: party, signedIn: signedIn) }
        guard party.integratesSDK else { return Decision(.blocked, .identityNoSDK) }
        guard party.isMultiIdentity else { return Decision(.blocked, .identityViewSingleIdentity) }
        for identity in shown {
            let d = setIdentity(identity, for: party, signedIn: signedIn)
            if !d.allowed { return d }
        }
        var d = Decision(.allowed, .identityViewSet)
        d.receivingIdentity = party.showing(shown).identity
        return d
    }
}
