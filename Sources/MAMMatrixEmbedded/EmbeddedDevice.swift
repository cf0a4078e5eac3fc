import Crypto
import Foundation
import MAMBrokerCore
import MAMBrokerEmbedded
import MAMMatrix
import MAMPolicy
import MAMScript
import MAMWire

/// A matrix device made of memory: the broker's core in its embedded shell, and each app a
/// model of what the scripted mode reports over MAMKit (docs/SCRIPTING.md). Every decision is
/// the core's; the model does only what the kit does around it, each step asked of the core or
/// of the engine on the app's own policy snapshot as the kit asks: a document read when the
/// broker gives the owner's key, shown under the identity the engine names for it, a twin URL
/// under its sender's. No process, socket, file or clock.
public final class EmbeddedDevice: MatrixDevice {
    public private(set) var broker: EmbeddedBroker
    let manifests: [String: AppManifest]
    var apps: [String: App] = [:]
    /// The engine the kit holds: decisions on a snapshot's parties, never on a tenant.
    let engine = PolicyEngine(tenant: Tenant(name: "snapshot"))

    struct App {
        var session: SessionID
        var manifest: AppManifest
        var accounts: [String]
        /// The identity the runner last set (MatrixDevice.identity).
        var runnerIdentity: String?
        /// The kit's UI identity ("" personal), and its process identity at launch.
        var ui: String?
        var process: String?
        var events: [JSONValue] = []
        var served: [String: (name: String, content: String)] = [:]
        /// Frames of the inbox already looked at.
        var read = 0
        /// An import of its own is under way: a document now is the import's answer.
        var importing = false
        var shown: String? { ui ?? process }
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// A device on `tenant` (the broker's: app groups resolved) with `apps` installed.
    public init(tenant: Tenant, apps: [AppManifest], conditionalAccess: ConditionalAccessSettings? = nil) {
        broker = EmbeddedBroker(tenant: tenant, apps: apps, conditionalAccess: conditionalAccess) { _, _ in false }
        var m: [String: AppManifest] = [:]
        for a in apps { m[a.bundleID.lowercased()] = a }
        manifests = m
    }

    /// The broker takes the next policy's tenant, as a reload; the apps keep running.
    public func reload(_ tenant: Tenant, conditionalAccess: ConditionalAccessSettings? = nil) {
        broker.run(broker.core.reload(tenant, conditionalAccess: conditionalAccess))
        pump()
    }

    // MARK: MatrixDevice

    public func accounts(of key: String) -> [String]? { apps[key]?.accounts }

    public func ensure(_ wanted: [String: [String]]) throws {
        for (key, accounts) in wanted where apps[key] != nil && apps[key]!.accounts != accounts { stop(key) }
        for (key, accounts) in wanted.sorted(by: { $0.key < $1.key }) where apps[key] == nil { try start(key, accounts: accounts) }
    }

    public func stop(_ key: String) {
        guard let app = apps.removeValue(forKey: key) else { return }
        broker.run(broker.core.handle(.disconnected(app.session)))
        pump()
    }

    public func call(_ key: String, _ command: ScriptCommand) throws -> JSONValue {
        guard apps[key] != nil else { throw Failure(description: "\(key) is not running") }
        let result = try perform(key, command)
        pump()
        return result
    }

    public func signIn(_ key: String, _ account: String) throws {
        guard let app = apps[key] else { throw Failure(description: "\(key) is not running") }
        let before = broker.received(app.session).count
        broker.run(broker.core.handle(.signIn(app.session, account: account, secret: nil, sameLauncher: true)))
        let told = broker.received(app.session).dropFirst(before).contains { if case .signedIn = $0.frame.message { true } else { false } }
        pump()
        if !told { throw Failure(description: "\(key): the broker did not sign \(account) in") }
    }

    /// Nothing here happens later: an event is there or it never comes.
    public func event(_ key: String, _ kind: String, wait: Bool) -> JSONValue? {
        guard let i = apps[key]?.events.firstIndex(where: { $0["event"]?.string == kind }) else { return nil }
        return apps[key]!.events.remove(at: i)
    }

    public func drainEvents(_ key: String) -> [JSONValue] {
        defer { apps[key]?.events = [] }
        return apps[key]?.events ?? []
    }

    public func identity(of key: String) -> String? { apps[key]?.runnerIdentity }
    public func setIdentity(_ identity: String?, of key: String) { apps[key]?.runnerIdentity = identity }

    public func recordMark() -> UInt64 { UInt64(broker.audits.count) }

    public func urlReceiver(since mark: UInt64) -> String? {
        broker.audits.dropFirst(Int(mark)).last { $0.channel == "open-url" }?.target?.app.lowercased()
    }

    // MARK: apps

