import Foundation
import MAMPolicy
import MAMService
import MAMWire

/// The broker's decisions and bookkeeping, with no I/O: events in, effects out.
///
/// Like swift-nio's split between NIOCore and NIOPosix, everything here is testable without a
/// process or a socket: the shell (`Broker`) turns sockets, descriptors and finished jobs into
/// `BrokerEvent`s and carries out the `BrokerEffect`s in order. Every reply the core sends about
/// data is an engine decision, and the audit entry for it is emitted with the reply, once the
/// outcome is final (after a save landed, after ciphertext was made, after a started app said
/// hello).
public struct BrokerCore: Sendable {
    public private(set) var engine: PolicyEngine
    /// The tenant's reload count; audit entries carry it.
    public private(set) var revision = 1
    public var limits: BrokerLimits
    /// The installed apps' programs by lower-cased bundle id, as the shell found them: a hand-off
    /// under an installed bundle id is that app only with its digests. An app with no entry here
    /// is taken at the launcher's word (a broker that was told nothing of its apps' programs).
    public var installedPrograms: [String: InstalledProgram] = [:]
    let clock: any BrokerClock
    /// The wall-clock time at which `clock` read zero (the shell's start time): `wallNow`.
    let epoch: Date
    /// The phone the apps run on, for their launch checks: the tenant's profile until
    /// `mamlaunch device set` changes it (held in memory; the tenant file is what lasts).
    public internal(set) var device: DeviceProfile
    /// Sessions whose shown account a launch check blocked (LaunchChecks.swift): kept apart so
    /// that every other request pays one emptiness test.
    var launchBlocked: Set<SessionID> = []
    /// Sign-ins whose password a worker is checking (`checkCredential`), by job.
    var signIns: [Int: PendingSignIn] = [:]
    /// Wrong passwords by account: waits and locks (SignInThrottle).
    var signInThrottle = SignInThrottle()
    var nextSignIn = 1
    /// Installed apps, in catalog order (a URL to an app that is not running is routed among these).
    let catalog: [AppManifest]
    /// The installed apps' folder names (lowercased) and their bundle ids.
    public var appNames: [String: String] = [:]

    var sessions: [SessionID: SessionState] = [:]
    var parties: [SessionID: PartyCache] = [:]
    /// The installed apps as parties, for the tenant revision they were built for.
    var installed: (revision: Int, parties: [Party])?
    var publicConnections = 0
    var pasteboard: Clip?
    var changeCount: UInt32 = 0
    /// Ids of frames the broker starts (urlDelivery, pushed documents, exportRequest): the top
    /// bit is set, so they never collide with an app's own request ids (docs/PROTOCOL.md).
    var nextBrokerFrame: UInt32 = 0x8000_0000
    var pendingImports: [UInt32: PendingImport] = [:]
    /// Apps being started to take a URL, by lower-cased bundle id.
    var launches: [String: PendingLaunch] = [:]
    var files: [StoredFileKey: StoredFile] = [:]
    /// Bytes each app keeps in locations, by lower-cased bundle id.
    var usage: [String: Int] = [:]
    var jobs: [Int: Job] = [:]
    var nextJob = 1
    /// The emulated MAM service's enrollments of this device.
    var service: EnrollmentService
    /// App Protection conditional access, when the tenant has it.
    var compliance: ComplianceManager?
    /// Jobs in flight by lower-cased bundle id: every instance of an app shares its bound.
    var jobsByApp: [String: Int] = [:]
    var jobApps: [Int: String] = [:]
    /// Bytes of saves in flight by lower-cased bundle id: they count against the quota.
    var savingBytes: [String: Int] = [:]
    /// Files with a save in flight: another save or an open of them waits (refused) until it
    /// lands, so no open is decided on an owner that is about to change.
    var writing: Set<StoredFileKey> = []
    /// The last decision site spelled out, and its text: an app asking the same thing again
    /// (a paste after a paste) is decided at the same site, and the text is in its audit record
    /// and its answer.
    var lastSite: (site: DecisionSite, text: String)?

    public init(engine: PolicyEngine, catalog: [AppManifest], clock: any BrokerClock, epoch: Date = Date(timeIntervalSince1970: 0),
                limits: BrokerLimits = BrokerLimits(),
                pasteboard: PasteboardState? = nil, files: [StoredFile] = [], enrollments: [Enrollment] = [],
                pendingWipes: Set<String> = [], signedOut: Set<String> = [], conditionalAccess: ConditionalAccessSettings? = nil) {
        self.engine = engine
        self.compliance = conditionalAccess.map { ComplianceManager(access: ConditionalAccess(tenant: engine.tenant, settings: $0)) }
        // Rows written before accounts were canonical may name a tenant user by object id or in
        // another case: each is the user's UPN from now on, so one account is one row.
        let canonical = enrollments.map { e -> Enrollment in
            var e = e
            e.account = Self.canonicalName(e.account, in: engine.tenant)
            return e
        }
        self.service = EnrollmentService(enrollments: canonical, pendingWipes: pendingWipes, signedOut: signedOut)
        self.catalog = catalog
        self.clock = clock
        self.epoch = epoch
        self.device = engine.tenant.device.profile
        self.limits = limits
        for f in files {
            self.files[f.key] = f
            usage[Self.budgetOf(f), default: 0] += f.size
        }
        if let p = pasteboard { restore(p) }
    }

