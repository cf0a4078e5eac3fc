import MAMPolicy

/// The experiments `mamlaunch matrix` knows by name. Policy paths are relative to the project root.
public enum BuiltIn {
    public static let names = ["default", "exit-criteria"]

    public static func experiment(named name: String) -> Experiment? {
        switch name {
        case "default": return `default`
        case "exit-criteria": return exitCriteria
        default: return nil
        }
    }

    /// The sample apps that have the scripted mode (docs/SCRIPTING.md): what random cells pick from.
    public static let scriptedApps = ["Chat", "Dialer", "Docs", "Edge", "Mail", "Notes"]

    static let adele = "adele@contoso.com"
    static let ben = "ben@contoso.com"
    /// A personal account of the sample tenant's device (`personalAccounts`): never managed.
    static let dana = "dana@outlook.com"

    /// A web link opened in the target: the managed browser's rewrite (managedBrowserToOpenLinksRequired)
    /// shows on it, where the target's own scheme would never be rewritten.
    public static let webLink = ChannelSpec(.openURL, location: "https://contoso.sharepoint.com/sites/finance/q3.pdf")

    /// The sample policies, in the order of the tenant file.
    public static let samplePolicies: [PolicyRef] = [
        "managed-only", "managed-only-filtered", "managed-os-sharing", "locked-down", "allow-all",
        "level1-basic", "level2-enhanced", "level3-high",
    ].map { .file("Policies/contoso/policies/\($0).json") } + [.file("Policies/contoso/policies/debug-managed-only.plist")]

    /// Every channel × the sample policies × managed, personal and unmanaged parties and the browser.
    public static let `default` = Experiment(
        name: "default",
        description: "Every channel between a managed, a personal and an unmanaged party and the browser, under each sample policy: "
            + "Mail signed in as adele and as a personal account (acting as each in turn), Docs as adele, Notes without the SDK, "
            + "Edge as adele; links in each app's own scheme and a web link.",
        parties: [
            PartySpec(name: "Mail (adele)", app: "Mail", accounts: [adele, "personal"], identity: adele),
            PartySpec(name: "Mail (personal)", app: "Mail", accounts: [adele, "personal"], identity: "personal"),
            PartySpec(name: "Docs (adele)", app: "Docs", accounts: [adele]),
            PartySpec(name: "Notes", app: "Notes"),
            PartySpec(name: "Edge (adele)", app: "Edge", accounts: [adele]),
        ],
        channels: [
            ChannelSpec(.openIn), ChannelSpec(.import), ChannelSpec(.paste), ChannelSpec(.openURL), webLink,
            ChannelSpec(.saveTo, location: "dropbox"), ChannelSpec(.saveTo, location: "oneDriveForBusiness:\(adele)"),
            ChannelSpec(.openFrom, location: "localStorage"), ChannelSpec(.openFrom, location: "oneDriveForBusiness:\(adele)"),
        ],
        policies: samplePolicies
    )

