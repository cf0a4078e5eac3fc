import MAMPolicy
import Testing

@Suite("4.4 open URL")
struct URLTests {
    @Test func managedSenderWrapsTheURLForAManagedTarget() throws {
        let lab = Lab(settings: .managedOnly)
        let d = lab.engine.openURL("contosodocs://open?id=7&x=a b", from: lab.party("mail"), to: lab.party("docs"))
        #expect(d.outcome == .allowed && d.rule == .urlTwinWrapped && d.tag == .chosen)
        let url = try #require(d.url)
        #expect(url.hasPrefix("contosodocs-intunemam://contosodocs%3A%2F%2Fopen%3Fid%3D7%26x%3Da%20b?"))
        let unwrapped = try #require(URLText.unwrap(url))
        #expect(unwrapped.url == "contosodocs://open?id=7&x=a b")
        #expect(unwrapped.upn == Lab.adele)
        #expect(unwrapped.oid == Lab.adeleOID)
        #expect(url.hasSuffix("&com.microsoft.intune.mam.policy=1"))
    }

    @Test func unmanagedTargetsCannotBeReachedWithOrgURLs() {
        let lab = Lab(settings: .managedOnly)
        let d = lab.engine.openURL("notes://new", from: lab.party("mail"), to: lab.party("notes"))
        #expect(d.outcome == .blocked && d.rule == .urlNoTwin)
    }

    @Test func exemptSchemesOpenUnwrapped() {
        let lab = Lab(settings: .managedOnly)
        let d = lab.engine.openURL("SKYPE:echo123?call", from: lab.party("mail"), to: lab.party("chat"))
        #expect(d.outcome == .allowed && d.rule == .sendExemptScheme && d.url == nil)
        // A custom exemption list replaces the default one.
        let custom = Lab(settings: .with { $0.send = .managedApps; $0.exemptedSchemes = ["chat"] })
        #expect(custom.engine.openURL("skype:x", from: custom.party("mail"), to: custom.party("chat")).outcome == .blocked)
        #expect(custom.engine.openURL("chat:x", from: custom.party("mail"), to: custom.party("chat")).outcome == .allowed)
    }

    @Test func exemptionsNeverApplyWhenSendIsNone() {
        let lab = Lab(settings: .with { $0.send = .none })
        #expect(lab.engine.openURL("skype:x", from: lab.party("mail"), to: lab.party("chat")).outcome == .blocked)
    }

    @Test func managedBrowserRewritesWebLinks() {
        let edge = Lab(settings: .with { $0.managedBrowserRequired = true; $0.managedBrowser = .microsoftEdge })
        let d = edge.engine.openURL("https://contoso.com/a", from: edge.party("mail"), to: edge.party("msedge"))
        #expect(d.outcome == .rewritten && d.url == "microsoft-edge-https://contoso.com/a")
        let h = edge.engine.openURL("http://contoso.com/", from: edge.party("mail"), to: nil)
        #expect(h.url == "microsoft-edge-http://contoso.com/")

        let custom = Lab(settings: .with { $0.managedBrowserRequired = true; $0.customBrowserProtocol = "contosobrowser" })
        #expect(custom.engine.openURL("http://a/", from: custom.party("mail"), to: nil).url == "contosobrowser://a/")
        #expect(custom.engine.openURL("https://a/", from: custom.party("mail"), to: nil).url == "contosobrowsers://a/")
        // Personal data is not steered.
        #expect(custom.engine.openURL("https://a/", from: custom.party("mail", "personal"), to: nil).outcome == .allowed)
    }

    @Test func dialerLevels() {
        func open(_ level: DialerLevel, to target: String) -> Decision {
            let lab = Lab(settings: .with { $0.dialer = level; $0.customDialerAppProtocol = "contosodial"; $0.send = .managedApps })
            return lab.engine.openURL("tel:+15551234", from: lab.party("mail"), to: lab.party(target))
        }
        #expect(open(.allApps, to: "chat").outcome == .allowed)
        #expect(open(.managedApps, to: "dialer").outcome == .allowed)
        #expect(open(.managedApps, to: "chat").outcome == .blocked)
        let custom = open(.customApp, to: "dialer")
        #expect(custom.outcome == .rewritten && custom.url == "contosodial:+15551234")
        #expect(open(.blocked, to: "dialer").outcome == .blocked)
    }

    @Test func targetMustRegisterTheDeliveredScheme() {
        let lab = Lab(settings: PolicySettings())
        let d = lab.engine.openURL("contosodocs://x", from: lab.party("notes"), to: lab.party("chat"))
        #expect(d.outcome == .blocked && d.rule == .urlNotHandled)
        #expect(lab.engine.openURL("not a url", from: lab.party("notes"), to: nil).outcome == .blocked)
    }