    /// Takes a new tenant: later decisions see the new policy, earlier ones the old, never a mix.
    /// Returns what the apps must be told (a changed app configuration); a changed policy
    /// reaches them at their next check-in, or at once with `sync`.
    @discardableResult
    public mutating func reload(_ tenant: Tenant, conditionalAccess: ConditionalAccessSettings? = nil) -> [BrokerEffect] {
        let old = engine.tenant
        engine = PolicyEngine(tenant: tenant, apps: catalog)
        if let settings = conditionalAccess {
            let access = ConditionalAccess(tenant: tenant, settings: settings)
            if compliance == nil { compliance = ComplianceManager(access: access) } else { compliance!.reload(access) }
        }
        revision += 1
        if let clip = pasteboard {
            // The copier is kept as it was, under the new policy.
            restore(clip.state)
        }
        var out: [BrokerEffect] = []
        appConfigChanges(from: old, &out)
        allowedAccountsChanges(from: old, &out)
        // A device the tenant file describes anew replaces the one `device set` left.
        if tenant.device.profile != old.device.profile { device = tenant.device.profile }
        checkLaunches(&out)
        return out
    }

    public var connectionCount: Int { sessions.count }

    /// The party a connection is now, as every decision about it sees it (for tests and status).
    public func party(of id: SessionID) -> Party? {
        guard let s = sessions[id] else { return nil }
        // A view of several accounts: the lock-down policy when one of them is managed here.
        let p = partyShowingOne(s)
        return s.view.map(p.showing) ?? p
    }

    /// The party a session is when it shows its one identity.
    func partyShowingOne(_ s: SessionState) -> Party {
        // A personal account is signed in only when the user signed one in (a consumer account
        // as --user, `personal` in the hand-off, or after launch): a multi-identity app has none
        // by itself, so refused org data has no personal identity to land in (4.2.5).
        let p = engine.party(s.manifest, identity: s.identity, enrolled: s.enrolled,
                             personalAccountSignedIn: s.manifest.isMultiIdentity && s.personalSignedIn)
        // The engine falls back to the tenant's default enrollment; an account the user
        // unenrolled or the admin wiped from this app is not it any more (the app's policy
        // objects said managed after an unenrollment, and the broker still enforced it).
        // Nor is an account the user never signed in to this instance: Mail run for dana alone
        // has nobody enrolled, not the tenant's first targeted user [SEMANTICS §1: the enrolled
        // account is the first signed-in targeted account].
        // Nor, in a second instance run for another user, an account beside the one the service
        // enrolled in the app: one managed account per app, and it is the app's enrollment
        // [SEMANTICS §1; seed 002 §Stage 5: the app's other users are unmanaged].
        let appEnrolled = service.enrolledAccount(in: s.manifest.bundleID).flatMap { engine.tenant.identity(named: $0).account }
        // And an account signed in after launch is enrolled once the app enrolls it, not before:
        // the session's enrollment is the one there is.
        if let e = p.enrolled, s.enrolled == nil || appEnrolled.map({ $0 != e }) ?? false {
            return Party(app: p.app, identity: p.identity, enrolled: nil, policy: nil,
                         personalAccountSignedIn: p.personalAccountSignedIn, isMDMManaged: p.isMDMManaged, identityIsSet: p.identityIsSet)
        }
        return p
    }
    public var storedFiles: [StoredFile] { Array(files.values) }

    // MARK: Events

    public mutating func handle(_ event: BrokerEvent) -> [BrokerEffect] {
        var out: [BrokerEffect] = []
        switch event {
        case let .connected(id, peer): connect(id, peer, &out)
        case let .frame(id, frame, attachment): receive(id, frame, attachment, &out)
        case let .badFrame(id, frameID, error):
            if sessions[id] != nil { refuse(id, frameID, error, &out) }
        case let .disconnected(id): disconnect(id, &out)
        case let .stored(job, error): finishSave(job, error, &out)
        case let .opened(job, result): finishOpen(job, result, &out)
        case let .encrypted(job, result): finishEncrypt(job, result, &out)
        case let .startFailed(bundle, reason): failLaunch(bundle.lowercased(), reason, &out)
        case let .exportUndelivered(brokerID): exportUndelivered(brokerID, &out)
        case .tick:
            expireLaunches(&out)
            expireImports(&out)
            enrollmentTick(&out)
            complianceTick(&out)
            launchTick(&out)
        case .sync:
            let running = serviceApps
            tell(service.sync(engine: engine, now: clock.now(), running: running), requester: nil, &out)
        case let .wipe(account, app):
            service.issueWipe(account: Self.canonicalName(account, in: engine.tenant), app: app)
            let running = serviceApps
            var notices: [EnrollmentNotice] = []
            for a in running.sorted() where app == nil || app!.lowercased() == a { notices += service.deliverWipes(app: a, engine: engine, now: clock.now()) }
            tell(notices, requester: nil, &out)
            // Not running: delivered when the app next starts. Persisted either way.
            out.append(persistEnrollments)
        case let .signIn(id, account, secret, sameLauncher):
            signIn(id, account: account, secret: secret, sameLauncher: sameLauncher, &out)
        case let .credentialChecked(job, matches):
            credentialChecked(job, matches: matches, &out)
        }
        return out
    }

