import Foundation
import Glibc
import Logging
import MAMPolicy
import MAMWire

/// An app's MAM SDK: its broker connection, identities, policy, channels and the service's
/// managers. Start it once, at launch:
///
///     let app = try await MAMApp.start()
///     let decision = try await app.pasteboard.copy("Q3 forecast")
///
/// An app without the SDK in its manifest gets an unmanaged kit: every policy answer is the
/// unrestricted one and the broker decides its actions as an unmanaged app's.
public final class MAMApp: Sendable {
    let kit: Kit

    public var policyManager: PolicyManager { PolicyManager(kit: kit) }
    public var urls: URLChannel { URLChannel(kit: kit) }
    public var pasteboard: Pasteboard { Pasteboard(kit: kit) }
    public var openIn: OpenIn { OpenIn(kit: kit) }
    public var locations: Locations { Locations(kit: kit) }
    public var enrollment: EnrollmentManager { EnrollmentManager(kit: kit) }
    public var compliance: ComplianceManager { ComplianceManager(kit: kit) }
    public var appConfig: AppConfigManager { AppConfigManager(kit: kit) }
    public var dataProtection: DataProtection { DataProtection(kit: kit) }
    public var fileProtection: FileProtection { FileProtection(kit: kit) }

    /// The implementation file protection uses (by default MAMProtect's: `ProtectFiles`).
    public func setFileProtector(_ protector: any FileProtector) { kit.state.withLock { $0.fileProtector = protector } }

    /// Everything that arrives unasked, in order. One consumer.
    public var events: AsyncStream<MAMEvent> { kit.events }

    /// The bundle id the broker knows this app by.
    public var bundleID: String { kit.state.current.bundleID }
    /// Whether the app runs with the SDK (its manifest has `IntuneMAMSettings`).
    public var integratesSDK: Bool { kit.state.current.integratesSDK }
    public var manifest: AppManifest? { kit.snapshot?.app }
    public var logger: Logger { kit.logger }

    init(kit: Kit) { self.kit = kit }

    /// Connects through `MAMLAB_BROKER_FD`, says hello and takes the policy snapshot. A
    /// multi-identity app starts with no identity set and no policy applied; a single-identity
    /// app's process identity is its enrolled account.
    /// `policyDelegate` is in place before anything the broker sent unasked is handled (a
    /// restart request that came with an enrollment at launch asks it at once).
    public static func start(integratesSDK: Bool = true, policyDelegate: (any PolicyDelegate)? = nil) async throws -> MAMApp {
        try await start(connection: BrokerConnection.fromEnvironment(), integratesSDK: integratesSDK, policyDelegate: policyDelegate)
    }

    /// The same over a connection the caller hands over (tests, the benchmark): the app owns
    /// it from here on. `requestTimeout`: seconds a request waits for the broker's answer
    /// before it throws `timedOut`.
    public static func start(connection: consuming Descriptor, integratesSDK: Bool = true, policyDelegate: (any PolicyDelegate)? = nil,
                             requestTimeout: Double = 60) async throws -> MAMApp {
        return try await start(connection: BrokerConnection(connection, requestTimeout: requestTimeout), integratesSDK: integratesSDK,
                               policyDelegate: policyDelegate)
    }