    /// Launched as the launcher launches an app (its first managed account, its personal one),
    /// greeted, its other accounts signed in and enrolled.
    func start(_ key: String, accounts: [String]) throws {
        guard let manifest = manifests[CellPerformer.app(ofKey: key)] else { throw Failure(description: "unknown app \(key)") }
        let sdk = manifest.integratesSDK
        let first = accounts.first { $0.lowercased() != "personal" }
        let personal = accounts.contains { $0.lowercased() == "personal" }
        let session = broker.launch(manifest.bundleID, account: sdk ? first : nil, personal: personal, sdk: sdk)
        apps[key] = App(session: session, manifest: manifest, accounts: accounts, process: sdk ? (first ?? (personal ? "" : nil)) : nil)
        pump()
        for a in accounts where sdk && a != first && a.lowercased() != "personal" {
            try signIn(key, a)
            let r = try call(key, ScriptCommand("enroll", [a]))
            if let error = r["error"]?.string { throw Failure(description: "\(key) enroll \(a): \(error)") }
        }
    }

    /// Sends a request from an app; the frames answering it, once every app has reacted.
    func request(_ key: String, _ message: Message, _ content: String? = nil) -> [EmbeddedShell.Delivered] {
        let session = apps[key]!.session
        let attachment = content.map { broker.document($0) }
        let id = broker.nextFrameID()
        broker.run(broker.core.handle(.frame(session, Frame(id: id, message), attachment)))
        pump()
        return broker.received(session).filter { $0.frame.id == id }
    }

    func perform(_ key: String, _ command: ScriptCommand) throws -> JSONValue {
        let app = apps[key]!
        let args = command.arguments
        func decided(_ frames: [EmbeddedShell.Delivered]) -> JSONValue {
            if let error = frames.error { return ["error": .string("\(error)")] }
            guard let d = frames.decision else { return ["error": "no decision in the broker's answer"] }
            return ["decision": Self.json(d)]
        }
        func word(_ w: String) -> String { w.lowercased() == "personal" ? "" : w }
        switch command.name {
        case "hello":
            return ["app": .string(app.manifest.bundleID), "sdk": .bool(app.manifest.integratesSDK), "identity": JSONValue(app.shown)]
        case "identity":
            let frames = request(key, .setIdentity(account: word(args[0])))
            if let error = frames.error { return ["error": .string("\(error)")] }
            apps[key]!.ui = word(args[0])
            return ["result": "success", "identity": JSONValue(apps[key]!.shown)]
        case "share":
            return decided(request(key, .share(target: args[0], contentType: args[1], name: args[2]), args[3]))
        case "serve":
            apps[key]!.served[args[0].lowercased()] = (args[1], args[2])
            return ["ok": true]
        case "import":
            apps[key]!.importing = true
            defer { apps[key]?.importing = false }
            return decided(request(key, .importRequest(source: args[0], contentType: args[1])))
        case "copy":
            let frames = request(key, .copy(text: args[0], types: ["public.utf8-plain-text"]))
            if let error = frames.error { return ["error": .string("\(error)")] }
            return ["ok": true]
        case "paste":
            let frames = request(key, .paste)
            for f in frames {
                if case let .pasteResult(d, text) = f.frame.message {
                    return ["decision": Self.json(d), "text": .string(text), "sha256": .string(Self.sha256(text))]
                }
            }
            return ["error": .string(frames.error.map { "\($0)" } ?? "no paste result")]
        case "open-url":
            return decided(request(key, .openURL(url: args[0])))
        case "save":
            guard let location = SaveLocation(name: args[0]) else { return ["error": .string("\(args[0]) is not a save location")] }
            return decided(request(key, .saveTo(location: UInt8(location.rawValue), account: args[1] == "-" ? nil : args[1], name: args[2]), args[3]))
        case "open":
            guard let location = OpenLocation(name: args[0]) else { return ["error": .string("\(args[0]) is not an open location")] }
            let frames = request(key, .openFrom(location: UInt8(location.rawValue), account: args[1] == "-" ? nil : args[1], name: args[2]))
            var fields: [String: JSONValue] = ["decision": decided(frames)["decision"] ?? .null, "readable": false, "sha256": .null, "owner": .null]
            if let file = frames.first(where: { if case .file = $0.frame.message { true } else { false } }), case let .file(_, owner) = file.frame.message {
                fields["readable"] = true
                fields["sha256"] = .string(Self.sha256(file.content?.text ?? ""))
                fields["owner"] = JSONValue(owner)
                // Shown under its owner's identity where the engine says the app switches for it.
                switchForArrival(key, owner: owner, mode: .import)
            }
            fields["identity"] = JSONValue(apps[key]!.shown)
            return .object(fields)
        case "enroll", "unenroll":
            let frames = command.name == "enroll" ? request(key, .enroll(account: args[0]))
                : request(key, .unenroll(account: args[0], wipe: args.count > 1 && args[1] == "wipe"))
            if let error = frames.error { return ["error": .string("\(error)")] }
            for f in frames {
                if case .wipeRequest = f.frame.message { return ["wipe": .string(args[0])] }
                if case let .enrollmentNotice(kind, account, status) = f.frame.message {
                    return ["kind": .number(Double(kind)), "account": .string(account), "status": .number(Double(status))]
                }
            }
            return ["error": "no enrollment notice in the broker's answer"]
        case "policy":
            guard let snap = snapshot(key) else { return ["error": "no policy snapshot"] }
            let party = snap.party(args.first.map { snap.identity(named: word($0)) } ?? app.ui.map(snap.identity(named:)))
            return ["managed": .bool(party.isManaged)]
        default:
            throw Failure(description: "the embedded shell does not model the command \(command.name)")
        }
    }

