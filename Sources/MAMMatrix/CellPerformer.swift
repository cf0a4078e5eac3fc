import MAMPolicy
import MAMScript

/// How one cell is performed on a device (MatrixDevice), whichever shell runs it: the parties'
/// apps made to run with their accounts, each acting under its party's identity, the channel's
/// commands sent, what arrived read back, and an Observation turned into the verdict.
public struct CellPerformer: Sendable {
    /// The installed apps by lowercased name and bundle id.
    let manifests: [String: AppManifest]
    let all: [AppManifest]
    let payload: Payload
    /// The payload's digests, as an arrival reports them (worked out once by the shell).
    let documentSHA256: String
    let textSHA256: String

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The key of an app's second process (`keys`).
    public static let secondInstance = "#2"

    /// The app a key names: its bundle id, or the name given, without a second process's mark.
    public static func app(ofKey key: String) -> String {
        key.hasSuffix(secondInstance) ? String(key.dropLast(secondInstance.count)) : key
    }

    /// `apps`: each app's names (its folder name, its bundle id) and manifest.
    public init(apps: [(names: [String], manifest: AppManifest)], payload: Payload, documentSHA256: String, textSHA256: String) {
        var m: [String: AppManifest] = [:]
        for (names, manifest) in apps { for n in names { m[n.lowercased()] = manifest } }
        manifests = m
        all = apps.map(\.manifest)
        self.payload = payload
        self.documentSHA256 = documentSHA256
        self.textSHA256 = textSHA256
    }

    public func manifest(_ app: String) throws -> AppManifest {
        // Keys are mostly lowercased bundle ids already (keys(_:)): looked up as they are first.
        let name = Self.app(ofKey: app)
        guard let m = manifests[name] ?? manifests[name.lowercased()] else { throw Failure(description: "unknown app \(app)") }
        return m
    }

    public func bundle(_ party: PartySpec) throws -> String { try manifest(party.app).bundleID.lowercased() }

    /// The running apps a cell's parties are. Two accounts of one app are one process for a
    /// paste (the pasteboard is the device's: the app copies under one account, switches and
    /// pastes under the other). A document between them needs a second process of the app, as
    /// iOS runs an app's share extension beside the app: the broker routes a share to the
    /// running instance that is not the sender. That instance runs only for its cell, so between
    /// cells every app is one process and a document from another app has one place to go.
    public func keys(_ cell: Cell) throws -> (source: String, target: String?) {
        let source = try bundle(cell.source)
        guard let t = cell.target else { return (source, nil) }
        let target = try bundle(t)
        return (source, target == source && cell.channel.channel.carriesDocument ? target + Self.secondInstance : target)
    }

    /// The cell's apps with their accounts (nil: an app no manifest names), as CellSchedule claims them.
    public func parts(_ cell: Cell) -> [(key: String, accounts: [String])?] {
        guard let k = try? keys(cell) else { return [nil] }
        return [(k.source, cell.source.accounts)] + (cell.target.map { [(k.target!, $0.accounts)] } ?? [])
    }

    /// The apps to start before a device's first cell, with their accounts: every app the
    /// cells name, so that a URL whose handler is a party reaches the running party instead of
    /// making the broker start a second copy. An app whose parties differ in accounts starts
    /// when its cell comes; an account cell starts its own.
    public func upfront(_ cells: [Cell]) -> [String: [String]] {
        var upfront: [String: [String]] = [:], mixed = Set<String>()
        for cell in cells where !cell.channel.channel.isAccountChannel {
            guard let k = try? keys(cell) else { continue }
            for (b, p) in [(k.source, cell.source)] + (cell.target.map { [(k.target!, $0)] } ?? []) where !b.hasSuffix(Self.secondInstance) {
                if let seen = upfront[b], seen != p.accounts { mixed.insert(b) } else { upfront[b] = p.accounts }
            }
        }
        for b in mixed { upfront[b] = nil }
        return upfront
    }

    /// Whether a cell runs alone: an account cell, and a link that may reach an app other than
    /// its target (CellSchedule).
    public func runsAlone(_ cell: Cell) -> Bool {
        cell.channel.channel.isAccountChannel || (cell.channel.channel == .openURL && !routesOnlyToTarget(cell))
    }

