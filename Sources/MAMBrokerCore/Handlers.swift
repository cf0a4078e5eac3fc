import MAMPolicy
import MAMWire

// Hello, identity, URLs and the pasteboard.
extension BrokerCore {
    mutating func greet(_ id: SessionID, _ frameID: UInt32, sdk: Bool, _ out: inout [BrokerEffect]) {
        // The manifest says whether an app integrates the SDK; an app that says it does not is
        // taken at its word (it can only lose management by it, never gain it).
        if !sdk && sessions[id]!.manifest.integratesSDK {
            sessions[id]!.manifest.mamSettings = nil
            sessions[id]!.identity = .personal
            sessions[id]!.enrolled = nil
            parties[id] = nil
        }
        let welcomed = party(id)
        out.append(.send(id, Frame(id: frameID, .welcome(version: sessions[id]!.conversation.version, bundleID: welcomed.bundleID,
                                                         managedAccount: welcomed.isManaged ? welcomed.enrolled?.name : nil))))
        guard launchKeys(id, &out) else {
            refuse(id, frameID, WireError(.notAllowed, "\(welcomed.bundleID) may not start without an app protection policy (MAMPolicyRequired); sign in with a managed account"), &out)
            disconnect(id, &out)
            out.append(.close(id, reason: "MAMPolicyRequired without a policy"))
            return
        }
        // As it stands after the launch keys (an automatic enrollment may have made it managed).
        let p = party(id)
        // Wipes issued while the app was not running arrive when it starts (only an app the
        // service speaks to takes them: another spelling of its bundle id must not swallow them).
        if sessions[id]!.manifest.integratesSDK {
            tell(service.deliverWipes(app: p.bundleID, engine: engine, now: clock.now()), requester: nil, &out)
        }
        // The account it opens under meets its policy's launch checks on this device, or not.
        checkLaunch(id, &out)
        // URLs that waited for this app to start: decided again for the app that really came
        // up (it may have said it runs without the SDK), delivered now, and only now final.
        let key = p.bundleID.lowercased()
        // Only the app that was started takes them: an installed app's id in another spelling
        // is some other app.
        if let installed = engine.apps[key]?.bundleID, installed != p.bundleID { return }
        guard let launch = launches.removeValue(forKey: key) else { return }
        // Documents that waited: shared now as if the app had been running (the sender may have
        // changed identity since; it is decided as the sender is now).
        for s in launch.shares {
            guard sessions[s.sender] != nil else {
                out.append(.release(attachment: s.attachment.token))
                continue
            }
            var kept = false
            let result = share(s.sender, s.frameID, target: s.target, type: s.type, name: s.name, s.attachment, retained: &kept, &out)
            if !kept { out.append(.release(attachment: s.attachment.token)) }
            if case let .failure(e) = result { refuse(s.sender, s.frameID, e, &out) }
        }
        let target = auditParty(id)
        for u in launch.urls {
            let d = engine.openURL(u.url, from: u.senderParty, to: p)
            let e = Self.entry(d, revision: revision, session: u.sender, request: u.frameID, channel: "open-url", source: u.source, target: target, type: u.scheme, url: u.url)
            let answer = BrokerEffect.send(u.sender, Frame(id: u.frameID, .decision(Self.record(d))))
            guard d.allowed, let delivered = checkedURL(d.url ?? u.url) else {
                out.append(.audit(e))
                if sessions[u.sender] != nil { out.append(answer) }
                continue
            }
            out.append(.deliver(id, Frame(id: brokerFrameID(), .urlDelivery(url: delivered, senderAccount: u.senderParty.dataAccount?.name)),
                                then: [.audit(e)] + (sessions[u.sender] != nil ? [answer] : []),
                                otherwise: sessions[u.sender] != nil ? [notReading(u.sender, u.frameID, p.bundleID)] : []))
        }
    }

    /// The URL as it will travel, if it fits a text field (a twin is about three times the URL).
    func checkedURL(_ url: String) -> String? { url.utf8.count <= Wire.maximumText ? url : nil }

    /// What a requester hears when its receiver is not reading its connection.
    func notReading(_ requester: SessionID, _ frameID: UInt32, _ receiver: String) -> BrokerEffect {
        .send(requester, Frame(id: frameID, .error(code: .limitReached, detail: "\(receiver) is not reading its connection; nothing was delivered")))
    }

    mutating func setIdentity(_ id: SessionID, _ frameID: UInt32, _ account: String, _ out: inout [BrokerEffect]) -> Result<Void, WireError> {
        let before = auditParty(id)
        let wanted = engine.tenant.identity(named: account)
        let d = engine.setIdentity(wanted, for: party(id), signedIn: sessions[id]!.signedIn)
        if d.allowed {
            sessions[id]!.identity = wanted
            sessions[id]!.view = nil
            parties[id] = nil
        }
        out.append(.audit(Self.entry(d, revision: revision, session: id, request: frameID, channel: "identity", source: before,
                                target: d.allowed ? auditParty(id) : nil)))
        out.append(.send(id, Frame(id: frameID, .decision(Self.record(d)))))
        return .success(())
    }