    static func start(connection: BrokerConnection, integratesSDK: Bool, policyDelegate: (any PolicyDelegate)?) async throws -> MAMApp {
        IdentityScope.carryIntoQueuedWork()
        connection.start()
        let hello = try await connection.request(.hello(minVersion: Wire.version, maxVersion: Wire.version, integratesSDK: integratesSDK))
        guard case let .welcome(_, bundleID, _)? = hello.first?.frame.message else { throw MAMKitError(.unexpectedReply, "hello") }
        var snapshot: PolicySnapshot?
        if integratesSDK {
            do {
                let replies = try await connection.request(.policyRequest)
                if case let .policySnapshot(json)? = replies.first?.frame.message {
                    snapshot = try JSONDecoder().decode(PolicySnapshot.self, from: Data(json.utf8))
                }
            } catch let e as MAMKitError where e.code == .refused(.notAllowed) {
                snapshot = nil
            }
        }
        let handler = snapshot.map { ScrubbingLogHandler.forManifest($0.app) }
            ?? ScrubbingLogHandler(label: "mamkit", verbose: false, scrub: [])
        let sequence = snapshot?.sequence ?? 0
        snapshot?.sequence = nil
        let kit = Kit(connection: connection, logger: Logger(label: "mamkit", factory: { _ in handler }))
        kit.state.withLock { s in
            s.snapshotSequence = sequence
            s.policyDelegate = policyDelegate
            s.bundleID = bundleID
            s.integratesSDK = snapshot != nil
            s.setSnapshot(snapshot)
            s.broker = snapshot?.identity
            if let snap = snapshot, !snap.app.isMultiIdentity {
                s.process = snap.enrolled.map(Identity.account) ?? snap.identity
            }
        }
        kit.logger.info("started", metadata: ["app": "\(bundleID)", "sdk": "\(snapshot != nil)",
                                              "multiIdentity": "\(snapshot?.app.isMultiIdentity ?? false)"])
        if !IdentityScope.carriesIntoPlainQueues {
            kit.logger.warning("queued work does not keep its identity here: this executable does not bind libdispatch's entry points (docs/MAMKIT.md)")
        }
        let app = MAMApp(kit: kit)
        Task { await kit.serve() }
        // Back on the screen it was killed on: that identity again, through the broker and
        // conditional launch, so its policy applies as before (seed 002, "Managed kill").
        if snapshot != nil, let shown = kit.screen.load() {
            let (result, _) = await app.policyManager.setUIIdentity(shown)
            kit.logger.info("UI identity restored", metadata: ["identity": "\(shown)", "result": "\(result)"])
        }
        // A multi-identity app with no identity set is unmanaged (its launch state). The broker
        // has no such state: it would act under the run's account. The nearest it has is the
        // personal identity, also unmanaged, so that is what it is told until the app shows one.
        if let snap = snapshot, snap.app.isMultiIdentity, kit.state.current.ui == nil, snap.identity != .personal {
            _ = try? await kit.setBrokerIdentity(.personal)
        }
        return app
    }

    /// Ends the conversation (`bye`).
    public func stop() { kit.connection.close() }
}

// MARK: What arrives unasked

extension Kit {
    /// The event loop: one frame at a time, in order.
    func serve() async {
        for await incoming in connection.unsolicited {
            await handle(incoming)
        }
        eventSink.finish()
    }

    func handle(_ incoming: Incoming) async {
        let frame = incoming.frame
        switch frame.message {
        case let .urlDelivery(url, sender): await receiveURL(url, sender: sender)
        case let .document(type, name, owner, encrypted):
            let doc = await receive(type: type, name: name, owner: owner, encrypted: encrypted, descriptor: incoming.descriptor, via: .openIn)
            eventSink.yield(.document(doc))
        case let .exportRequest(type): answerExport(frame.id, type: type)
        case let .enrollmentNotice(kind, account, status):
            let notice = EnrollmentNotice(kind: EnrollmentNotice.Kind(rawValue: Int(kind)) ?? .policy, account: account, code: Int(status))
            logger.info("enrollment notice", metadata: ["kind": "\(notice.kind)", "account": "\(account)", "status": "\(status)"])
            let before = registered.mark
            _ = try? await refreshPolicy()
            // An enrollment the service made for the app (at launch, or a retry) registers too,
            // unless the account was signed out since (a notice read after the app unenrolled it),
            // or unenrolled while the policy was being refreshed (the snapshot may predate it).
            if notice.leavesAccountRegistered, let signedIn = snapshot?.signedIn,
               let named = resolve(account).account, signedIn.contains(named) {
                registered.add(account, unlessRemovedSince: before)
            }
            if let d = state.current.enrollmentDelegate {
                switch notice.kind {
                case .enrollment: await d.enrollmentRequest(with: notice)
                case .policy: await d.policyRequest(with: notice)
                case .unenrollment: await d.unenrollRequest(with: notice)
                }
            }
            eventSink.yield(.enrollment(notice))
        case let .signedIn(account):
            // The user signed an account in to this instance: the snapshot's signed-in list
            // changed, and the app may enroll the account now.
            logger.info("account signed in", metadata: ["account": "\(account)"])
            _ = try? await refreshPolicy()
            eventSink.yield(.signedIn(account: account))
        case let .restartRequest(account):
            // The delegate's answer goes back to the broker: false (or no delegate) leaves the
            // restart to the SDK side, which here is the launcher that started the app.
            let itself = await state.current.policyDelegate?.restartApplication() ?? false
            try? connection.send(Frame(id: frame.id, .restartReply(restartsItself: itself)))
            logger.notice("restart asked", metadata: ["account": "\(account)", "restartsItself": "\(itself)"])
            eventSink.yield(.restart(account: account))
        case let .conditionalLaunch(account, action, rule, message, detail):
            await launchChecked(LaunchCheckNotice(account: account, action: LaunchCheckNotice.Action(rawValue: Int(action)) ?? .block,
                                                  rule: rule, message: message, detail: detail))
        case let .wipeRequest(account):
            let done = await wipe(account)
            eventSink.yield(.wipe(account: account, completed: done))
        case let .appConfigChanged(account):
            await state.current.appConfigDelegate?.appConfigDidChange(for: account)
            eventSink.yield(.appConfigChanged(account: account))
        case let .allowedAccounts(restricted, accounts):
            // Sent unasked only when the tenant's list changed (the SDK's notification).
            logger.info("allowed accounts changed", metadata: ["accounts": "\(restricted ? accounts.joined(separator: ",") : "any")"])
            eventSink.yield(.allowedAccountsChanged(restricted ? accounts : nil))
        case let .complianceStatus(account, status, title, message):
            let result = ComplianceResult(account: account, status: ComplianceStatus(rawValue: Int(status)) ?? .serviceFailure,
                                          title: title, message: message)
            await state.current.complianceDelegate?.account(account, hasComplianceStatus: result.status, message: message, title: title)
            _ = try? await refreshPolicy()
            eventSink.yield(.compliance(result))
        default:
            incoming.descriptor.map { _ = close($0) }
            logger.debug("ignored a frame nobody asked for", metadata: ["id": "\(frame.id)"])
        }
    }