    /// Whether a cell's link can reach no app but its target: a scheme only the target handles
    /// (a web link may go to a browser; a scheme two apps take goes to the first one running).
    public func routesOnlyToTarget(_ cell: Cell) -> Bool {
        guard let target = cell.target, let t = try? manifest(target.app) else { return false }
        let url = cell.channel.url ?? Predictor.url(for: t, payload: payload)
        guard let scheme = URLText.scheme(of: url).map({ String($0).lowercased() }), scheme != "http", scheme != "https" else { return false }
        return all.allSatisfy { $0.bundleID.lowercased() == t.bundleID.lowercased() || !$0.handles(scheme: scheme) }
    }

    /// Makes the app act under the party's identity (an SDK app; `none` cannot be gone back to).
    public func act(as party: PartySpec, key: String, on device: MatrixDevice) throws {
        guard try manifest(party.app).integratesSDK, device.accounts(of: key) != nil else { return }
        guard let wanted = party.identity ?? party.accounts.first, wanted.lowercased() != "none" else { return }
        if device.identity(of: key)?.lowercased() == wanted.lowercased() { return }
        let r = try device.call(key, ScriptCommand("identity", [wanted.lowercased() == "personal" ? "" : wanted]))
        if let error = r["error"]?.string { throw Failure(description: "\(party.name): identity \(wanted): \(error)") }
        device.setIdentity(wanted, of: key)
    }

    /// The cell's verdict, and the `decision` object the app was told (nil for the account
    /// channels, judged by the managed state they leave). `mark`: where the broker's records
    /// ended before the cell.
    public func perform(_ cell: Cell, on device: MatrixDevice, mark: UInt64) throws -> (Verdict, told: JSONValue?) {
        if cell.channel.channel.isAccountChannel { return (try account(cell, on: device), nil) }
        let k = try keys(cell)
        defer { if let t = k.target, t.hasSuffix(Self.secondInstance) { device.stop(t) } }
        var wanted: [String: [String]] = [k.source: cell.source.accounts]
        if let t = cell.target { wanted[k.target!] = t.accounts }
        // Keep the other apps running: only the cell's apps must match.
        if wanted.contains(where: { device.accounts(of: $0.key) != $0.value }) { try device.ensure(wanted) }
        // One process for both parties (a paste within an app) acts as the target only once
        // the source has copied.
        let oneProcess = k.target == k.source
        try act(as: cell.source, key: k.source, on: device)
        if let t = cell.target, !oneProcess { try act(as: t, key: k.target!, on: device) }
        let source = k.source
        let target = k.target
        if let target { _ = device.drainEvents(target) }
        let name = "c\(cell.id)-\(payload.documentName)"
        var o = Observation(targetIdentity: target.flatMap { t in cell.target.map { device.identity(of: t) ?? ($0.identity ?? $0.accounts.first ?? "personal") } },
                            payloadSHA256: documentSHA256)
        var routedTo: String?
        func step(_ app: String, _ command: ScriptCommand) throws -> JSONValue {
            let r = try device.call(app, command)
            if let e = r["error"]?.string { o.error = "\(app) \(command.name): \(e)" }
            return r
        }
        switch cell.channel.channel {
        case .send, .receive, .openIn:
            let tb = try manifest(cell.target!.app).bundleID
            let r = try step(source, ScriptCommand("share", [tb, payload.documentType, name, payload.documentContent]))
            o.decision = r["decision"]
            o.arrival = try arrival(target!, "document", delivered: o.decision, on: device)
        case .import:
            let sb = try manifest(cell.source.app).bundleID
            _ = try step(source, ScriptCommand("serve", [payload.documentType, name, payload.documentContent]))
            let r = try step(target!, ScriptCommand("import", [sb, payload.documentType]))
            o.decision = r["decision"]
            o.arrival = try arrival(target!, "document", delivered: o.decision, on: device)
        case .paste:
            _ = try step(source, ScriptCommand("copy", [payload.text]))
            if oneProcess {
                try act(as: cell.target!, key: target!, on: device)
                o.targetIdentity = device.identity(of: target!)
            }
            let r = try step(target!, ScriptCommand("paste"))
            o.decision = r["decision"]
            o.arrival = r
            o.payloadSHA256 = textSHA256
        case .openURL:
            let targetManifest = try manifest(cell.target!.app)
            let url = cell.channel.url ?? Predictor.url(for: targetManifest, payload: payload)
            o.sentURL = url
            let r = try step(source, ScriptCommand("open-url", [url]))
            o.decision = r["decision"]
            // A URL the broker delivers in a scheme the target does not handle (a web link
            // rewritten for the managed browser) goes to another app: nothing to wait for here.
            var towardsTarget = o.decision
            if let delivered = o.decision?["detail"]?.string, let scheme = URLText.scheme(of: delivered).map(String.init),
               !targetManifest.handles(scheme: scheme) {
                towardsTarget = nil
            }
            // Nor for a link the broker routed to another app that takes its scheme (its record,
            // committed before the answer, names the receiver): the cell then fails at once
            // ("nothing arrived") instead of after the arrival's wait.
            if towardsTarget != nil, !routesOnlyToTarget(cell), let receiver = device.urlReceiver(since: mark),
               receiver != targetManifest.bundleID.lowercased() {
                towardsTarget = nil
                routedTo = receiver
            }
            o.arrival = try arrival(target!, "url", delivered: towardsTarget, on: device)
        case .saveTo:
            let (location, account) = cell.channel.locationParts!
            let r = try step(source, ScriptCommand("save", [location, account ?? "-", name, payload.documentContent]))
            o.decision = r["decision"]
        case .openFrom:
            let (location, account) = cell.channel.locationParts!
            guard let open = OpenLocation(name: location), let save = Predictor.saveLocation(for: open) else {
                throw Failure(description: "no save location feeds \(location)")
            }
            let saved = try step(source, ScriptCommand("save", [save.name, account ?? "-", name, payload.documentContent]))
            o.decision = saved["decision"]
            if o.error == nil, let d = saved["decision"], d["allowed"]?.bool == true {
                if oneProcess {
                    try act(as: cell.target!, key: target!, on: device)
                    o.targetIdentity = device.identity(of: target!)
                }
                let r = try step(target!, ScriptCommand("open", [open.name, account ?? "-", name]))
                o.decision = r["decision"]
                o.arrival = r
            }
        case .login, .logout:
            break
        }
        var v = o.verdict(cell.channel.channel)
        if let routedTo { v.note = (v.note.map { $0 + "; " } ?? "") + "the broker routed the link to \(routedTo)" }
        // An arrival may switch the target's identity (the kit shows a document under its
        // owner's identity, a URL under its sender's): the next cell sets it again from what the app says.
        if let target, o.arrival != nil {
            device.setIdentity(o.arrival?["identity"]?.string.map { $0.isEmpty ? "personal" : $0 }, of: target)
        }
        // What arrived after its cell was judged is a leak too: shown on the cell.
        if let target, let stray = device.drainEvents(target).first(where: { $0["event"]?.string == "document" || $0["event"]?.string == "url" }) {
            v.note = (v.note.map { $0 + "; " } ?? "") + "late arrival: \(stray.json.prefix(200))"
            if stray["readable"]?.bool == true { v.arrival = v.arrival ?? Arrival(readable: true) }
        }
        return (v, o.decision)
    }