    /// A view of several accounts (SEMANTICS §1.view): decided by the
    /// engine against the app as it is without a view; allowed, every later decision sees the
    /// view's party (the lock-down policy when one account is managed here).
    mutating func setViewIdentities(_ id: SessionID, _ frameID: UInt32, _ accounts: [String], _ out: inout [BrokerEffect]) -> Result<Void, WireError> {
        let before = auditParty(id)
        let wanted = Party.distinct(accounts.map { engine.tenant.identity(named: $0) })
        let d = engine.setViewIdentities(wanted, for: partyShowingOne(sessions[id]!), signedIn: sessions[id]!.signedIn)
        if d.allowed {
            sessions[id]!.identity = wanted.first ?? .personal
            sessions[id]!.view = wanted.count > 1 ? wanted : nil
            parties[id] = nil
        }
        var e = Self.entry(d, revision: revision, session: id, request: frameID, channel: "identity", source: before,
                           target: d.allowed ? auditParty(id) : nil)
        // The audit names every account the view shows, not only the one it acts under.
        if wanted.count > 1 { e.detail = Self.fitting("view: " + wanted.map(\.description).joined(separator: ", ")) }
        out.append(.audit(e))
        out.append(.send(id, Frame(id: frameID, .decision(Self.record(d)))))
        return .success(())
    }

    mutating func openURL(_ id: SessionID, _ frameID: UInt32, _ asked: String, _ out: inout [BrokerEffect]) -> Result<Void, WireError> {
        // The sender's identity claims are dropped; the engine wraps again with its real one.
        let url = URLText.withoutIdentityClaims(asked)
        let me = party(id)
        let source = auditParty(id)
        let scheme = URLText.scheme(of: url).map { String($0).lowercased() } ?? ""
        let running = sessions.values.filter { $0.conversation.greeted && $0.id != id }.map(\.id).sorted()
        // The device picks the handler among every installed app, running or not (the engine's
        // routeURL): the first running handler would make the answer depend on what runs.
        // A running app is decided as it runs (its identity now), one that is not as it starts.
        let runningApps = Set(running.map { party($0).bundleID.lowercased() })
        let idle = installedParties().filter { !runningApps.contains($0.bundleID.lowercased()) }
        let routed = engine.routeURL(url, from: me, among: running.map { party($0) } + idle)
        if let target = routed.target, let handler = running.first(where: { party($0).bundleID == target.bundleID }) {
            let d = routed.decision
            let e = Self.entry(d, revision: revision, session: id, request: frameID, channel: "open-url", source: source, target: auditParty(handler), type: scheme, url: url)
            let answer = BrokerEffect.send(id, Frame(id: frameID, .decision(Self.record(d))))
            guard d.allowed else {
                out.append(.audit(e))
                out.append(answer)
                return .success(())
            }
            guard let delivered = checkedURL(d.url ?? url) else {
                return .failure(WireError(.limitReached, "the URL as delivered would be \((d.url ?? url).utf8.count) bytes; a URL travels in at most \(Wire.maximumText)"))
            }
            out.append(.deliver(handler, Frame(id: brokerFrameID(), .urlDelivery(url: delivered, senderAccount: me.dataAccount?.name)),
                                then: [.audit(e), answer], otherwise: [notReading(id, frameID, target.bundleID)]))
            return .success(())
        }
        // Not running: decided as if the installed app were; it is started, and the decision is
        // final (answered and audited) once it says hello.
        let d = routed.decision
        guard d.allowed, let target = routed.target else {
            let t = routed.target.map { AuditEntry.Party(app: $0.bundleID, identity: $0.identity.description, managed: $0.isManaged) }
            out.append(.audit(Self.entry(d, revision: revision, session: id, request: frameID, channel: "open-url", source: source, target: t, type: scheme, url: url)))
            out.append(.send(id, Frame(id: frameID, .decision(Self.record(d)))))
            return .success(())
        }
        if checkedURL(d.url ?? url) == nil {
            return .failure(WireError(.limitReached, "the URL as delivered would be \((d.url ?? url).utf8.count) bytes; a URL travels in at most \(Wire.maximumText)"))
        }
        let pending = PendingURL(sender: id, frameID: frameID, url: url, senderParty: me, source: source, scheme: scheme)
        return startingApp(target.bundleID, &out) { $0.urls.append(pending) }
    }

