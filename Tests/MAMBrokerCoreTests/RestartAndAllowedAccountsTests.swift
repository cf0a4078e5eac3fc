import MAMBroker
import MAMBrokerCore
import MAMPolicy
import MAMService
import MAMWire
import Testing

/// The restart delegate's answer and the admin's allowed accounts (issue 12, items 1 and 3).
@Suite("Broker core: restarts and allowed accounts")
struct RestartAndAllowedAccountsTests {
    func tenant(allowing names: [String]?) -> Tenant {
        var t = CoreLab.sampleTenant
        t.device.allowedAccounts = names?.map { t.identity(named: $0).account! }
        return t
    }

    @Test func anAppThatDeclinesTheRestartIsRestartedByItsLauncher() {
        var lab = CoreLab()
        let m = lab.launch("com.contoso.mail")
        lab.send(m, .enroll(account: "adele@contoso.com"))
        #expect(lab.received(m).contains { if case .restartRequest = $0.frame.message { return true } else { return false } })
        lab.send(m, .restartReply(restartsItself: false), frameID: 40)
        #expect(lab.restarted == [m])
        #expect(lab.audits.last?.channel == "enrollment.restart" && lab.audits.last?.outcome == "restarted-by-launcher")
        // Answered once: a second answer is out of order and restarts nothing.
        #expect(lab.send(m, .restartReply(restartsItself: false)).error == .outOfOrder)
        #expect(lab.restarted == [m])
    }

    @Test func anAppThatRestartsItselfIsLeftAlone() {
        var lab = CoreLab()
        let m = lab.launch("com.contoso.mail")
        lab.send(m, .enroll(account: "adele@contoso.com"))
        lab.send(m, .restartReply(restartsItself: true))
        #expect(lab.restarted.isEmpty)
        #expect(lab.audits.last?.outcome == "restarts-itself")
    }

    @Test func aRestartAnswerNobodyAskedForIsRefused() {
        var lab = CoreLab()
        let m = lab.launch("com.contoso.mail")
        #expect(lab.send(m, .restartReply(restartsItself: false)).error == .outOfOrder)
        #expect(lab.restarted.isEmpty)
    }

    @Test func anAccountOutsideTheAllowedListIsRefusedWith211AndNotEnrolled() {
        var lab = CoreLab()
        lab.core.reload(tenant(allowing: ["ben@contoso.com"]))
        let m = lab.launch("com.contoso.mail")
        let got = lab.send(m, .enroll(account: "adele@contoso.com"), frameID: 7)
        #expect(got.contains { if case .enrollmentNotice(0, "adele@contoso.com", 211) = $0.frame.message { return true } else { return false } })
        #expect(lab.audits.last?.outcome == "notDeviceAccount")
        #expect(!lab.received(m).contains { if case .restartRequest = $0.frame.message { return true } else { return false } })
    }

    // One state, told one way: Chat started for ben while only adele is allowed hears 211 at
    // launch, and is then not managed by ben's policy (not managed while told it is refused).
    @Test func anAppStartedForAnAccountOutsideTheAllowedListIsNotManagedByIt() {
        var lab = CoreLab(tenant: tenant(allowing: ["adele@contoso.com"]))
        let c = lab.launch("com.example.chat", account: "ben@contoso.com")
        #expect(lab.received(c).contains { if case .enrollmentNotice(0, "ben@contoso.com", 211) = $0.frame.message { return true } else { return false } },
                "\(lab.received(c).map(\.frame.message))")
        let party = lab.core.party(of: c)
        #expect(party?.enrolled == nil && party?.isManaged == false, "\(String(describing: party))")
    }

    @Test func theAllowedListIsAnsweredAndAChangeIsAnnounced() {
        var lab = CoreLab()
        let m = lab.launch("com.contoso.mail"), n = lab.launch("com.example.notes")
        #expect(lab.send(m, .allowedAccountsRequest).map(\.frame.message) == [.allowedAccounts(restricted: false, accounts: [])])
        #expect(lab.send(n, .allowedAccountsRequest).error == .notAllowed)
        let before = lab.received(m).count
        lab.run(lab.core.reload(tenant(allowing: ["adele@contoso.com"])))
        let told = lab.received(m).dropFirst(before).map(\.frame)
        #expect(told.map(\.message) == [.allowedAccounts(restricted: true, accounts: ["adele@contoso.com"])])
        #expect(told.first?.id ?? 0 >= 0x8000_0000, "an unasked message carries a broker id")
        // The same list again announces nothing.
        let after = lab.received(m).count
        lab.run(lab.core.reload(tenant(allowing: ["adele@contoso.com"])))
        #expect(lab.received(m).count == after)
        #expect(lab.received(n).allSatisfy { if case .allowedAccounts = $0.frame.message { return false } else { return true } })
    }
}
