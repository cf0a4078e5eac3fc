import Foundation
import MAMCatalog
import Glibc
import MAMPolicy
import MAMWire

extension Broker {
    /// The party a session is now, as the engine sees it.
    func party(_ s: Session) -> Party {
        // Built once per identity and policy revision: decisions then cost no allocation here.
        if let cached = s.cachedParty, cached.revision == revision { return cached.party }
        let p = engine.party(s.manifest, identity: s.identity, enrolled: s.enrolled, personalAccountSignedIn: s.manifest.isMultiIdentity)
        s.cachedParty = (revision, p)
        return p
    }

    func auditParty(_ s: Session) -> AuditLog.Party { AuditLog.Party(app: s.bundleID, identity: s.identity.description) }

    func record(_ d: Decision) -> DecisionRecord {
        let detail = d.url ?? d.receivingIdentity?.description ?? d.deliveredType ?? ""
        return DecisionRecord(allowed: d.allowed, outcome: UInt8(Outcome.allCases.firstIndex(of: d.outcome)!), rule: d.rule.id,
                              tag: d.tag == .doc ? 0 : d.tag == .observed ? 1 : 2, message: d.message, detail: detail)
    }

    func log(_ d: Decision, channel: String, source: AuditLog.Party, target: AuditLog.Party?, type: String? = nil, size: Int? = nil) {
        let id = (try? store.nextDecisionID()) ?? 0
        audit.append(AuditLog.Record(id: id, source: source, target: target, channel: channel, dataType: type, size: size,
                                     outcome: d.outcome.rawValue, rule: d.rule.id, tag: d.tag.rawValue, revision: revision))
    }

    func running(_ bundleID: String) -> Session? {
        sessions.values.filter { $0.bundleID.lowercased() == bundleID.lowercased() }.min { $0.id < $1.id }
    }

    func reply(_ s: Session, _ id: UInt32, _ m: Message, descriptor: Int32? = nil) {
        try? s.socket.send(Frame(id: id, m), descriptor: descriptor, wait: false)
    }

    /// Answers one well-formed, in-order frame. Called with the lock held.
    func handle(_ frame: Frame, descriptor: Int32?, from s: Session) -> Result<Void, WireError> {
        switch frame.message {
        case .hello:
            reply(s, frame.id, .welcome(version: Wire.version, bundleID: s.bundleID, managedAccount: party(s).isManaged ? s.enrolled?.name : nil))
            // URLs that waited for this app to start.
            for pending in pendingURLs.removeValue(forKey: s.bundleID.lowercased()) ?? [] {
                reply(s, 0, .urlDelivery(url: pending.url, senderAccount: pending.sender))
            }
        case let .setIdentity(account):
            let wanted = engine.tenant.identity(named: account)
            // One managed account per app [doc]: an SDK app may act as its enrolled account, or as personal.
            if case let .account(a) = wanted, s.manifest.integratesSDK {
                var accounts = AppAccounts(managed: s.enrolled)
                let status = accounts.enroll(a)
                guard status == .alreadyEnrolled else {
                    return .failure(WireError(.notAllowed, "\(account) is not the account enrolled in \(s.bundleID) (\(status), \(status.rawValue))"))
                }
            }
            s.identity = wanted
            reply(s, frame.id, .decision(DecisionRecord(allowed: true, outcome: 0, rule: "1", tag: 0, message: "", detail: wanted.description)))
        case let .canOpenURL(url):
            let handlers = catalog + sessions.values.map(\.manifest)
            reply(s, frame.id, .canOpenURLResult(engine.canOpenURL(url, from: party(s), handledBy: handlers)))
        case let .openURL(url):
            openURL(url, frame: frame, from: s)
        case let .copy(text, types):
            let p = party(s)
            changeCount &+= 1
            pasteboard = (PasteboardItem(source: p, text: text), text, types, auditParty(s))
            try? store.savePasteboard(StateStore.PasteboardRow(text: text, types: types, ownerApp: s.bundleID,
                                                               ownerIdentity: s.identity.description, changeCount: changeCount))
            reply(s, frame.id, .copied(changeCount: changeCount))
        case .paste:
            paste(frame: frame, into: s)
        case let .listTargets(type):
            let me = party(s)
            let candidates = sessions.values.filter { $0.id != s.id }.sorted { $0.id < $1.id }.map(party)
            let list = engine.openInTargets(type: type, from: me, candidates: candidates)
                .map { ShareTarget(bundleID: $0.target.bundleID, outcome: record($0.decision).outcome) }
            reply(s, frame.id, .targets(Array(list.prefix(Wire.maximumListCount))))
        case let .share(target, type, name):
            return share(target: target, type: type, name: name, descriptor: descriptor, frame: frame, from: s)
        case let .importRequest(source, type):
            guard let src = running(source), src.id != s.id else {
                return .failure(WireError(.unknownTarget, "\(source) is not running"))
            }
            nextBrokerFrame &+= 1
            pendingImports[nextBrokerFrame] = (s.id, frame.id, src.id, type)
            try? src.socket.send(Frame(id: nextBrokerFrame, .exportRequest(contentType: type)), wait: false)
        case let .exportReply(type, name):
            return exported(type: type, name: name, descriptor: descriptor, frame: frame, from: s)
        case let .saveTo(location, account, name):
            return save(location: location, account: account, name: name, descriptor: descriptor, frame: frame, from: s)
        case let .openFrom(location, account, name):
            return open(location: location, account: account, name: name, frame: frame, from: s)
        default:
            return .failure(WireError(.outOfOrder, "unexpected message"))
        }
        return .success(())
    }