    mutating func connect(_ id: SessionID, _ handedOver: Peer, _ out: inout [BrokerEffect]) {
        var peer = handedOver
        var developer = false
        // The installed identity is the installed program's: another program under an installed
        // manifest (a symbolic link to it, `--manifest Apps/Mail/Info.plist -- anything`) is an
        // unknown app, or, when the user said --developer, the app without its key.
        if peer.fromLauncher, let expected = installedPrograms[peer.bundleID.lowercased()],
           engine.apps[peer.bundleID.lowercased()]?.bundleID == peer.bundleID, !expected.matches(peer) {
            if peer.developer {
                developer = true
                out.append(.log(LogLine(level: .notice, message: "a developer's program runs under an installed app's manifest; it gets no account key",
                                        metadata: ["bundleId": peer.bundleID, "pid": "\(peer.pid)"])))
            } else {
                out.append(.log(LogLine(level: .warning, message: "the program is not the installed app's build; it runs as an unknown app",
                                        metadata: ["bundleId": peer.bundleID, "pid": "\(peer.pid)",
                                                   "executableDigest": peer.executableDigest ?? "none"])))
                peer.bundleID = "unknown.pid\(peer.pid)"
            }
        }
        if peer.fromLauncher && !NameRules.isBundleID(peer.bundleID) {
            out.append(.log(LogLine(level: .warning, message: "launcher handed over an app with an invalid bundle id; refused",
                                    metadata: ["bundleId": peer.bundleID, "pid": "\(peer.pid)"])))
            out.append(.close(id, reason: "invalid bundle id"))
            return
        }
        if !peer.fromLauncher {
            guard publicConnections < limits.publicConnections else {
                out.append(.log(LogLine(level: .warning, message: "public socket full; connection refused",
                                        metadata: ["pid": "\(peer.pid)", "limit": "\(limits.publicConnections)"])))
                out.append(.close(id, reason: "too many connections on the public socket"))
                return
            }
            publicConnections += 1
        }
        let manifest = peer.fromLauncher ? manifest(for: peer.bundleID) : AppManifest(bundleID: peer.bundleID)
        let signedInAccount = peer.account.flatMap { engine.tenant.identity(named: $0).account }
        let identity = signedInAccount.map(Identity.account) ?? engine.defaultIdentity(for: manifest)
        var s = SessionState(id: id, peer: peer, manifest: manifest, identity: identity)
        s.developer = developer
        if peer.fromLauncher {
            // `personal` in the hand-off, `--user personal`, or an account the tenant does not know.
            s.personalSignedIn = peer.personal
                || peer.account.map { engine.tenant.identity(named: $0).account.map { $0.userIndex == nil } ?? true } ?? false
        }
        let probe = engine.party(manifest, identity: identity)
        // The app's enrollment when an instance made one; else the tenant's for this launch.
        let appEnrolled = manifest.integratesSDK ? service.enrolledAccount(in: manifest.bundleID).flatMap { engine.tenant.identity(named: $0).account } : nil
        s.enrolled = appEnrolled ?? probe.enrolled
        // Signed in is the user's act, never the app's: the launcher's `--user` (which also signs
        // an account the user had signed out back in), else the account the tenant enrolls in the
        // app by default, unless the user signed it out of this app (an unenrollment, a wipe).
        // With a `--user`, the default account is not signed in: the app has the user's account
        // only [SEMANTICS §1: the enrolled account is the first signed-in targeted account].
        if let signedInAccount {
            s.signedIn = [signedInAccount]
            if peer.fromLauncher, manifest.integratesSDK, service.signIn(app: manifest.bundleID, account: Self.canonicalName(signedInAccount)) {
                out.append(persistEnrollments)
            }
        } else if let enrolled = probe.enrolled, !service.isSignedOut(app: manifest.bundleID, account: Self.canonicalName(enrolled)) {
            s.signedIn = [enrolled]
        }
        // Enrolled only with an account signed in here (see `party(of:)`).
        if let e = s.enrolled, !s.signedIn.contains(e) { s.enrolled = nil }
        sessions[id] = s
        out.append(.log(LogLine(level: .info, message: "app connected", metadata: [
            "app": peer.bundleID, "pid": "\(peer.pid)", "session": "\(id)", "identity": "\(identity)", "managed": "\(probe.isManaged)",
        ])))
    }

    mutating func disconnect(_ id: SessionID, _ out: inout [BrokerEffect]) {
        guard let s = sessions.removeValue(forKey: id) else { return }
        parties[id] = nil
        launchBlocked.remove(id)
        if !s.peer.fromLauncher { publicConnections -= 1 }
        // Imports waiting on this app as their source end now, and say so; its own end silently.
        // An import whose importer left stays until its source answers (the answer is then
        // dropped), so a source is never punished for answering the broker's own request.
        for (key, p) in pendingImports where p.source == id {
            pendingImports[key] = nil
            if !p.abandoned, sessions[p.requester] != nil {
                sessions[p.requester]!.pendingImports -= 1
                out.append(.send(p.requester, Frame(id: p.frameID, .error(code: .unknownTarget, detail: "\(s.bundleID) went away before it exported"))))
            }
        }
        out.append(.log(LogLine(level: .info, message: "app disconnected", metadata: ["app": s.bundleID, "pid": "\(s.peer.pid)", "session": "\(id)"])))
    }

    // MARK: Frames

    mutating func receive(_ id: SessionID, _ frame: Frame, _ attachment: Attachment?, _ out: inout [BrokerEffect]) {
        // Not `sessions[id] != nil` and `sessions[id]!.…`: the first copies the session out (every
        // field retained), the second moves it out and back, per frame; `values[slot]` changes it
        // where it is.
        guard let slot = sessions.index(forKey: id) else {
            attachment.map { out.append(.release(attachment: $0.token)) }
            return
        }
        do {
            try sessions.values[slot].conversation.accept(frame, hasDescriptor: attachment != nil)
        } catch {
            attachment.map { out.append(.release(attachment: $0.token)) }
            refuse(id, frame.id, error, &out)
            return
        }
        if case .bye = frame.message {
            disconnect(id, &out)
            out.append(.close(id, reason: "bye"))
            return
        }
        if let refusal = launchRefusal(id, frame.message) {
            attachment.map { out.append(.release(attachment: $0.token)) }
            refuse(id, frame.id, refusal, &out)
            return
        }
        var retained = false
        let result = dispatch(frame, attachment, from: id, retained: &retained, &out)
        if let attachment, !retained { out.append(.release(attachment: attachment.token)) }
        if case let .failure(e) = result { refuse(id, frame.id, e, &out) }
    }

