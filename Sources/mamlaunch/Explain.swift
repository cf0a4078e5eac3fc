import ArgumentParser
import Foundation
import MAMCatalog
import MAMLauncher
import MAMMatrix
import MAMPolicy

enum Channel: String, ExpressibleByArgument, CaseIterable {
    case send, `import`, receive, paste
    case openURL = "open-url"
    case openIn = "open-in"
    case saveTo = "save-to"
    case openFrom = "open-from"
}

struct Explain: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Answer one sharing decision, or what happens when an app opens, and say why.",
        discussion: """
            The first line ends with the deciding rule and the engine's file and line that \
            chose it (by sendOpenInEncrypted at Sources/MAMPolicy/Decisions/Transfer.swift:LINE); \
            the broker's answers and audit lines carry the same two (ruleName, decidedAt).

            --from is where the data comes from and --to where it goes, for every channel:
              send      --from pushes a document to --to through share (seed 002's
                        "send"; the push the broker carries and the matrix's send cell)
              receive   the same push, seen from --to (seed 002's "passive receive")
              import    --to pulls a document from --from while it runs (seed 002's
                        "import")
              paste     text copied in --from is pasted into --to (needs --text)
              open-url  --from opens --url; --to is the app that handles it (optional:
                        without it, the answer is the SDK's isURLAllowed)
              open-in   the same push as send, named as the share sheet names it
              save-to   --from saves org data to --location
              open-from --to (or --from) opens data from --location

            send, receive, open-in and import carry a document of --type (default \
            \(Payload.defaultDocumentType), the matrix's own), so each answers as the \
            matrix's cell of that channel and the broker's share do: a document for an \
            unmanaged app under "policy-managed apps" travels encrypted (4.1.4).

            With --from-view (or --to-view) the app shows every account listed together in one \
            view (Mail:adele@contoso.com,personal): with one of them managed there, the view is \
            under the lock-down policy, so nothing leaves it and nothing comes in (SEMANTICS \
            §1.view); a view the app may not show is refused with its rule.

            APP is a folder name under Apps/ (Mail), a bundle id (com.contoso.mail), the \
            bundle id of a manifest given with --manifest, or an app no Apps/ folder provides: \
            a catalog entry's name or bundle id (Outlook, com.microsoft.office.outlook) or an \
            app a policy targets, answered as the stand-in the matrix runs (docs/CATALOG.md). \
            ACCOUNT is a UPN, an OID or `personal`; several may be listed with commas: the first is the identity the app \
            acts under now, the others are also signed in (Mail:adele@contoso.com,personal). \
            `none` first says a multi-identity app has set no identity yet, its launch state: \
            unmanaged, without a personal account (Mail:none). Omitted, the app acts under the \
            managed account enrolled in it: the tenant's device.enrollments entry, else the \
            first user a policy targets for the app. An app holds one managed account: a \
            second account that a policy targets is refused (SingleManagedAccountMode, 227), \
            and a tenant user signed in beside the enrolled account is unmanaged there.

            --launch-check answers what happens when --from opens on the device under the \
            account it acts under: the policy's conditional launch checks (iOS, app and SDK \
            minimums, jailbreak, model, threat level, time offline) against the tenant's device \
            profile, changed by --os, --model, --jailbroken, --threat-level and --offline \
            (mamlaunch explain --launch-check --from Outlook --offline 12h1m). The answer is \
            the strongest action among the failing checks, each listed: warn, block or wipe.

            A LOCATION is a save location (oneDriveForBusiness, sharePoint, box, dropbox, \
            googleDrive, localDrive, cameraRoll, accountDocument, other) or an open location \
            (oneDriveForBusiness, sharePoint, camera, localStorage, photos, accountDocument, \
            other), with :ACCOUNT for the ones that belong to an account.
            """
    )

    @OptionGroup var tenantFile: TenantOption

    @Option(help: ArgumentHelp("Apply this policy file's settings to every policy of the tenant, keeping their assignments; a file that names its apps (a Graph export with `apps`) targets those, as in `matrix`.", valueName: "FILE"))
    var policy: String?

    @OptionGroup var catalogFile: CatalogOption

    @Option(help: ArgumentHelp("Where the data comes from.", valueName: "APP[:ACCOUNT]"))
    var from: String?

    @Option(help: ArgumentHelp("Where the data goes.", valueName: "APP[:ACCOUNT]"))
    var to: String?

    @Option(help: ArgumentHelp("How the data moves.", valueName: Channel.allCases.map(\.rawValue).joined(separator: "|")))
    var channel: Channel?

    @Flag(help: "Instead of a channel: what happens when --from opens on the device (the policy's conditional launch checks, docs/SEMANTICS.md §9).")
    var launchCheck = false

    @OptionGroup(title: "The device (--launch-check; each flag changes the tenant's device profile)")
    var device: DeviceOptions

    @Option(help: ArgumentHelp("The app's version, for the policy's app-version minimums (--launch-check; not checked without it).", valueName: "VERSION"))
    var appVersion: String?

    @Option(help: ArgumentHelp("The SDK release the app links (--launch-check).", valueName: "VERSION"))
    var sdkVersion: String = LaunchCheckReport.sdkRelease

    @Flag(help: "--from shows all its listed accounts together in one view (a unified inbox: setUIPolicyAccountIds); with one managed, the lock-down policy applies.")
    var fromView = false

    @Flag(help: "--to shows all its listed accounts together in one view, as --from-view.")
    var toView = false

    @Option(help: "The URL to open (open-url).")
    var url: String?

    @Option(help: ArgumentHelp("The document's content type (send, receive, open-in, import; default \(Payload.defaultDocumentType)).", valueName: "UTI"))
    var type: String?

    @Option(help: ArgumentHelp("The storage location (save-to, open-from).", valueName: "LOCATION[:ACCOUNT]"))
    var location: String?

    @Option(help: "The copied text (paste).")
    var text: String?

    @Option(name: .customLong("manifest"), help: ArgumentHelp("An Info.plist of your own app to know besides Apps/.", valueName: "FILE"))
    var manifests: [String] = []

    @Flag(help: "With open-url and no --to: the twin scheme is a known managed-app scheme (isKnownManagedAppScheme).")
    var knownManagedScheme = false

    @Flag(help: "Print one JSON object: allowed, outcome, rule, ruleName, decidedAt (the engine's file and line), tag, source, message and the details.")
    var json = false

    func validate() throws {
        if launchCheck {
            guard channel == nil else { throw ValidationError("--launch-check answers a launch, not a channel: leave out --channel") }
            guard from != nil, to == nil else { throw ValidationError("--launch-check needs --from (the app that opens) and no --to") }
            return
        }
        guard let channel else { throw ValidationError("give --channel (how the data moves) or --launch-check") }
        switch channel {
        case .send, .import, .receive, .paste, .openIn:
            guard from != nil, to != nil else { throw ValidationError("--channel \(channel.rawValue) needs --from and --to") }
        case .openURL:
            guard from != nil else { throw ValidationError("--channel open-url needs --from") }
        case .saveTo:
            guard from != nil else { throw ValidationError("--channel save-to needs --from (the app saving)") }
        case .openFrom:
            guard from != nil || to != nil else { throw ValidationError("--channel open-from needs --to (the app opening)") }
        }
        if fromView && from == nil { throw ValidationError("--from-view needs --from") }
        if toView && to == nil { throw ValidationError("--to-view needs --to") }
        if channel == .paste && text == nil { throw ValidationError("--channel paste needs --text (its length counts against the character limit)") }
        if channel == .openURL && url == nil { throw ValidationError("--channel open-url needs --url") }
        if (channel == .saveTo || channel == .openFrom) && location == nil {
            throw ValidationError("--channel \(channel.rawValue) needs --location")
        }
    }

    func run() throws {
        if launchCheck { return try runLaunchCheck() }
        let channel = channel!
        let world = try World.load(tenant: tenantFile.tenant, policyOverride: policy, manifests: manifests, catalog: catalogFile.catalog,
                                   standIns: [from, to].compactMap { $0.map(Self.appName) })
        var notes = world.notes
        let source = try from.map { fromView ? try world.viewParty($0, notes: &notes) : try world.party($0, notes: &notes) }
        let target = try to.map { toView ? try world.viewParty($0, notes: &notes) : try world.party($0, notes: &notes) }
        let engine = world.engine

        let decision: Decision
        switch channel {
        case .send, .receive, .openIn:
            // The one push the broker carries between apps: a document through share.
            decision = engine.openIn(type: documentType, from: source!, to: target!)
        case .import:
            decision = engine.importDocument(type: documentType, from: source!, to: target!)
        case .paste:
            decision = engine.paste(PasteboardItem(source: source!, text: text!), into: target!)
        case .openURL:
            if let target {
                decision = engine.openURL(url!, from: source!, to: target)
                // The device opens a link in one app (docs/SEMANTICS.md §4.4), as the broker routes it.
                let installed = world.apps.map { engine.party($0.manifest, identity: engine.defaultIdentity(for: $0.manifest)) }
                if let opens = engine.routeURL(url!, from: source!, among: installed).target,
                   opens.bundleID.lowercased() != target.bundleID.lowercased() {
                    notes.append("on this device the link opens in \(opens.bundleID), not in \(target.bundleID): the device's choice among the apps that take it (docs/SEMANTICS.md §4.4)")
                }
            } else {
                decision = engine.isURLAllowed(url!, by: source!, isKnownManagedAppScheme: knownManagedScheme)
            }
        case .saveTo:
            let (name, account) = split(location!)
            guard let l = SaveLocation(name: name) else {
                throw ValidationError("unknown save location \"\(name)\"; allowed values: \(SaveLocation.allCases.map(\.name).joined(separator: ", "))")
            }
            decision = engine.saveTo(l, account: try world.account(account, notes: &notes), owner: source!)
        case .openFrom:
            let (name, account) = split(location!)
            guard let l = OpenLocation(name: name) else {
                throw ValidationError("unknown open location \"\(name)\"; allowed values: \(OpenLocation.allCases.map(\.name).joined(separator: ", "))")
            }
            decision = engine.openFrom(l, account: try world.account(account, notes: &notes), receiver: (target ?? source)!)
        }

        let report = Report(decision: decision, channel: channel.rawValue, from: source, to: target,
                            ownerSide: channel == .openFrom ? (target ?? source) : source, notes: notes)
        print(json ? report.json() : report.text())
    }

    var documentType: String { type ?? Payload.defaultDocumentType }

    /// The APP of `APP[:ACCOUNT...]`.
    static func appName(_ spec: String) -> String { String(spec.prefix { $0 != ":" }) }

    private func split(_ spec: String) -> (String, String?) {
        guard let colon = spec.firstIndex(of: ":") else { return (spec, nil) }
        return (String(spec[..<colon]), String(spec[spec.index(after: colon)...]))
    }
}