    // MARK: URLs

    private func openURL(_ url: String, frame: Frame, from s: Session) {
        let me = party(s)
        let scheme = URLText.scheme(of: url).map { String($0).lowercased() } ?? ""
        // The engine picks the handler among the running apps and decides.
        let running = sessions.values.sorted { $0.id < $1.id }
        let routed = engine.routeURL(url, from: me, among: running.map(party))
        var decision = routed.decision
        if let target = routed.target, let handler = running.first(where: { $0.bundleID == target.bundleID }) {
            log(decision, channel: "open-url", source: auditParty(s), target: auditParty(handler), type: scheme)
            if decision.allowed {
                try? handler.socket.send(Frame(id: frame.id, .urlDelivery(url: decision.url ?? url, senderAccount: me.dataAccount?.name)), wait: false)
            }
        } else {
            // Not running: the engine decides as if an installed app were; the launcher starts it
            // and the URL waits for its hello.
            let installed = engine.routeURL(url, from: me, among: catalog.map { engine.party($0, identity: engine.defaultIdentity(for: $0)) })
            decision = installed.decision
            log(decision, channel: "open-url", source: auditParty(s),
                target: installed.target.map { AuditLog.Party(app: $0.bundleID, identity: $0.identity.description) }, type: scheme)
            if decision.allowed, let target = installed.target {
                if startThroughLauncher(target.bundleID) {
                    pendingURLs[target.bundleID.lowercased(), default: []].append((decision.url ?? url, me.dataAccount?.name))
                } else {
                    decision = Decision(.blocked, .urlNotHandled)
                }
            }
        }
        reply(s, frame.id, .decision(record(decision)))
    }

    // MARK: Pasteboard

    private func paste(frame: Frame, into s: Session) {
        guard let item = pasteboard else {
            reply(s, frame.id, .pasteResult(decision: DecisionRecord(allowed: true, outcome: 0, rule: "4.3", tag: 2, message: "", detail: ""), text: ""))
            return
        }
        // The copier is judged as it was when it copied: its party is kept with the item.
        let d = engine.paste(item.item, into: party(s))
        log(d, channel: "paste", source: item.owner, target: auditParty(s), type: item.types.first, size: item.item.length)
        reply(s, frame.id, .pasteResult(decision: record(d), text: d.allowed ? item.text : (d.replacementText ?? UserMessage.paste)))
    }

    func restorePasteboard() throws {
        guard let row = try store.loadPasteboard() else { return }
        changeCount = row.changeCount
        let manifest = manifest(for: row.ownerApp)
        let p = engine.party(manifest, identity: engine.tenant.identity(named: row.ownerIdentity == "personal" ? "" : row.ownerIdentity))
        pasteboard = (PasteboardItem(source: p, text: row.text), row.text, row.types, AuditLog.Party(app: row.ownerApp, identity: row.ownerIdentity))
    }

