import MAMPolicy

/// Answers cells from the engine alone, asking it exactly what the broker asks for the same
/// action (Sources/MAMBrokerCore): the live run and the prediction differ only if the broker
/// or the apps do something the engine did not say.
public struct Predictor: Sendable {
    public let engine: PolicyEngine
    /// An app name (Apps/ folder or bundle id) to its manifest.
    let manifests: [String: AppManifest]
    /// Every app once, as it starts: the handlers a link is routed among (linkOpens).
    let installed: [Party]

    public init(engine: PolicyEngine, apps: [(name: String, manifest: AppManifest)]) {
        self.engine = engine
        var m: [String: AppManifest] = [:]
        for (name, manifest) in apps {
            m[name.lowercased()] = manifest
            m[manifest.bundleID.lowercased()] = m[manifest.bundleID.lowercased()] ?? manifest
        }
        self.manifests = m
        var seen = Set<String>()
        self.installed = apps.map(\.manifest).filter { seen.insert($0.bundleID.lowercased()).inserted }
            .map { engine.party($0, identity: engine.defaultIdentity(for: $0)) }
    }

    public func manifest(_ app: String) -> AppManifest? { manifests[app.lowercased()] }

    /// A problem with a party: unknown app, a refused second managed account.
    public struct PartyProblem: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// The party as the engine sees it (as `mamlaunch explain` builds one): the accounts signed
    /// in decide the enrolled account, the identity decides whether it acts managed.
    public func party(_ spec: PartySpec) throws(PartyProblem) -> Party {
        guard let app = manifest(spec.app) else { throw PartyProblem(description: "party \(spec.name): unknown app \(spec.app)") }
        let identities = spec.accounts.map { engine.tenant.identity(named: $0) }
        let signedIn = app.isMultiIdentity ? identities.compactMap(\.account) : Array(identities.prefix(1).compactMap(\.account))
        let enrolled: Account?
        switch engine.enrollment(of: app, signedIn: signedIn) {
        case let .success(a): enrolled = a
        case let .failure(refusal): throw PartyProblem(description: "party \(spec.name): \(refusal)")
        }
        let alsoPersonal = identities.contains(.personal)
        if spec.identity?.lowercased() == "none" {
            return engine.partyWithNoIdentitySet(app, enrolled: enrolled, personalAccountSignedIn: alsoPersonal)
        }
        guard let name = spec.identity ?? spec.accounts.first else {
            return engine.party(app, identity: engine.defaultIdentity(for: app))
        }
        // An app launched with a user's account enrolled whom its accounts decide, nobody if
        // none is targeted (the broker's rule, SEMANTICS §1); one launched with no user (only
        // the personal account) enrolls on launch as the tenant's device has it.
        let identity = engine.tenant.identity(named: name)
        if identities.contains(where: { $0.account != nil }) {
            return engine.party(app, identity: identity, enrollment: enrolled, personalAccountSignedIn: alsoPersonal)
        }
        return engine.party(app, identity: identity, enrolled: enrolled, personalAccountSignedIn: alsoPersonal)
    }

    /// Whether an open-url cell's link opens in its target: the device routes a URL to one
    /// handler among the installed apps (the engine's routeURL, which the broker asks too), so
    /// a link two browsers take reaches only one of them. True when nothing takes it at all
    /// (the cell shows the link blocked) and for a party the engine refuses (the cell says why).
    public func linkOpens(in cell: Cell, payload: Payload) -> Bool {
        guard cell.channel.channel == .openURL, let spec = cell.target, let target = manifest(spec.app),
              let source = try? party(cell.source) else { return true }
        let url = cell.channel.url ?? Self.url(for: target, payload: payload)
        guard let handler = engine.routeURL(url, from: source, among: installed).target else { return true }
        return handler.bundleID.lowercased() == target.bundleID.lowercased()
    }

    /// The URL a source opens to reach `target`: its first own scheme (not a twin).
    public static func url(for target: AppManifest, payload: Payload) -> String {
        let scheme = target.urlSchemes.first { !$0.hasSuffix(URLText.twinSuffix) } ?? target.urlSchemes.first ?? "unknown"
        return "\(scheme)://\(payload.urlPath)"
    }