    /// Queues something for an installed app that is not running, starting it unless a start is
    /// already under way: at most one launch per app, and a bounded number of things waiting.
    mutating func startingApp(_ bundleID: String, _ out: inout [BrokerEffect], _ add: (inout PendingLaunch) -> Void) -> Result<Void, WireError> {
        let key = bundleID.lowercased()
        var launch = launches[key] ?? PendingLaunch(started: clock.now())
        guard launch.waiting < limits.pendingURLsPerTarget else {
            return .failure(WireError(.limitReached, "\(bundleID) is starting and already has \(launch.waiting) URLs and documents waiting"))
        }
        if launches[key] == nil { out.append(.startApp(bundleID: bundleID)) }
        add(&launch)
        launches[key] = launch
        return .success(())
    }

    /// The installed apps as parties at their default identity, built once per tenant revision
    /// (a flood of URLs for an app that is not running would rebuild them for every URL).
    mutating func installedParties() -> [Party] {
        if let cached = installed, cached.revision == revision { return cached.parties }
        let parties = catalog.map { engine.party($0, identity: engine.defaultIdentity(for: $0)) }
        installed = (revision, parties)
        return parties
    }

    mutating func failLaunch(_ key: String, _ reason: String, _ out: inout [BrokerEffect]) {
        guard let launch = launches.removeValue(forKey: key) else { return }
        out.append(.log(LogLine(level: .warning, message: "an app started for a URL did not come up", metadata: ["app": key, "reason": reason])))
        for u in launch.urls where sessions[u.sender] != nil {
            out.append(.send(u.sender, Frame(id: u.frameID, .error(code: .unknownTarget, detail: "\(key) could not be started: \(reason)"))))
        }
        for s in launch.shares {
            out.append(.release(attachment: s.attachment.token))
            if sessions[s.sender] != nil {
                out.append(.send(s.sender, Frame(id: s.frameID, .error(code: .unknownTarget, detail: "\(key) could not be started: \(reason)"))))
            }
        }
    }

    mutating func expireLaunches(_ out: inout [BrokerEffect]) {
        let now = clock.now()
        for (key, launch) in launches where now - launch.started > limits.launchTimeout {
            failLaunch(key, "it did not say hello within \(limits.launchTimeout)", &out)
        }
    }

    mutating func copy(_ id: SessionID, _ frameID: UInt32, _ text: String, _ types: [String], _ out: inout [BrokerEffect]) -> Result<Void, WireError> {
        for (i, t) in types.enumerated() {
            if let e = NameRules.check(t, field: "types[\(i)]") { return .failure(WireError(.invalidName, e.detail)) }
        }
        let p = party(id)
        changeCount &+= 1
        let state = PasteboardState(text: text, types: types, ownerApp: p.bundleID, ownerIdentity: p.identity.description, changeCount: changeCount)
        pasteboard = Clip(item: PasteboardItem(source: p, text: text), owner: auditParty(id), state: state)
        out.append(.persist(.pasteboard(state)))
        out.append(.send(id, Frame(id: frameID, .copied(changeCount: changeCount))))
        return .success(())
    }

    mutating func paste(_ id: SessionID, _ frameID: UInt32, _ out: inout [BrokerEffect]) {
        // One look-up for the party and its audit form.
        let (target, targetAudit) = cached(id)
        guard let clip = pasteboard else {
            let d = engine.pasteFromEmptyPasteboard(into: target)
            out.append(.audit(Self.entry(d, revision: revision, session: id, request: frameID, channel: "paste", source: targetAudit, target: targetAudit)))
            out.append(.send(id, Frame(id: frameID, .pasteResult(decision: Self.record(d), text: ""))))
            return
        }
        // The copier is judged as it was when it copied: its party is kept with the item.
        let d = engine.paste(clip.item, into: target)
        let site = siteText(d)
        out.append(.audit(Self.entry(d, revision: revision, session: id, request: frameID, channel: "paste", source: clip.owner, target: targetAudit,
                                type: clip.state.types.first, size: clip.item.length, site: site)))
        let text = d.allowed ? clip.state.text : (d.replacementText ?? UserMessage.paste)
        out.append(.send(id, Frame(id: frameID, .pasteResult(decision: Self.record(d, site: site), text: text))))
    }

    mutating func restore(_ row: PasteboardState) {
        changeCount = row.changeCount
        let manifest = manifest(for: row.ownerApp)
        let identity = engine.tenant.identity(named: row.ownerIdentity == "personal" ? "" : row.ownerIdentity)
        let p = engine.party(manifest, identity: identity)
        pasteboard = Clip(item: PasteboardItem(source: p, text: row.text),
                          owner: AuditEntry.Party(app: row.ownerApp, identity: row.ownerIdentity, managed: p.isManaged), state: row)
    }
}