    // MARK: Open-in and share

    private func share(target: String, type: String, name: String, descriptor: Int32?, frame: Frame, from s: Session) -> Result<Void, WireError> {
        guard let fd = descriptor, SealedDocument.isSealed(fd) else {
            return .failure(WireError(.notAllowed, "a shared document must be a sealed memfd (F_SEAL_WRITE, SHRINK, GROW, SEAL)"))
        }
        guard let to = running(target), to.id != s.id else { return .failure(WireError(.unknownTarget, "\(target) is not running")) }
        let me = party(s)
        let d = engine.openIn(type: type, from: me, to: party(to))
        log(d, channel: "open-in", source: auditParty(s), target: auditParty(to), type: type, size: SealedDocument.size(fd))
        if d.allowed {
            let document = Message.document(contentType: d.deliveredType ?? type, name: name, owner: me.dataAccount?.name,
                                            encrypted: d.outcome == .encrypted)
            do { try to.socket.send(Frame(id: frame.id, document), descriptor: fd, wait: false) } catch {
                return .failure(WireError(.unknownTarget, "\(target) is not reading its connection"))
            }
        }
        reply(s, frame.id, .decision(record(d)))
        return .success(())
    }

    private func exported(type: String, name: String, descriptor: Int32?, frame: Frame, from source: Session) -> Result<Void, WireError> {
        guard let pending = pendingImports.removeValue(forKey: frame.id), pending.source == source.id else {
            return .failure(WireError(.outOfOrder, "exportReply \(frame.id) answers no export request"))
        }
        guard let fd = descriptor, SealedDocument.isSealed(fd) else {
            return .failure(WireError(.notAllowed, "an exported document must be a sealed memfd"))
        }
        guard let requester = sessions[pending.requester] else { return .success(()) }
        let d = engine.openIn(type: type, from: party(source), to: party(requester), mode: .import)
        log(d, channel: "import", source: auditParty(source), target: auditParty(requester), type: type, size: SealedDocument.size(fd))
        reply(requester, pending.frameID, .decision(record(d)))
        if d.allowed {
            let document = Message.document(contentType: d.deliveredType ?? type, name: name, owner: party(source).dataAccount?.name,
                                            encrypted: d.outcome == .encrypted)
            reply(requester, pending.frameID, document, descriptor: fd)
        }
        return .success(())
    }

    // MARK: Storage locations

    /// The folder of a location in the device directory; per account where it belongs to one.
    func folder(_ name: String, account: Account?) -> String {
        let base = (configuration.deviceDirectory as NSString).appendingPathComponent("locations/\(name)")
        guard ["oneDriveForBusiness", "sharePoint", "accountDocument"].contains(name) else { return base }
        return (base as NSString).appendingPathComponent(account?.name.lowercased() ?? "no-account")
    }

    static func saveFolderName(_ l: SaveLocation) -> String {
        switch l {
        case .localDrive: return "localDrive"
        case .cameraRoll: return "photos"
        default: return l.name
        }
    }

    static func openFolderName(_ l: OpenLocation) -> String {
        switch l {
        case .localStorage: return "localDrive"
        default: return l.name
        }
    }

    func checkName(_ name: String) -> WireError? {
        if name.isEmpty || name == "." || name == ".." || name.contains("/") || name.utf8.count > 255 {
            return WireError(.fieldOutOfRange, "file name \"\(name)\" must be one path component")
        }
        return nil
    }

    private func account(_ text: String?) -> Account? {
        guard let text, !text.isEmpty else { return nil }
        return engine.tenant.identity(named: text).account
    }