    /// Sends an error; a protocol error (codes 1–11) also closes the connection, a refused
    /// request (12 and up) does not (docs/PROTOCOL.md, "Order and errors").
    mutating func refuse(_ id: SessionID, _ frameID: UInt32, _ e: WireError, _ out: inout [BrokerEffect]) {
        guard let s = sessions[id] else { return }
        // A detail may repeat what the app sent; it is cut to fit any client's text limit.
        out.append(.send(id, Frame(id: frameID, .error(code: e.code, detail: Self.fitting(e.detail)))))
        // Logged, but not line for line: an app that floods refused requests must not make the
        // broker spend its time, and the disk, writing about it. The first ten are logged, then
        // every tenfold count, each saying how many there have been.
        sessions[id]!.refusals += 1
        let n = sessions[id]!.refusals
        if n <= 10 || Self.isPowerOfTen(n) {
            out.append(.log(LogLine(level: .notice, message: "request refused", metadata: [
                "app": s.bundleID, "pid": "\(s.peer.pid)", "error": Self.fitting(e.description), "refusals": "\(n)",
            ])))
        }
        if e.code.closesConnection {
            disconnect(id, &out)
            out.append(.close(id, reason: e.description))
        }
    }

    mutating func dispatch(_ frame: Frame, _ attachment: Attachment?, from id: SessionID, retained: inout Bool,
                           _ out: inout [BrokerEffect]) -> Result<Void, WireError> {
        switch frame.message {
        case let .hello(_, _, sdk): greet(id, frame.id, sdk: sdk, &out)
        case let .setIdentity(account):
            // Showing a managed account runs its launch checks (SDK-API §2: conditional launch).
            let result = setIdentity(id, frame.id, account, &out)
            if case .success = result { checkLaunch(id, &out) }
            return result
        case let .setViewIdentities(accounts): return setViewIdentities(id, frame.id, accounts, &out)
        case let .canOpenURL(url):
            let handlers = catalog + sessions.values.map(\.manifest)
            out.append(.send(id, Frame(id: frame.id, .canOpenURLResult(engine.canOpenURL(url, from: party(id), handledBy: handlers)))))
        case let .openURL(url): return openURL(id, frame.id, url, &out)
        case let .copy(text, types): return copy(id, frame.id, text, types, &out)
        case .paste: paste(id, frame.id, &out)
        case let .listTargets(type): return listTargets(id, frame.id, type, &out)
        case let .share(target, type, name):
            return share(id, frame.id, target: target, type: type, name: name, attachment!, retained: &retained, &out)
        case let .importRequest(source, type): return importRequest(id, frame.id, source: source, type: type, &out)
        case let .exportReply(type, name):
            return exported(id, frame.id, type: type, name: name, attachment!, retained: &retained, &out)
        case let .saveTo(location, account, name):
            return save(id, frame.id, location: location, account: account, name: name, attachment!, retained: &retained, &out)
        case let .openFrom(location, account, name):
            return open(id, frame.id, location: location, account: account, name: name, &out)
        case let .enroll(account): return enroll(id, frame.id, account: account, &out)
        case .loginAndEnroll: return loginAndEnroll(id, frame.id, &out)
        case let .unenroll(account, wipe): return unenroll(id, frame.id, account: account, wipe: wipe, &out)
        case let .restartReply(itself): return restartReply(id, frame.id, restartsItself: itself, &out)
        case .allowedAccountsRequest: return allowedAccountsRequest(id, frame.id, &out)
        case let .appConfigRequest(account): return appConfig(id, frame.id, account: account, &out)
        case let .acquireToken(account): return acquireToken(id, frame.id, account: account, &out)
        case let .remediateCompliance(account, silent): return remediate(id, frame.id, account: account, silent: silent, &out)
        case let .remediationInProgress(account): return remediationProgress(id, frame.id, account: account, &out)
        case .policyRequest: return policySnapshot(id, frame.id, &out)
        case let .keyRequest(account): return keyRequest(id, frame.id, account: account, &out)
        default:
            return .failure(WireError(.outOfOrder, "unexpected message"))
        }
        return .success(())
    }

    // MARK: Parties

    /// The installed app's manifest for a bundle id spelled exactly as installed; anything else
    /// (another spelling included) is an app the broker does not know, and unmanaged.
    func manifest(for bundleID: String) -> AppManifest {
        guard let m = engine.apps[bundleID.lowercased()], m.bundleID == bundleID else { return AppManifest(bundleID: bundleID) }
        return m
    }

    mutating func party(_ id: SessionID) -> Party { cached(id).party }

    /// The party and its audit form, built once per identity and tenant revision and kept in a
    /// side table of immutable objects: a lookup costs one retain, where copying the session
    /// (its manifest) per decision cost more than the decision.
    mutating func cached(_ id: SessionID) -> (party: Party, audit: AuditEntry.Party) {
        if let c = parties[id], c.revision == revision { return (c.party, c.audit) }
        let p = party(of: id)!
        let c = PartyCache(revision: revision, party: p,
                           audit: AuditEntry.Party(app: p.bundleID, identity: p.identity.description, managed: p.isManaged))
        parties[id] = c
        return (c.party, c.audit)
    }

    mutating func auditParty(_ id: SessionID) -> AuditEntry.Party { cached(id).audit }

    /// The running apps the MAM service speaks to: greeted and with the SDK, so an installed
    /// app's manifest in its exact spelling. An unknown app whose bundle id is an installed one
    /// in another spelling is not that app: it counts as nothing running, hears none of the
    /// service's notices, and takes no wipe meant for the installed app.
    public var serviceApps: Set<String> {
        Set(sessions.values.filter { $0.conversation.greeted && $0.manifest.integratesSDK }.map { $0.bundleID.lowercased() })
    }

    /// The instances of `app` that hear the MAM service (see `serviceApps`), oldest first.
    func serviceInstances(of app: String) -> [SessionID] {
        let key = app.lowercased()
        return sessions.values.filter { $0.conversation.greeted && $0.manifest.integratesSDK && $0.bundleID.lowercased() == key }.map(\.id).sorted()
    }