    /// A launch check's verdict: a blocked account is hidden (the delegate's `blockAccount`) and
    /// its key forgotten, since the broker withholds its data until a check passes.
    func launchChecked(_ notice: LaunchCheckNotice) async {
        let key = notice.account.lowercased()
        state.withLock { s in
            s.launchChecks[key] = notice
            if notice.action == .block {
                s.blocked[key] = (notice.account, .conditionalLaunchBlocked)
                s.keys = [:]  // asked again; the broker refuses the blocked account's
            } else {
                s.blocked[key] = nil
            }
        }
        logger.notice("launch check", metadata: ["account": "\(notice.account)", "action": "\(notice.action)", "rule": "\(notice.rule)"])
        if notice.action == .block, let d = state.current.policyDelegate {
            _ = await d.blockAccount(notice.account, reason: .conditionalLaunchBlocked)
        }
        eventSink.yield(.launchCheck(notice))
    }

    /// A URL from another app: the twin unwrapped, the sender's account taken from the broker
    /// (never from the URL), and for a multi-identity app a switch to the sender's account
    /// when the delegate allows it.
    func receiveURL(_ delivered: String, sender: String?) async {
        let unwrapped = URLText.unwrap(delivered)
        let url = unwrapped?.url ?? delivered
        // Only a twin carries the sender's identity into the app (SEMANTICS 4.4: under Send =
        // policy-managed apps); a URL sent plainly is no org data and switches nothing.
        if unwrapped != nil, let sender, snapshot?.app.isMultiIdentity == true, state.current.ui != resolve(sender) {
            await switchForArrival(to: sender, reason: .openURL)
        }
        let delivery = URLDelivery(delivered: delivered, url: url, sender: sender, identity: state.current.ui ?? state.current.process)
        logger.info("URL received", metadata: ["url": "\(url)", "sender": "\(sender ?? "none")"])
        if let handler = state.current.urlHandler {
            await IdentityScope.$activitySender.withValue(sender) { await handler(delivery) }
        }
        eventSink.yield(.url(delivery))
    }

    /// The identity a document arrives under when the engine says the app must switch for it
    /// (SEMANTICS 4.2.1: org data of the enrolled account reaching another identity; 4.2.5: a
    /// refused push to a multi-identity app with a personal account); nil when it stays.
    /// Asked of the engine on the app's own party, never decided here.
    func arrivalIdentity(_ snap: PolicySnapshot, owner: String?, via: ReceivedDocument.Via) -> Identity? {
        let party = snap.party(state.current.ui)
        let account = owner.map(snap.account(named:))
        // Data with an owner left a managed sender (the broker names an owner for org data only).
        let d = engine.receive(by: party, owner: account, fromManagedSender: account != nil, mode: via == .import ? .import : .push)
        guard d.outcome == .switched else { return nil }
        return d.receivingIdentity
    }