    /// The target's arrival: waited for when the broker said the data goes through, else looked
    /// for after a round trip to the target (so that a delivery the broker sent anyway is seen).
    func arrival(_ target: String, _ kind: String, delivered decision: JSONValue?, on device: MatrixDevice) throws -> JSONValue? {
        if decision?["allowed"]?.bool == true { return device.event(target, kind, wait: true) }
        _ = try device.call(target, ScriptCommand("hello"))
        return device.event(target, kind, wait: false)
    }

    /// Login/logout: a fresh app with the party's accounts, then the account signed in or out,
    /// then the checked account's policy view. The app is not reused: its accounts changed.
    func account(_ cell: Cell, on device: MatrixDevice) throws -> Verdict {
        let b = try bundle(cell.source)
        device.stop(b)
        try device.ensure([b: cell.source.accounts])
        defer { device.stop(b) }
        var o = Observation()
        let account = cell.account ?? ""
        // A login is the user's: the launcher signs the account in, then the app enrolls it.
        if cell.channel.channel == .login, !account.isEmpty, account.lowercased() != "personal" { try device.signIn(b, account) }
        let r = cell.channel.channel == .login
            ? try device.call(b, ScriptCommand("enroll", [account]))
            : try device.call(b, ScriptCommand("unenroll", [account, "wipe"]))
        o.account = r
        o.decision = r["decision"]
        if let e = r["error"]?.string { o.account = ["error": .string(e)] }
        o.policy = try device.call(b, ScriptCommand("policy", [cell.check ?? account]))
        var v = o.verdict(cell.channel.channel)
        v.rule = r["decision"]?["rule"]?.string ?? Rule.identitySet.id
        return v
    }
}