    /// The running app with exactly this bundle id that said hello first (not `except`). Bundle
    /// ids are exact: another spelling of an installed app's id names an app that is not
    /// running (so `unknownTarget`), and must not take what is sent to the installed one.
    func running(_ bundleID: String, except: SessionID? = nil) -> SessionID? {
        sessions.values.filter { $0.conversation.greeted && $0.id != except && $0.bundleID == bundleID }.map(\.id).min()
    }

    /// The installed app a person or an app names, found as `mamlaunch run` finds it: its
    /// `Apps/` folder name or its bundle id, in any case. Always the installed app's own
    /// spelling, so a running app whose bundle id is another spelling of an installed one's
    /// (KeyAttackTests) never answers to it; any other name is left as it is (an app that is
    /// not installed answers to its exact bundle id only).
    public func installedBundleID(named name: String) -> String {
        let key = name.lowercased()
        // The bundle id first: a folder named as another app's id must not take its place.
        return engine.apps[key]?.bundleID ?? appNames[key] ?? name
    }

    /// Why `name` names no running app, in words that say which: an installed app that is not
    /// running, or no app at all (issue 22: "docs.contoso is not running" while Docs ran), then
    /// with the installed app it looks like: another spelling of its bundle id, its name, or
    /// the parts of its bundle id in another order.
    func notRunning(_ name: String) -> String {
        if catalog.contains(where: { $0.bundleID == name }) { return "\(name) is not running" }
        let wanted = name.lowercased()
        let parts = Set(wanted.split(separator: ".").map(String.init))
        let like = catalog.first { app in
            let id = app.bundleID.lowercased()
            return id == wanted || app.displayName.lowercased() == wanted
                || (!parts.isEmpty && parts.isSubset(of: Set(id.split(separator: ".").map(String.init))))
        }
        let hint = like.map { "; did you mean \($0.bundleID) (\($0.displayName))?" } ?? ""
        return "no installed app has the bundle id \(name)\(hint)"
    }

    mutating func brokerFrameID() -> UInt32 {
        nextBrokerFrame = nextBrokerFrame == UInt32.max ? 0x8000_0000 : nextBrokerFrame + 1
        return nextBrokerFrame
    }

    mutating func newJob(_ job: Job, app: String) -> Int {
        let n = nextJob
        nextJob += 1
        jobs[n] = job
        jobApps[n] = app.lowercased()
        jobsByApp[app.lowercased(), default: 0] += 1
        return n
    }

    mutating func takeJob(_ n: Int) -> Job? {
        guard let job = jobs.removeValue(forKey: n) else { return nil }
        if let app = jobApps.removeValue(forKey: n) { jobsByApp[app, default: 1] -= 1 }
        return job
    }

    /// Whose bounds a session spends: its app's (every instance together); every process on
    /// the public socket shares one, so a new process is no new quota.
    func budget(_ id: SessionID) -> String {
        let s = sessions[id]!
        return s.peer.fromLauncher && !s.bundleID.hasPrefix("unknown.pid") ? s.bundleID.lowercased() : "unknown apps"
    }

    /// The budget a stored file counts against (as `budget(_:)` for the app that saved it).
    static func budgetOf(_ f: StoredFile) -> String {
        f.app.hasPrefix("unknown.pid") ? "unknown apps" : f.app.lowercased()
    }

    /// Whether the app of this session may start another job.
    func mayStartJob(_ id: SessionID) -> Bool {
        (jobsByApp[budget(id)] ?? 0) < limits.jobsPerApp
    }

    /// The entry for a decision, with the parties as the broker established them.
    /// The audit entry of a decision. Static, and given the revision: an instance method called
    /// with `auditParty(_:)` (which is mutating) among its arguments made Swift copy the whole
    /// core first, every field retained and released, on every audited decision.
    static func entry(_ d: Decision, revision: Int, session: SessionID, request: UInt32, channel: String, source: AuditEntry.Party,
                      target: AuditEntry.Party?, type: String? = nil, size: Int? = nil, url: String? = nil, site: String? = nil) -> AuditEntry {
        // An open-url entry always names its URL: as the engine rewrote it, else as asked (an
        // unmanaged sender's URL is not rewritten, and was audited without one).
        let detail = d.url ?? url ?? d.receivingIdentity?.description ?? d.deliveredType
        return AuditEntry(session: session, request: request, channel: channel, source: source, target: target, dataType: type, size: size,
                          outcome: d.outcome.rawValue, rule: d.rule.id, tag: d.tag.rawValue, detail: detail, revision: revision,
                          ruleName: d.rule.rawValue, decidedAt: site ?? d.site.description)
    }

    public static func isPowerOfTen(_ n: Int) -> Bool {
        var v = n
        while v >= 10 && v % 10 == 0 { v /= 10 }
        return v == 1
    }

    /// Text cut at a character boundary to at most 1,024 bytes (well inside `Wire.maximumText`).
    static func fitting(_ text: String) -> String {
        guard text.utf8.count > 1024 else { return text }
        var out = ""
        for c in text where out.utf8.count + c.utf8.count <= 1020 { out.append(c) }
        return out + "…"
    }

    /// The outcomes in their wire order, made once: `allCases` builds a new array at each call.
    static let outcomes = Outcome.allCases
    /// An outcome as it travels: the wire's table spells the engine's outcomes in their order.
    public static func wireOutcome(_ o: Outcome) -> WireOutcome {
        WireOutcome(rawValue: UInt8(outcomes.firstIndex(of: o)!))!
    }