    // MARK: what arrives

    /// Lets every app react to what the broker sent it: an export asked of it answered from what
    /// it serves, a document or a URL turned into the event the scripted mode prints. Until no
    /// app has anything left.
    func pump() {
        var progress = true
        while progress {
            progress = false
            for key in apps.keys.sorted() {
                guard let app = apps[key] else { continue }
                let inbox = broker.received(app.session)
                guard app.read < inbox.count else { continue }
                apps[key]!.read = inbox.count
                progress = true
                for d in inbox[app.read...] { react(key, d) }
            }
        }
    }

    func react(_ key: String, _ d: EmbeddedShell.Delivered) {
        switch d.frame.message {
        case let .exportRequest(type):
            guard let served = apps[key]!.served[type.lowercased()] ?? apps[key]!.served.values.first else { return }
            let attachment = broker.document(served.content)
            broker.run(broker.core.handle(.frame(apps[key]!.session, Frame(id: d.frame.id, .exportReply(contentType: type, name: served.name)), attachment)))
        case let .document(type, name, owner, encrypted):
            let text = d.content?.text ?? ""
            // Ciphertext is read only with the owner's key, which the broker gives or refuses.
            var readable = !encrypted
            if encrypted, apps[key]!.manifest.integratesSDK, let owner {
                readable = request(key, .keyRequest(account: owner)).contains { if case .accountKey = $0.frame.message { true } else { false } }
            }
            let kept = switchForArrival(key, owner: owner, mode: apps[key]!.importing ? .import : .push)
            apps[key]!.events.append(["event": "document", "type": .string(type), "name": .string(name), "owner": JSONValue(owner),
                                      "encrypted": .bool(encrypted), "readable": .bool(readable && kept),
                                      "sha256": .string(Self.sha256(kept ? text : "")), "identity": JSONValue(apps[key]!.shown)])
        case let .urlDelivery(url, sender):
            let app = apps[key]!
            // Only a twin carries its sender's identity into a multi-identity app (§4.4).
            if URLText.unwrap(url) != nil, let sender, app.manifest.integratesSDK, app.manifest.isMultiIdentity, app.ui != sender {
                setUIIdentity(key, sender)
            }
            apps[key]!.events.append(["event": "url", "url": .string(url), "sender": JSONValue(sender), "identity": JSONValue(apps[key]!.shown)])
        default:
            break
        }
    }

    /// A multi-identity SDK app shows arriving data under the identity the engine names for it
    /// (asked on the app's own snapshot, as the kit asks); false when that switch failed, and
    /// nothing arrives.
    @discardableResult
    func switchForArrival(_ key: String, owner: String?, mode: TransferMode) -> Bool {
        guard let app = apps[key], app.manifest.integratesSDK, let snap = snapshot(key), snap.app.isMultiIdentity else { return true }
        let party = snap.party(app.ui.map(snap.identity(named:)))
        let account = owner.map(snap.account(named:))
        let d = engine.receive(by: party, owner: account, fromManagedSender: account != nil, mode: mode)
        guard d.outcome == .switched, let arrival = d.receivingIdentity else { return true }
        if let ui = app.ui, snap.identity(named: ui) == arrival { return true }
        return setUIIdentity(key, arrival.account.map { $0.upn ?? $0.name } ?? "")
    }

    @discardableResult
    func setUIIdentity(_ key: String, _ name: String) -> Bool {
        guard request(key, .setIdentity(account: name)).error == nil else { return false }
        apps[key]!.ui = name
        return true
    }

    func snapshot(_ key: String) -> PolicySnapshot? {
        for f in request(key, .policyRequest) {
            if case let .policySnapshot(json) = f.frame.message { return try? JSONDecoder().decode(PolicySnapshot.self, from: Data(json.utf8)) }
        }
        return nil
    }

    // MARK: the scripted mode's forms

    static func json(_ d: DecisionRecord) -> JSONValue {
        let outcomes = Outcome.allCases
        let outcome = Int(d.outcome) < outcomes.count ? outcomes[Int(d.outcome)] : .blocked
        let tag = d.tag == 0 ? Tag.doc : d.tag == 1 ? .observed : .chosen
        return ["outcome": .string(outcome.rawValue), "allowed": .bool(outcome.delivers), "rule": .string(d.rule), "message": .string(d.message),
                "detail": .string(d.detail), "tag": .string(tag.rawValue), "ruleName": .string(d.ruleName), "decidedAt": .string(d.decidedAt)]
    }

    public static func sha256(_ text: String) -> String {
        Hex.lowercase(SHA256.hash(data: Array(text.utf8)))
    }
}