    /// Asks the delegate, then switches the UI identity (the broker with it); whether the app
    /// now acts under that identity.
    @discardableResult
    func switchForArrival(to account: String, reason: IdentitySwitchReason) async -> Bool {
        let delegate = state.current.policyDelegate
        let answer = await delegate?.identitySwitchRequired(for: account, reason: reason) ?? .success
        guard answer == .success else { return false }
        return await PolicyManager(kit: self).setUIIdentity(account).result == .success
    }

    /// A document that arrived: read (and opened, when encrypted and the kit holds the key),
    /// and for a multi-identity app shown under its owner's identity (personal data under the
    /// personal identity).
    func receive(type: String, name: String, owner: String?, encrypted: Bool, descriptor: Int32?, via: ReceivedDocument.Via) async -> ReceivedDocument {
        let bytes = Documents.take(descriptor)
        var plaintext: [UInt8]? = encrypted ? nil : bytes
        if encrypted { plaintext = await openCiphertext(bytes) }
        var received = bytes
        if let snap = snapshot, snap.app.isMultiIdentity, let arrival = arrivalIdentity(snap, owner: owner, via: via),
           state.current.ui != arrival {
            // The document may arrive only under the identity the engine names: a switch the app
            // refuses (or that fails) means nothing arrives, never the data under the identity it
            // stayed in (seeds 000, 002: the unmanaged account must not receive org data).
            if !(await switchForArrival(to: arrival.account.map { $0.upn ?? $0.name } ?? "", reason: .documentImport)) {
                logger.notice("document dropped: the identity switch it needs was refused",
                              metadata: ["name": "\(name)", "owner": "\(owner ?? "none")", "identity": "\(arrival)"])
                received = []
                plaintext = nil
            }
        }
        logger.info("document received", metadata: ["type": "\(type)", "name": "\(name)", "owner": "\(owner ?? "none")",
                                                    "encrypted": "\(encrypted)", "readable": "\(plaintext != nil)"])
        return ReceivedDocument(contentType: type, name: name, owner: owner, encrypted: encrypted, bytes: received, plaintext: plaintext,
                                via: via, identity: state.current.ui ?? state.current.process)
    }

    /// Another app imports from this one: the document served for the type, sealed.
    func answerExport(_ id: UInt32, type: String) {
        let served = state.withLock { s in s.served[type.lowercased()] ?? s.served.values.first }
        guard let served else {
            logger.warning("an import asked for a type this app does not serve", metadata: ["type": "\(type)"])
            return
        }
        do {
            let fd = try Documents.seal(served.bytes)
            defer { close(fd) }
            try connection.send(Frame(id: id, .exportReply(contentType: type, name: served.name)), descriptor: fd)
        } catch {
            logger.warning("an export could not be sent", metadata: ["error": "\(error)"])
        }
    }

    /// A selective wipe: the app's delegate deletes the account's data; the kit forgets the
    /// account's key and leaves its identity.
    func wipe(_ account: String) async -> Bool {
        let wiped = resolve(account)
        var done = await state.current.policyDelegate?.wipeData(for: account) ?? true
        // The account's files in the app's container go as well.
        if case let .account(a) = wiped {
            do {
                let removed = try fileProtector.removeFiles(ownedBy: FileProtection.owner(.account(a)),
                                                            under: FileManager.default.currentDirectoryPath)
                if !removed.isEmpty { logger.notice("wiped files", metadata: ["count": "\(removed.count)"]) }
            } catch {
                done = false
                logger.warning("the account's files could not all be removed", metadata: ["error": "\(error)"])
            }
        }
        // A wipe unenrolls and deregisters the account (the SDK-API's unenrollment path).
        registered.remove([account, wiped.account.map { $0.upn ?? $0.name } ?? account])
        state.withLock { s in
            s.keys = [:]
            if s.ui == wiped { s.ui = nil }
            if s.process == wiped { s.process = nil }
            if s.broker == wiped { s.broker = .personal }
            // A view that showed the account ends, as the broker ends it: the app sets its
            // windows again.
            if s.uiView?.contains(wiped) == true { s.uiView = nil }
            if s.brokerView?.contains(wiped) == true {
                s.brokerView = nil
                s.broker = .personal
            }
            s.views = s.views.filter { !$0.value.contains(wiped) }
        }
        _ = try? await refreshPolicy()
        logger.notice("wiped", metadata: ["account": "\(account)", "complete": "\(done)"])
        return done
    }
}