    /// `d.site.description`, spelled once per site in a row rather than once per decision.
    mutating func siteText(_ d: Decision) -> String {
        // The same site is the same literal: one pointer compare, not the path byte by byte.
        if let last = lastSite, last.site.line == d.site.line,
           last.site.filePath.hasPointerRepresentation && d.site.filePath.hasPointerRepresentation
               && last.site.filePath.utf8Start == d.site.filePath.utf8Start || last.site == d.site {
            return last.text
        }
        let text = d.site.description
        lastSite = (d.site, text)
        return text
    }

    /// A decision as it travels. `site`: `d.site.description` when the caller has it already
    /// (a decision both audited and answered spells its site once).
    static func record(_ d: Decision, site: String? = nil) -> DecisionRecord {
        let detail = d.url ?? d.receivingIdentity?.description ?? d.deliveredType ?? ""
        return DecisionRecord(allowed: d.allowed, outcome: Self.wireOutcome(d.outcome).rawValue, rule: d.rule.id,
                              tag: d.tag == .doc ? 0 : d.tag == .observed ? 1 : 2, message: d.message, detail: detail,
                              ruleName: d.rule.rawValue, decidedAt: site ?? d.site.description)
    }

    /// The pid the launcher handed a session over with (the shell matches sign-ins to it).
    public func pid(of id: SessionID) -> Int32? { sessions[id]?.peer.pid }

    /// The user signed `account` in to this instance after launch: it may now be enrolled, and
    /// its key, token and configuration follow as for `--user`; a sign-out is undone.
    mutating func signIn(_ id: SessionID, account: String, secret: String?, sameLauncher: Bool, _ out: inout [BrokerEffect]) {
        guard let s = sessions[id], s.peer.fromLauncher, case let .account(acct) = engine.tenant.identity(named: account),
              NameRules.check(account, field: "account") == nil else {
            out.append(.log(LogLine(level: .warning, message: "sign-in refused: no such app, or not an account",
                                    metadata: ["session": "\(id)", "account": account])))
            return
        }
        // The launcher that started the app speaks for its user; anyone else proves the user
        // with the account's credential. A secret given is checked either way, on a worker: a
        // slow hash on the loop would stall every app.
        if secret != nil || !sameLauncher {
            let name = Self.canonicalName(acct)
            switch signInThrottle.verdict(for: name, now: clock.now()) {
            case .allowed: break
            case .checking:
                throttled(id, acct, "another sign-in of \(name) is being checked; try again when it is answered", &out)
                return
            case let .wait(left):
                throttled(id, acct, "too many wrong passwords for \(name); try again in \(SignInThrottle.words(left))", &out)
                return
            case let .locked(left):
                throttled(id, acct, "\(name) is locked after \(SignInThrottle.lockAfter) wrong passwords in a row; try again in \(SignInThrottle.words(left))", &out)
                return
            }
            let stored = acct.userIndex.flatMap { engine.tenant.users[$0].credential }
            guard let secret, let stored else {
                badCredential(id, acct, &out)
                return
            }
            let job = nextSignIn
            nextSignIn += 1
            signIns[job] = PendingSignIn(session: id, account: acct, pid: s.peer.pid)
            signInThrottle.started(name)
            out.append(.log(LogLine(level: .info, message: "sign-in: checking the password",
                                    metadata: ["session": "\(id)", "account": Self.canonicalName(acct)])))
            out.append(.checkCredential(job: job, stored: stored, secret: secret))
            return
        }
        signedIn(id, acct, &out)
    }

    /// A worker checked a sign-in's password: the account is signed in, or the attempt audited.
    /// An app that left (or a session id reused by another) meanwhile signs nobody in.
    mutating func credentialChecked(_ job: Int, matches: Bool, _ out: inout [BrokerEffect]) {
        guard let p = signIns.removeValue(forKey: job) else { return }
        let name = Self.canonicalName(p.account)
        guard let s = sessions[p.session], s.peer.pid == p.pid else {
            // A wrong password counts even when the app left meanwhile (leaving would otherwise
            // be a way to guess for free).
            if matches { signInThrottle.abandoned(name) } else { _ = signInThrottle.failed(name, now: clock.now()) }
            return
        }
        if matches {
            signInThrottle.succeeded(name)
            signedIn(p.session, p.account, &out)
        } else {
            badCredential(p.session, p.account, &out)
        }
    }

    /// An attempt refused before its password was looked at (SignInThrottle), audited.
    mutating func throttled(_ id: SessionID, _ acct: Account, _ why: String, _ out: inout [BrokerEffect]) {
        out.append(.audit(AuditEntry(session: id, request: 0, channel: "signIn", source: auditParty(id), target: nil, dataType: nil,
                                     size: nil, outcome: "throttled", rule: "1.identity", tag: "chosen",
                                     detail: Self.fitting(Self.canonicalName(acct)), revision: revision)))
        out.append(.log(LogLine(level: .warning, message: "sign-in refused: \(why)", metadata: ["session": "\(id)", "account": Self.canonicalName(acct)])))
    }

    mutating func badCredential(_ id: SessionID, _ acct: Account, _ out: inout [BrokerEffect]) {
        if signInThrottle.failed(Self.canonicalName(acct), now: clock.now()) {
            out.append(.audit(AuditEntry(session: id, request: 0, channel: "signIn", source: auditParty(id), target: nil, dataType: nil,
                                         size: nil, outcome: "locked", rule: "1.identity", tag: "chosen",
                                         detail: Self.fitting(Self.canonicalName(acct)), revision: revision)))
        }
        out.append(.audit(AuditEntry(session: id, request: 0, channel: "signIn", source: auditParty(id), target: nil, dataType: nil,
                                     size: nil, outcome: "badCredential", rule: "1.identity", tag: "chosen",
                                     detail: Self.fitting(Self.canonicalName(acct)), revision: revision)))
        out.append(.log(LogLine(level: .warning, message: "sign-in refused: wrong or missing credential",
                                metadata: ["session": "\(id)", "account": Self.canonicalName(acct)])))
    }