    private func save(location: UInt8, account text: String?, name: String, descriptor: Int32?, frame: Frame, from s: Session) -> Result<Void, WireError> {
        guard let l = SaveLocation(rawValue: Int(location)) else { return .failure(WireError(.fieldOutOfRange, "save location \(location) does not exist")) }
        if let e = checkName(name) { return .failure(e) }
        guard let fd = descriptor else { return .failure(WireError(.missingDescriptor, "saveTo carries the file")) }
        let acct = l.takesAccount ? account(text) : nil
        let me = party(s)
        let d = engine.saveTo(l, account: acct, owner: me)
        log(d, channel: "save-to", source: auditParty(s), target: AuditLog.Party(app: "location:\(l.name)", identity: acct?.name ?? ""),
            size: SealedDocument.size(fd))
        if d.allowed {
            let dir = folder(Self.saveFolderName(l), account: acct)
            try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let path = (dir as NSString).appendingPathComponent(name)
            guard copyFile(from: fd, to: path) else { return .failure(WireError(.internalError, "could not write \(name)")) }
            try? store.recordOwner(path: path, owner: me.dataAccount?.name ?? "personal", app: s.bundleID)
        }
        reply(s, frame.id, .decision(record(d)))
        return .success(())
    }

    private func open(location: UInt8, account text: String?, name: String, frame: Frame, from s: Session) -> Result<Void, WireError> {
        guard let l = OpenLocation(rawValue: Int(location)) else { return .failure(WireError(.fieldOutOfRange, "open location \(location) does not exist")) }
        if let e = checkName(name) { return .failure(e) }
        let acct = l.takesAccount ? account(text) : nil
        let d = engine.openFrom(l, account: acct, receiver: party(s))
        log(d, channel: "open-from", source: AuditLog.Party(app: "location:\(l.name)", identity: acct?.name ?? ""), target: auditParty(s))
        reply(s, frame.id, .decision(record(d)))
        guard d.allowed else { return .success(()) }
        let path = (folder(Self.openFolderName(l), account: acct) as NSString).appendingPathComponent(name)
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(WireError(.unknownTarget, "no file \(name) in \(l.name)")) }
        reply(s, frame.id, .file(name: name), descriptor: fd)
        close(fd)
        return .success(())
    }

    /// Copies a document into a location with the kernel (`sendfile`), never through the broker's
    /// memory; the file appears whole or not at all (written aside, then renamed).
    func copyFile(from fd: Int32, to path: String) -> Bool {
        let temporary = path + ".partial-\(getpid())"
        let out = Glibc.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o640)
        guard out >= 0 else { return false }
        var offset: off_t = 0
        let size = SealedDocument.size(fd)
        var ok = true
        while offset < size {
            let n = sendfile(out, fd, &offset, size - Int(offset))
            if n <= 0 { if n < 0 && errno == EINTR { continue }; ok = false; break }
        }
        ok = ok && fsync(out) == 0
        close(out)
        guard ok, rename(temporary, path) == 0 else { unlink(temporary); return false }
        return true
    }
}

extension Broker {
    /// Asks the launcher (`mamlaunch run`, built beside the broker) to start an app in its
    /// sandbox against this broker. False when there is no launcher to ask.
    func startThroughLauncher(_ bundleID: String) -> Bool {
        let launcher = (Catalog.toolDirectory as NSString).appendingPathComponent("mamlaunch")
        guard FileManager.default.isExecutableFile(atPath: launcher) else { return false }
        let logs = (configuration.deviceDirectory as NSString).appendingPathComponent("logs")
        try? FileManager.default.createDirectory(atPath: logs, withIntermediateDirectories: true)
        let logPath = (logs as NSString).appendingPathComponent("\(bundleID).log")
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: launcher)
        p.arguments = ["run", bundleID, "--broker", configuration.launcherSocket,
                       "--containers", (configuration.deviceDirectory as NSString).appendingPathComponent("containers")]
        if let dir = configuration.appsDirectory { p.environment = ProcessInfo.processInfo.environment.merging(["MAMLAB_ROOT": (dir as NSString).deletingLastPathComponent]) { _, b in b } }
        p.standardInput = FileHandle.nullDevice
        p.standardOutput = FileHandle(forWritingAtPath: logPath)
        p.standardError = FileHandle(forWritingAtPath: logPath)
        do { try p.run() } catch { return false }
        logger.info("starting an app to open a URL", metadata: ["app": "\(bundleID)", "pid": "\(p.processIdentifier)"])
        return true
    }
}