    @Test func isURLAllowedNeedsTheTwinInTheQueriesList() {
        let lab = Lab(settings: .managedOnly)
        let mail = lab.party("mail")
        #expect(lab.engine.isURLAllowed("contosodocs://x", by: mail).allowed)
        #expect(lab.engine.isURLAllowed("unknownapp://x", by: mail).rule == .urlNotQueried)
        #expect(lab.engine.isURLAllowed("unknownapp://x", by: mail, isKnownManagedAppScheme: true).allowed)
        #expect(lab.engine.isURLAllowed("unknownapp://x", by: lab.party("mail", "personal")).allowed)
    }

    @Test func canOpenURLHonoursTheQueriesList() {
        let lab = Lab(settings: PolicySettings())
        let handlers = Lab.apps
        #expect(lab.engine.canOpenURL("contosodocs://x", from: lab.party("notes"), handledBy: handlers))
        #expect(!lab.engine.canOpenURL("chat://x", from: lab.party("notes"), handledBy: handlers))
        let managed = Lab(settings: .managedOnly)
        #expect(managed.engine.canOpenURL("contosodocs://x", from: managed.party("mail"), handledBy: handlers))
        // Notes does not register a twin: a managed Mail may query it but not reach it.
        #expect(!managed.engine.canOpenURL("notes://x", from: managed.party("mail"), handledBy: handlers))
    }

    @Test func routingFindsTheHandlerOfTheURLAsDelivered() {
        let lab = Lab(settings: .with { $0.send = .managedApps; $0.managedBrowserRequired = true; $0.managedBrowser = .microsoftEdge })
        let everyone = Lab.apps.map { lab.engine.party($0, identity: lab.engine.defaultIdentity(for: $0)) }
        // https is rewritten to Edge's scheme, so Edge takes it, not Chat.
        let web = lab.engine.routeURL("https://contoso.com", from: lab.party("mail"), among: everyone)
        #expect(web.target?.bundleID == "com.microsoft.msedge" && web.decision.outcome == .rewritten)
        // A managed sender reaches Docs through its twin; Notes' scheme has no twin.
        #expect(lab.engine.routeURL("contosodocs://x", from: lab.party("mail"), among: everyone).decision.rule == .urlTwinWrapped)
        #expect(lab.engine.routeURL("notes://x", from: lab.party("mail"), among: everyone).decision.rule == .urlNoTwin)
        let nobody = lab.engine.routeURL("nothing://x", from: lab.party("mail"), among: everyone)
        #expect(nobody.target == nil && nobody.decision.rule == .urlNotHandled)
    }

    /// Two installed browsers both take https: a plain link opens in the system browser (no
    /// SDK), the managed browser gets the policy's rewritten link, and neither depends on the
    /// order the candidates come in (the broker once took the first running handler).
    @Test func aWebLinkOpensInTheDevicesChoiceOfBrowser() {
        let safari = AppManifest(bundleID: "com.apple.mobilesafari", urlSchemes: ["http", "https"])
        let allApps = Lab(settings: .with { $0.send = .allApps })
        let rewriting = Lab(settings: .with { $0.send = .allApps; $0.managedBrowserRequired = true; $0.managedBrowser = .microsoftEdge })
        for (lab, rewrites) in [(allApps, false), (rewriting, true)] {
            let everyone = (Lab.apps + [safari]).map { lab.engine.party($0, identity: lab.engine.defaultIdentity(for: $0)) }
            for candidates in [everyone, everyone.reversed()] {
                let fromManaged = lab.engine.routeURL("https://contoso.com/a", from: lab.party("mail"), among: candidates)
                let fromUnmanaged = lab.engine.routeURL("https://contoso.com/a", from: lab.party("chat"), among: candidates)
                #expect(fromManaged.target?.bundleID == (rewrites ? "com.microsoft.msedge" : "com.apple.mobilesafari"))
                #expect(fromUnmanaged.target?.bundleID == "com.apple.mobilesafari")
                #expect(fromUnmanaged.decision.outcome == .allowed)
            }
        }
    }

    @Test func schemeParsing() {
        #expect(URLText.scheme(of: "https://a") == "https")
        #expect(URLText.scheme(of: "tel:123") == "tel")
        #expect(URLText.scheme(of: "x-y.z+1:") == "x-y.z+1")
        #expect(URLText.scheme(of: "1abc:x") == nil)
        #expect(URLText.scheme(of: "no scheme") == nil)
        #expect(URLText.scheme(of: ":x") == nil)
        #expect(URLText.unwrap("https://not-wrapped") == nil)
    }
}