    /// The user signed `acct` in to this instance (the launcher said so, or the password matched).
    mutating func signedIn(_ id: SessionID, _ acct: Account, _ out: inout [BrokerEffect]) {
        let s = sessions[id]!
        if !s.signedIn.contains(acct) { sessions[id]!.signedIn.append(acct) }
        if acct.userIndex == nil { sessions[id]!.personalSignedIn = true }
        // The account the app is enrolled with (by another instance meanwhile) is this
        // instance's too once the user signs it in here.
        if s.enrolled != acct, s.manifest.integratesSDK,
           service.enrolledAccount(in: s.manifest.bundleID).flatMap({ engine.tenant.identity(named: $0).account }) == acct {
            sessions[id]!.enrolled = acct
        }
        parties[id] = nil
        if s.manifest.integratesSDK, service.signIn(app: s.manifest.bundleID, account: Self.canonicalName(acct)) { out.append(persistEnrollments) }
        out.append(.audit(AuditEntry(session: id, request: 0, channel: "signIn", source: auditParty(id), target: nil, dataType: nil, size: nil,
                                     outcome: "signedIn", rule: "1.identity", tag: "chosen", detail: Self.fitting(Self.canonicalName(acct)),
                                     revision: revision)))
        // The app hears of it (after the state it may act on is written), under its canonical
        // name: an app with the SDK may enroll the account now.
        if s.conversation.greeted {
            out.append(.send(id, Frame(id: brokerFrameID(), .signedIn(account: Self.fitting(Self.canonicalName(acct))))))
        }
    }

    /// One account, one name: a tenant user is named by its UPN whatever spelling an app used
    /// (its object id, another case, padding), so the service never holds one user twice; an
    /// account the tenant does not know keeps the name it was given, trimmed.
    /// Why an admin's wipe names nothing that exists, or nil when it may be issued. A wipe of a
    /// misspelled account or app would otherwise be "issued", kept pending for ever and wipe
    /// nothing, while the admin believes the data is gone.
    /// The apps an admin's wipe of `account` (in `app`, nil: every app) reaches: those holding an
    /// enrollment of it now.
    public func wipeTargets(account: String, app: String?) -> [String] {
        service.wipeTargets(account: Self.canonicalName(account, in: engine.tenant), app: app)
    }

    public func wipeRefusal(account: String, app: String?) -> String? {
        let name = Self.canonicalName(account, in: engine.tenant)
        let enrolled = service.enrollments.values
        if engine.tenant.knownAccount(named: account) == nil,
           !enrolled.contains(where: { $0.account.lowercased() == name.lowercased() }) {
            return "no account \(account) in tenant \(engine.tenant.name) nor enrolled on this device; nothing to wipe"
        }
        if let app, engine.apps[app.lowercased()] == nil,
           !enrolled.contains(where: { $0.app.lowercased() == app.lowercased() }) {
            let installed = engine.apps.values.map(\.bundleID).sorted().joined(separator: ", ")
            return "no app \(app) installed on this device nor enrolled; installed: \(installed)"
        }
        // A wipe targets enrollments that exist now; kept for later, it would wipe the next
        // enrollment of the account, one the admin never saw (seed 000 FAQ).
        if wipeTargets(account: account, app: app).isEmpty {
            return "nothing to wipe: \(account) is not enrolled in \(app ?? "any app") on this device (a wipe applies to the enrollments that exist when it is issued, never to a later one)"
        }
        return nil
    }

    /// Why an admin's or a user's account is a typo: in one of the tenant's own domains, yet
    /// no user of it (it would otherwise act as an outsider, unmanaged, with no word).
    public func unknownInOwnDomain(_ account: String) -> String? {
        guard engine.tenant.isUnknownInOwnDomain(account) else { return nil }
        return "\(account) is not a user of tenant \(engine.tenant.name)\(engine.tenant.nearestUser(to: account)), yet its domain is one of the tenant's; check the spelling"
    }

    static func canonicalName(_ text: String, in tenant: Tenant) -> String {
        switch tenant.identity(named: text) {
        case .personal: return text.trimmingCharacters(in: .whitespaces)
        case let .account(a): return canonicalName(a)
        }
    }

    static func canonicalName(_ account: Account) -> String { account.upn ?? account.name }

    /// The service's state as it must be written.
    var persistEnrollments: BrokerEffect {
        .persist(.enrollments(Array(service.enrollments.values).sorted { ($0.app, $0.account) < ($1.app, $1.account) },
                              service.pendingWipes, signedOut: service.signedOut))
    }

    /// The account `text` names, when the user signed it in to this instance (the launcher's
    /// `--user`, or the tenant's default enrollment the user has not signed out); nil for an
    /// account the app only names. Enrollment, keys, tokens, remediation and app configuration
    /// go to such an account only.
    func signedInAccount(_ text: String, for id: SessionID) -> Account? {
        guard case let .account(a) = engine.tenant.identity(named: text), sessions[id]!.signedIn.contains(a) else { return nil }
        return a
    }