    /// Seed 002's exit criteria for a multi-identity app: the send, import and passive-receive
    /// tables (Mail with adele and a personal account, Docs with adele, Notes without the SDK,
    /// Send = Receive = policy-managed apps) and the login/logout table, each with its expected
    /// outcome. Tests/MAMPolicyTests/ExitCriteriaTests.swift asks the engine the same questions.
    public static let exitCriteria: Experiment = {
        let mailA = "Mail (adele)", mailP = "Mail (personal)", docs = "Docs (adele)", notes = "Notes"
        let pushNote = "Through the share sheet the SDK does not refuse the document: it arrives encrypted, so no readable org data reaches the unmanaged app (docs/SEMANTICS.md §4.1.4)."
        func c(_ label: String, _ channel: Channel, _ source: String, _ target: String, _ e: Expectation) -> CellSpec {
            CellSpec(label: label, channel: ChannelSpec(channel), source: source, target: target, expect: e)
        }
        func a(_ label: String, _ channel: Channel, _ source: String, _ account: String, check: String? = nil, _ e: Expectation) -> CellSpec {
            CellSpec(label: label, channel: ChannelSpec(channel), source: source, account: account, check: check ?? account, expect: e)
        }
        return Experiment(
            name: "exit-criteria",
            description: "Seed 002's data-sharing exit criteria (Send = Receive = policy-managed apps) and its login/logout scenarios.",
            parties: [
                PartySpec(name: mailA, app: "Mail", accounts: [adele, "personal"], identity: adele),
                PartySpec(name: mailP, app: "Mail", accounts: [adele, "personal"], identity: "personal"),
                PartySpec(name: docs, app: "Docs", accounts: [adele]),
                PartySpec(name: notes, app: "Notes"),
                PartySpec(name: "Mail (signed out)", app: "Mail", identity: "none"),
                PartySpec(name: "Mail (adele only)", app: "Mail", accounts: [adele]),
                PartySpec(name: "Mail (dana only)", app: "Mail", accounts: [dana]),
                PartySpec(name: "Mail (adele and dana)", app: "Mail", accounts: [adele, dana]),
            ],
            policies: [.file("Policies/contoso/policies/managed-only.json")],
            cells: [
                // Send: Mail pushes.
                c("Managed identity send to unmanaged app: blocked", .send, mailA, notes, Expectation([.blocked, .encrypted], note: pushNote)),
                c("Managed identity send to managed app: allowed", .send, mailA, docs, Expectation(.allowed)),
                c("Unmanaged identity send to managed app: blocked", .send, mailP, docs, Expectation(.blocked)),
                c("Unmanaged identity send to unmanaged app: always allowed", .send, mailP, notes, Expectation(.allowed)),
                // Import: Mail pulls from the source.
                c("Managed identity import from unmanaged app: blocked", .import, notes, mailA, Expectation(.blocked)),
                c("Managed identity import from managed app: allowed", .import, docs, mailA, Expectation(.allowed)),
                c("Unmanaged identity import from managed app: blocked", .import, docs, mailP, Expectation(.blocked)),
                c("Unmanaged identity import from unmanaged app: always allowed", .import, notes, mailP, Expectation(.allowed)),
                // Passive receive: the other app pushes to Mail.
                c("Managed identity receive from unmanaged app: the managed account does not receive it", .receive, notes, mailA,
                  Expectation(.switched, identity: "personal")),
                c("Managed identity receive from managed app: allowed", .receive, docs, mailA, Expectation(.allowed)),
                c("Unmanaged identity receive from managed app: the personal account does not receive it", .receive, docs, mailP,
                  Expectation(.switched, identity: adele)),
                c("Unmanaged identity receive from unmanaged app: always allowed", .receive, notes, mailP, Expectation(.allowed)),
                // Login and logout.
                a("Log in managed first: the managed account's data is managed", .login, "Mail (signed out)", adele,
                  Expectation(.allowed, managed: true)),
                a("Log in managed first: then the unmanaged account's data is not", .login, "Mail (adele only)", dana,
                  Expectation(.allowed, managed: false)),
                a("Log in unmanaged first: the unmanaged account's data is not managed", .login, "Mail (signed out)", dana,
                  Expectation(.allowed, managed: false)),
                a("Log in unmanaged first: then the managed account's data is", .login, "Mail (dana only)", adele,
                  Expectation(.allowed, managed: true)),
                a("Log in multiple managed: a second managed account is refused", .login, "Mail (adele only)", ben,
                  Expectation(.blocked, managed: false)),
                a("Log out managed: the unmanaged account stays, policy still not applied", .logout, "Mail (adele and dana)", adele,
                  check: dana, Expectation(.allowed, managed: false)),
                a("Log out unmanaged: the managed account stays, policy still applied", .logout, "Mail (adele and dana)", dana,
                  check: adele, Expectation(.allowed, managed: true)),
            ]
        )
    }()
}
