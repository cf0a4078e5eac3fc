import MAMPolicy
import Testing

/// Who is managed inside one app, one row per seed statement.
@Suite("Accounts in an app")
struct AccountsInAnAppTests {
    /// Adele and Ben are both targeted (each by a policy of their own); `enrolledInMail`
    /// is the device's enrollment entry for Mail and Docs, if any.
    static func lab(enrolled: String?) -> Lab {
        var device = Device()
        if let enrolled {
            let probe = Lab(settings: .managedOnly, ben: .managedOnly)
            let account = probe.engine.tenant.knownAccount(named: enrolled)!
            device.enrollments = ["com.contoso.mail": account, "com.contoso.docs": account]
        }
        return Lab(settings: .managedOnly, ben: .managedOnly, device: device)
    }

    struct ManagedRow: Sendable, CustomTestStringConvertible {
        var statement: String
        var deviceEnrollment: String?
        var app: String
        var acting: String
        var managed: Bool
        var testDescription: String { statement }
    }

    static let managedRows: [ManagedRow] = [
        ManagedRow(statement: "seed 002 §Stage 5: other users in a multi-identity app are unmanaged beside the enrolled one",
                   deviceEnrollment: Lab.adele, app: "mail", acting: Lab.ben, managed: false),
        ManagedRow(statement: "seed 002 §Stage 5: other users in a single-identity app are unmanaged beside the enrolled one",
                   deviceEnrollment: Lab.adele, app: "docs", acting: Lab.ben, managed: false),
        ManagedRow(statement: "seed 002 §Stage 5: the enrolled account is the managed identity",
                   deviceEnrollment: Lab.adele, app: "mail", acting: Lab.adele, managed: true),
        ManagedRow(statement: "seed 002 §Stage 5: with the device's entry for Ben, Ben is the managed identity",
                   deviceEnrollment: Lab.ben, app: "mail", acting: Lab.ben, managed: true),
        ManagedRow(statement: "seed 002 §Stage 5: with no device entry, a targeted user signing in is enrolled",
                   deviceEnrollment: nil, app: "docs", acting: Lab.ben, managed: true),
    ]

    @Test(arguments: managedRows)
    func thePolicyFollowsTheEnrolledAccountOnly(_ row: ManagedRow) {
        let lab = Self.lab(enrolled: row.deviceEnrollment)
        let party = lab.party(row.app, row.acting)
        #expect(party.isManaged == row.managed, "\(party) enrolled \(String(describing: party.enrolled))")
        // An unmanaged party is unrestricted: its org data goes anywhere.
        let d = lab.engine.transfer(from: party, to: lab.party("notes"), mode: .push)
        #expect(d.outcome == (row.managed ? .blocked : .allowed), "\(d)")
    }

    struct SignInRow: Sendable, CustomTestStringConvertible {
        var statement: String
        var deviceEnrollment: String?
        var signedIn: [String]
        /// The enrolled account, or the (enrolled, refused) pair of a 227.
        var enrolled: String?
        var refused: String?
        var testDescription: String { statement }
    }

    static let signInRows: [SignInRow] = [
        SignInRow(statement: "seed 002 §Exit criteria, Log in managed first: then an unmanaged account signs in too",
                  deviceEnrollment: nil, signedIn: [Lab.adele, "dana@outlook.com"], enrolled: Lab.adele),
        SignInRow(statement: "seed 002 §Exit criteria, Log in unmanaged first: then a managed account is enrolled",
                  deviceEnrollment: nil, signedIn: ["dana@outlook.com", Lab.adele], enrolled: Lab.adele),
        SignInRow(statement: "seed 002 §Exit criteria, Log in multiple managed: the second managed account is blocked (227)",
                  deviceEnrollment: nil, signedIn: [Lab.adele, Lab.ben], enrolled: Lab.adele, refused: Lab.ben),
        SignInRow(statement: "seed 002 §Exit criteria, Log in multiple managed: the device's enrolled account keeps its place",
                  deviceEnrollment: Lab.adele, signedIn: [Lab.ben, Lab.adele], enrolled: Lab.adele, refused: Lab.ben),
        SignInRow(statement: "seed 002 §Stage 5: a user signed in beside another's enrollment is unmanaged, not refused",
                  deviceEnrollment: Lab.adele, signedIn: [Lab.ben], enrolled: Lab.adele),
        SignInRow(statement: "headers, registerAndEnrollAccount: the same account twice (UPN and OID) is one account",
                  deviceEnrollment: nil, signedIn: [Lab.adele, Lab.adeleOID], enrolled: Lab.adele),
    ]

    @Test(arguments: signInRows)
    func oneManagedAccountPerApp(_ row: SignInRow) {
        let lab = Self.lab(enrolled: row.deviceEnrollment)
        let tenant = lab.engine.tenant
        let accounts = row.signedIn.compactMap { tenant.identity(named: $0).account }
        let result = lab.engine.enrollment(of: Lab.manifest("mail"), signedIn: accounts)
        switch result {
        case let .success(enrolled):
            #expect(row.refused == nil, "expected a refusal of \(row.refused ?? "")")
            #expect(enrolled == row.enrolled.flatMap { tenant.knownAccount(named: $0) })
        case let .failure(refusal):
            #expect(refusal.status == .singleManagedAccountMode && refusal.status.rawValue == 227)
            #expect(refusal.enrolled == tenant.knownAccount(named: row.enrolled ?? "-"))
            #expect(refusal.refused == tenant.knownAccount(named: row.refused ?? "-"))
            // The message names the account that is already enrolled.
            #expect(refusal.description.contains("\(row.enrolled ?? "-") is already enrolled"), "\(refusal)")
        }
    }

    // seed 000 §Switch identities: at launch a multi-identity app runs under an unknown,
    // unmanaged account and no policy is enforced; that is not the personal identity.
    @Test func theLaunchStateIsUnmanagedAndDistinctFromPersonal() {
        let lab = Lab(settings: .managedOnly)
        let launch = lab.engine.partyWithNoIdentitySet(Lab.manifest("mail"))
        let personal = lab.party("mail", "personal")
        #expect(!launch.isManaged && !launch.identityIsSet && launch.identityDescription == "no identity set")
        #expect(personal.identityIsSet && personal.identityDescription == "personal")
        #expect(launch != personal)
        // Its enrolled account is still Adele's (the SDK may ask it to switch to her).
        #expect(launch.enrolled == lab.engine.tenant.knownAccount(named: Lab.adele))
        #expect(!launch.personalAccountSignedIn)
        #expect(PolicyView(launch).isAppSharingAllowed)
        #expect(lab.engine.transfer(from: launch, to: lab.party("notes"), mode: .push).outcome == .allowed)
        // Org data pushed to it makes it switch to the data's account [seed 002 §Switch identities].
        let d = lab.engine.transfer(from: lab.party("docs", Lab.adele), to: launch, mode: .push)
        #expect(d.outcome == .switched && d.receivingIdentity == .account(lab.engine.tenant.knownAccount(named: Lab.adele)!))
        // Once it sets an identity it is an ordinary party.
        var set = launch
        set.identity = .account(lab.engine.tenant.knownAccount(named: Lab.adele)!)
        #expect(set.identityIsSet && set.isManaged)
    }
}