    /// The refusal of a request for an account the user has not signed in to this instance,
    /// with its audit line (rule 1.identity: who an app is acting for is the user's to say).
    mutating func notSignedIn(_ id: SessionID, _ frameID: UInt32, channel: String, account: String, _ out: inout [BrokerEffect]) -> WireError {
        out.append(.audit(AuditEntry(session: id, request: frameID, channel: channel, source: auditParty(id), target: nil, dataType: nil,
                                     size: nil, outcome: "notSignedIn", rule: "1.identity", tag: "chosen", detail: Self.fitting(account),
                                     revision: revision, ruleName: Rule.identityNotSignedIn.rawValue,
                                     decidedAt: DecisionSite(filePath: #filePath, line: #line).description)))
        return WireError(.notAllowed, "\(account) is not signed in to this instance of \(sessions[id]!.bundleID); "
                         + "only the user signs an account in (mamlaunch run --user)")
    }

    /// An account an app names for a location: a tenant user the app has signed in, or nothing.
    func resolveAccount(_ text: String?, for id: SessionID) -> Result<Account?, WireError> {
        guard let text, !text.isEmpty else { return .success(nil) }
        guard let account = engine.tenant.identity(named: text).account, account.userIndex != nil else {
            return .failure(WireError(.notAllowed, "\(text) is not a user of this tenant"))
        }
        guard sessions[id]!.signedIn.contains(account) else {
            return .failure(WireError(.notAllowed, "\(sessions[id]!.bundleID) has not signed in \(text)"))
        }
        return .success(account)
    }

    /// The folder of a tenant user in account-bound locations: its object id, else its index.
    func accountFolder(_ account: Account?) -> String {
        guard let account, let index = account.userIndex else { return "no-account" }
        let oid = account.oid ?? ""
        return !oid.isEmpty && NameRules.check(oid, field: "oid") == nil ? oid : "user-\(index)"
    }
}

extension WireErrorCode {
    /// Protocol errors close the connection; refusals of a well-formed request do not.
    public var closesConnection: Bool { rawValue < WireErrorCode.notAllowed.rawValue }
}

/// A sign-in waiting for its password check.
struct PendingSignIn: Sendable {
    var session: SessionID
    var account: Account
    /// The app's pid then: the answer is for that app, not a later one under the same session id.
    var pid: Int32
}

/// One connection's state.
struct SessionState: Sendable {
    let id: SessionID
    let peer: Peer
    var manifest: AppManifest
    var identity: Identity
    var enrolled: Account?
    /// Accounts the broker knows this app has: the launcher's `--user` and its enrolled account.
    var signedIn: [Account] = []
    var conversation = Conversation()
    var pendingImports = 0
    /// Requests refused so far (the log names every tenfold count, not each one).
    var refusals = 0
    /// A restart request was sent and not yet answered.
    var restartAsked = false
    /// The user's own program under an installed manifest (`--developer`): never given a key.
    var developer = false
    /// The user signed a personal (consumer) account in to this instance.
    var personalSignedIn = false
    /// The identities the app's key view shows together (`setViewIdentities`), when more than
    /// one; nil when it shows one, `identity`.
    var view: [Identity]?
    /// The number of the last policy snapshot sent on this session (0: none yet); the next
    /// carries this plus one, so the app keeps only a later one.
    var snapshotsSent = 0
    /// The latest launch check's verdict for each account checked on this connection, by its
    /// canonical name, and the accounts a check blocked (until one passes, whichever the app
    /// shows meanwhile).
    var launches: [String: LaunchState] = [:]
    var blockedAccounts: Set<String> = []

    init(id: SessionID, peer: Peer, manifest: AppManifest, identity: Identity) {
        self.id = id
        self.peer = peer
        self.manifest = manifest
        self.identity = identity
    }

    var bundleID: String { peer.bundleID }
}

/// A session's party as last built. Immutable, so a copied core shares it safely.
final class PartyCache: Sendable {
    let revision: Int
    let party: Party
    let audit: AuditEntry.Party
    init(revision: Int, party: Party, audit: AuditEntry.Party) {
        self.revision = revision
        self.party = party
        self.audit = audit
    }
}

/// The pasteboard's item: the copier's party as it was, its text and where it came from.
/// What was copied, as the copier was when it copied. Immutable, and an object: a paste takes it
/// with one retain, where a struct copied its item, party and state field by field per paste.
final class Clip: Sendable {
    let item: PasteboardItem
    let owner: AuditEntry.Party
    let state: PasteboardState

    init(item: PasteboardItem, owner: AuditEntry.Party, state: PasteboardState) {
        self.item = item
        self.owner = owner
        self.state = state
    }
}

struct PendingImport: Sendable {
    var requester: SessionID
    var frameID: UInt32
    var source: SessionID
    var contentType: String
    var started: Duration
    /// The importer was answered already (it left, or the source took too long): the source's
    /// late answer is accepted and dropped.
    var abandoned = false
}

struct PendingURL: Sendable {
    var sender: SessionID
    var frameID: UInt32
    var url: String
    /// The sender as it was when it asked: the URL is decided again, for the app that really
    /// started, when it says hello.
    var senderParty: Party
    var source: AuditEntry.Party
    var scheme: String
}

struct PendingLaunch: Sendable {
    var started: Duration
    var urls: [PendingURL] = []
    /// Documents pushed to the app before it ran: kept (their descriptors retained) until it
    /// says hello, then decided and delivered as if it had been running.
    var shares: [PendingShare] = []
    var waiting: Int { urls.count + shares.count }
}

struct PendingShare: Sendable {
    var sender: SessionID
    var frameID: UInt32
    var target: String
    var type: String
    var name: String
    var attachment: Attachment
}

/// Work the shell does off the event loop, and what to do when it is done.
enum Job: Sendable {
    case save(session: SessionID, frameID: UInt32, decision: Decision, file: StoredFile, entry: AuditEntry, attachment: Int)
    case open(session: SessionID, frameID: UInt32, decision: Decision, file: StoredFile, entry: AuditEntry)
    /// A document on its way, encrypted first: to `target` as a push, or to the importer as
    /// the answer to its import.
    case deliver(Delivery)
}

/// A document the broker forwards once its decision is final.
struct Delivery: Sendable {
    /// Who asked: the sharer for a push, the importer for an import.
    var requester: SessionID
    var requestID: UInt32
    var target: SessionID
    var isImport: Bool
    var decision: Decision
    var document: Message
    var entry: AuditEntry
    /// The plaintext descriptor, held while its ciphertext is made.
    var original: Int?
}
