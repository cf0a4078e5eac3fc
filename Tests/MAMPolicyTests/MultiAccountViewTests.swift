import MAMPolicy
import Testing

/// SEMANTICS §1.view against its sources: seed 002 §Exit criteria ("Multi-account view": policy
/// is applied on every page that shows several accounts' data) and the headers (a list of
/// accounts with one managed gets the lock-down policy, not a merge; the list form is a view's).
@Suite("Engine: views that show several accounts")
struct MultiAccountViewTests {
    /// Seed 002's exit-criteria set-up: Send and Receive = policy-managed apps for adele.
    let lab = Lab(settings: .managedOnly)
    var adele: Account { lab.engine.tenant.knownAccount(named: Lab.adele)! }
    var mail: Party { lab.party("mail", Lab.adele) }
    var unified: Party { mail.showing([.account(adele), .personal]) }

    @Test func aViewWithAManagedAccountIsManagedUnderTheLockDownPolicyNotAMerge() {
        // Seed 002: policy is applied on the multi-account page.
        #expect(unified.isManaged && unified.dataAccount == adele)
        // Headers: lock-down, not adele's own policy (which sends to managed apps).
        #expect(unified.policy?.id == "lock-down" && unified.activePolicy == PolicySettings.lockDown)
        #expect(mail.activePolicy?.send == .managedApps)
    }

    @Test func aShareOrPasteOutOfAMixedViewIsBlockedWhereTheManagedAccountAloneMaySend() {
        let docs = lab.party("docs", Lab.adele)
        // Adele alone shares and pastes into Docs, managed for her.
        #expect(lab.engine.openIn(type: "com.adobe.pdf", from: mail, to: docs).allowed)
        #expect(lab.engine.paste(PasteboardItem(source: mail, text: "q3"), into: docs).allowed)
        // The view of adele and personal: refused, by send-to-no-app and the blocked clipboard.
        let share = lab.engine.openIn(type: "com.adobe.pdf", from: unified, to: docs)
        // Send = none: not offered on the share sheet at all (4.1.3, seed 000 on Copy-to).
        #expect(!share.allowed && share.outcome == .filtered && share.rule == .sendNoneOpenInFiltered, "\(share.rule)")
        let paste = lab.engine.paste(PasteboardItem(source: unified, text: "q3"), into: docs)
        #expect(paste.outcome == .blocked && paste.rule == .pasteOrgBlocked, "\(paste.rule)")
        // Nothing comes in either: adele's own org data from Docs is refused by the view.
        let incoming = lab.engine.openIn(type: "com.adobe.pdf", from: docs, to: unified)
        #expect(!incoming.allowed && incoming.rule == .receiveNone, "\(incoming.rule)")
    }

    @Test func aViewOfUnmanagedAccountsOnlyIsUnmanaged() {
        let dana = lab.engine.tenant.identity(named: "dana@outlook.com")
        let personalOnly = mail.showing([dana, .personal])
        #expect(!personalOnly.isManaged && personalOnly.identity == dana)
        #expect(lab.engine.openIn(type: "com.adobe.pdf", from: personalOnly, to: lab.party("notes")).allowed)
        // Repeats are one account: a plain identity.
        #expect(mail.showing([.account(adele), .account(adele)]) == mail)
    }

    @Test func setViewIdentitiesFollowsTheIdentityRulesForEachAccount() {
        let e = lab.engine
        #expect(e.setViewIdentities([.account(adele), .personal], for: mail, signedIn: [adele]).rule == .identityViewSet)
        // Every account must be signed in to the app; the first refusal is the answer.
        let ben = e.tenant.identity(named: Lab.ben)
        #expect(e.setViewIdentities([.account(adele), ben], for: mail, signedIn: [adele]).rule == .identityNotSignedIn)
        // A single-identity app shows one account.
        #expect(e.setViewIdentities([.account(adele), .personal], for: lab.party("docs", Lab.adele), signedIn: [adele]).rule
            == .identityViewSingleIdentity)
        // No SDK, no identity.
        #expect(e.setViewIdentities([.account(adele), .personal], for: lab.party("notes"), signedIn: [adele]).rule == .identityNoSDK)
        // Empty is "no user" (personal); one account is a plain switch (headers).
        let none = e.setViewIdentities([], for: mail, signedIn: [adele])
        #expect(none.rule == .identitySet && none.receivingIdentity == .personal)
        #expect(e.setViewIdentities([.account(adele)], for: mail, signedIn: [adele]).rule == .identitySet)
        // A second managed account (ben, targeted for Mail) beside adele is refused (227).
        let both = Lab(settings: .managedOnly, ben: .managedOnly)
        let b = both.engine.tenant.knownAccount(named: Lab.ben)!
        let d = both.engine.setViewIdentities([.account(adele), .account(b)], for: both.party("mail", Lab.adele), signedIn: [adele, b])
        #expect(d.rule == .identitySecondManaged)
    }
}
