import Foundation
import MAMPolicy
import Testing

@Suite("§1 identities")
struct IdentityTests {
    let tenant = Lab(settings: .managedOnly).engine.tenant

    @Test func accountsCompareCaseInsensitivelyAndUPNEqualsOID() {
        let upn = tenant.identity(named: "ADELE@Contoso.com")
        let oid = tenant.identity(named: Lab.adeleOID.lowercased())
        #expect(upn == oid)
        #expect(upn != tenant.identity(named: Lab.ben))
        #expect(Account(unknown: "Me@Outlook.com") == Account(unknown: "me@outlook.com"))
        #expect(Set([upn, oid]).count == 1)
    }

    @Test func emptyAndPersonalAreThePersonalIdentity() {
        #expect(tenant.identity(named: "") == .personal)
        #expect(tenant.identity(named: "personal") == .personal)
        #expect(tenant.identity(named: "Personal") == .personal)
    }

    @Test func effectiveIdentityFallsBackThreadThenUIThenProcess() {
        let a = tenant.identity(named: Lab.adele)
        #expect(IdentityContext(thread: .personal, ui: a, process: a).effective(forUIWork: true) == .personal)
        #expect(IdentityContext(thread: nil, ui: a, process: .personal).effective(forUIWork: true) == a)
        #expect(IdentityContext(thread: nil, ui: a, process: .personal).effective(forUIWork: false) == .personal)
        #expect(IdentityContext(thread: nil, ui: nil, process: a).effective(forUIWork: true) == a)
        // Nothing set: a multi-identity app starts unmanaged [doc].
        #expect(IdentityContext().effective(forUIWork: true) == .personal)
    }

    @Test func oneManagedAccountPerApp() {
        var accounts = AppAccounts()
        let adele = tenant.knownAccount(named: Lab.adele)!
        #expect(accounts.enroll(adele) == .newPoliciesReceived)
        #expect(accounts.enroll(tenant.knownAccount(named: Lab.adeleOID)!) == .alreadyEnrolled)
        #expect(accounts.enroll(tenant.knownAccount(named: Lab.ben)!) == .singleManagedAccountMode)
        #expect(EnrollmentStatus.singleManagedAccountMode.rawValue == 227)
        #expect(accounts.enroll(nil) == .nilAccount)
        #expect(accounts.unenroll(tenant.knownAccount(named: Lab.ben)!) == .notEnrolledAccount)
        #expect(accounts.unenroll(adele) == .unenrollmentSuccess && accounts.managed == nil)
    }

    @Test func managedPartyNeedsSDKEnrolledAccountAndPolicy() {
        let lab = Lab(settings: .managedOnly)
        #expect(lab.party("mail", Lab.adele).isManaged)
        #expect(!lab.party("mail", "personal").isManaged)
        #expect(!lab.party("notes", Lab.adele).isManaged)   // no SDK
        #expect(!lab.party("docs", Lab.ben).isManaged)      // no policy for ben
        #expect(lab.party("docs", Lab.adeleOID).isManaged)  // by OID
    }

    @Test func policyViewAnswersForTheCurrentIdentity() {
        let lab = Lab(settings: .with { $0.send = .managedApps; $0.contactSyncBlocked = true; $0.pinRequired = true; $0.notificationRestriction = .block })
        let managed = PolicyView(lab.party("mail"))
        #expect(!managed.isAppSharingAllowed && !managed.isSpotlightIndexingAllowed && !managed.areSiriIntentsAllowed)
        #expect(!managed.isContactSyncAllowed && managed.isPINRequired && managed.notificationPolicy == .block)
        #expect(managed.isFileEncryptionRequired)
        let personal = PolicyView(lab.party("mail", "personal"))
        #expect(personal.isAppSharingAllowed && personal.isContactSyncAllowed && !personal.isPINRequired && !personal.isFileEncryptionRequired)
    }
}