    /// The save location a file for `open-from` is put in first: the one whose folder the open
    /// location reads (the broker's mapping), nil for the camera (nothing can be saved there).
    public static func saveLocation(for open: OpenLocation) -> SaveLocation? {
        switch open {
        case .other: return .other
        case .oneDriveForBusiness: return .oneDriveForBusiness
        case .sharePoint: return .sharePoint
        case .localStorage: return .localDrive
        case .photos: return .cameraRoll
        case .accountDocument: return .accountDocument
        case .camera: return nil
        }
    }

    /// The engine's answer for a cell.
    public func predict(_ cell: Cell, payload: Payload) throws(PartyProblem) -> Verdict {
        try predict(cell, payload: payload, source: try party(cell.source),
                    target: try cell.target.map { spec throws(PartyProblem) in try party(spec) })
    }

    /// The engine's answer for a cell whose parties are already built (a campaign builds each
    /// party once, not once per cell: building one is most of a cell's prediction).
    public func predict(_ cell: Cell, payload: Payload, source: Party, target: Party?) throws(PartyProblem) -> Verdict {
        switch cell.channel.channel {
        case .send, .receive, .openIn:
            // The broker decides a share as an Open-in push of the document's type.
            return Verdict(engine.openIn(type: payload.documentType, from: source, to: target!))
        case .import:
            return Verdict(engine.importDocument(type: payload.documentType, from: source, to: target!))
        case .paste:
            return Verdict(engine.paste(PasteboardItem(source: source, text: payload.text), into: target!))
        case .openURL:
            let url = cell.channel.url ?? Self.url(for: target!.app, payload: payload)
            return Verdict(engine.openURL(url, from: source, to: target!))
        case .saveTo:
            let (location, account) = try saveLocation(cell)
            return Verdict(engine.saveTo(location, account: account, owner: source))
        case .openFrom:
            let (open, account) = try openLocation(cell)
            guard let save = Self.saveLocation(for: open) else {
                throw PartyProblem(description: "\(cell.title): nothing can be saved to \(open.name) first; use another open location")
            }
            let saved = engine.saveTo(save, account: account, owner: source)
            guard saved.outcome.delivers else { return Verdict(saved) }
            // The broker keeps the file's owner and rebuilds its party from the app and identity.
            let owner = engine.party(source.app, identity: source.identity)
            return Verdict(engine.openStoredFile(open, account: account, owner: owner, receiver: target!))
        case .login, .logout:
            return try account(cell, source: source)
        }
    }

    /// Whether the cell's source holds org data.
    public func sourceIsManaged(_ cell: Cell) -> Bool {
        (try? party(cell.source))?.isManaged ?? false
    }

    private func saveLocation(_ cell: Cell) throws(PartyProblem) -> (SaveLocation, Account?) {
        guard let (name, account) = cell.channel.locationParts, let l = SaveLocation(name: name) else {
            throw PartyProblem(description: "\(cell.title): no save location")
        }
        return (l, account.flatMap { engine.tenant.identity(named: $0).account })
    }

    private func openLocation(_ cell: Cell) throws(PartyProblem) -> (OpenLocation, Account?) {
        guard let (name, account) = cell.channel.locationParts, let l = OpenLocation(name: name) else {
            throw PartyProblem(description: "\(cell.title): no open location")
        }
        return (l, account.flatMap { engine.tenant.identity(named: $0).account })
    }

    /// Seed 002's login and logout table: the app's one managed account, and whether the
    /// checked account's data is managed afterwards.
    private func account(_ cell: Cell, source: Party) throws(PartyProblem) -> Verdict {
        guard let name = cell.account else { throw PartyProblem(description: "\(cell.title): no account") }
        let app = source.app
        let before = cell.source.accounts.compactMap { engine.tenant.identity(named: $0).account }
        guard let account = engine.tenant.identity(named: name).account else {
            throw PartyProblem(description: "\(cell.title): \(name) is not an account")
        }
        let after = cell.channel.channel == .login ? before + [account] : before.filter { $0 != account }
        let checked = engine.tenant.identity(named: cell.check ?? name)
        switch engine.enrollment(of: app, signedIn: after) {
        case let .failure(refusal):
            // The engine's refusal (SingleManagedAccountMode) is the rule a second managed identity gets.
            var v = Verdict(Decision(.blocked, .identitySecondManaged), managed: false)
            v.message = refusal.description
            return v
        case let .success(enrolled):
            let signedIn = checked.account.map { after.contains($0) } ?? true
            let p = engine.party(app, identity: checked, enrolled: enrolled)
            let d = engine.setIdentity(checked, for: p, signedIn: after)
            return Verdict(d, managed: signedIn && p.isManaged)
        }
    }
}
