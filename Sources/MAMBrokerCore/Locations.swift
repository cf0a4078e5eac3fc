import MAMPolicy
import MAMWire

// Storage locations: save to and open from. Paths come only from identifiers the broker owns
// (the location's folder, the resolved tenant user's object id) and a checked name; a stored
// file keeps its owner, and opening it is decided with that owner's data as org data.
extension BrokerCore {
    static func folder(_ l: SaveLocation) -> String {
        switch l {
        case .localDrive: return "localDrive"
        case .cameraRoll: return "photos"
        default: return l.name
        }
    }

    static func folder(_ l: OpenLocation) -> String {
        switch l {
        case .localStorage: return "localDrive"
        default: return l.name
        }
    }

    /// An account named with a location that takes none is refused. `other` accepts one (an
    /// unknown service's account, not a tenant user the app signed in), checked only for its
    /// form and then set aside: it is never the managed account.
    func checkLocationAccount(_ text: String?, takes: Bool, accepts: Bool, _ name: String) -> WireError? {
        guard let text, !text.isEmpty, !takes else { return nil }
        guard accepts else { return WireError(.notAllowed, "location \(name) takes no account") }
        return NameRules.check(text, field: "account").map { WireError(.invalidName, $0.detail) }
    }

    /// Every folder a location may use (the shell creates them at start).
    public static var locationFolders: [String] {
        Array(Set(SaveLocation.allCases.map { folder($0) } + OpenLocation.allCases.map { folder($0) })).sorted()
    }

    mutating func save(_ id: SessionID, _ frameID: UInt32, location: UInt8, account text: String?, name: String, _ a: Attachment,
                       retained: inout Bool, _ out: inout [BrokerEffect]) -> Result<Void, WireError> {
        guard let l = SaveLocation(rawValue: Int(location)) else {
            return .failure(WireError(.fieldOutOfRange, "save location \(location) does not exist"))
        }
        if let e = checkDocument(a, names: [(name, "name")]) { return .failure(e) }
        if let e = checkLocationAccount(text, takes: l.takesAccount, accepts: l.acceptsAccount, l.name) { return .failure(e) }
        let account: Account?
        switch resolveAccount(l.takesAccount ? text : nil, for: id) {
        case let .success(x): account = x
        case let .failure(e): return .failure(e)
        }
        // Bounds before anything is decided or copied.
        if a.isSparse { return .failure(WireError(.limitReached, "the document is sparse (\(a.size) bytes, \(a.allocated) allocated)")) }
        if a.size > limits.maximumFileSize {
            return .failure(WireError(.limitReached, "the document is \(a.size) bytes; a location takes at most \(limits.maximumFileSize)"))
        }
        let bundle = sessions[id]!.bundleID
        let key = StoredFileKey(folder: Self.folder(l), accountFolder: l.takesAccount ? accountFolder(account) : nil, name: name)
        let replaced = files[key]
        // Saves in flight count: an app cannot outrun its quota by saving faster than the disk.
        let app = budget(id)
        let used = (usage[app] ?? 0) + (savingBytes[app] ?? 0) - (replaced.map { Self.budgetOf($0) == app } == true ? replaced!.size : 0)
        if used + a.size > limits.quotaPerApp {
            return .failure(WireError(.limitReached, "\(bundle) keeps \(used) bytes in locations; its quota is \(limits.quotaPerApp)"))
        }
        if writing.contains(key) { return .failure(WireError(.limitReached, "\(name) in \(l.name) is being written; try again")) }
        guard mayStartJob(id) else {
            return .failure(WireError(.limitReached, "\(limits.jobsPerApp) files of this app are already being written"))
        }
        let me = party(id)
        let owner = me.dataAccount?.name
        // [chosen] A file holding one account's org data is not overwritten with other data:
        // that would let any app destroy a managed app's documents.
        if let replaced, let previous = replaced.owner, previous.lowercased() != owner?.lowercased() {
            return .failure(WireError(.notAllowed, "\(name) in \(l.name) holds \(previous)'s data"))
        }
        let d = engine.saveTo(l, account: account, owner: me)
        let e = Self.entry(d, revision: revision, session: id, request: frameID, channel: "save-to", source: auditParty(id),
                      target: AuditEntry.Party(app: "location:\(l.name)", identity: account?.name ?? "", managed: false), size: a.size)
        guard d.allowed else {
            out.append(.audit(e))
            out.append(.send(id, Frame(id: frameID, .decision(Self.record(d)))))
            return .success(())
        }
        let file = StoredFile(key: key, owner: owner, app: bundle, size: a.size)
        let job = newJob(.save(session: id, frameID: frameID, decision: d, file: file, entry: e, attachment: a.token), app: app)
        writing.insert(key)
        savingBytes[app, default: 0] += a.size
        retained = true
        out.append(.store(job: job, attachment: a.token, file: file, budget: app))
        return .success(())
    }

    mutating func finishSave(_ n: Int, _ error: String?, _ out: inout [BrokerEffect]) {
        guard let job = takeJob(n), case let .save(id, frameID, d, file, e, token) = job else { return }
        out.append(.release(attachment: token))
        writing.remove(file.key)
        savingBytes[Self.budgetOf(file), default: 0] -= file.size
        if let error {
            out.append(.log(LogLine(level: .error, message: "saving a file failed", metadata: ["file": file.key.relativePath, "reason": error])))
            if sessions[id] != nil { out.append(.send(id, Frame(id: frameID, .error(code: .internalError, detail: "\(file.key.name) could not be written")))) }
            return
        }
        if let old = files[file.key] { usage[Self.budgetOf(old), default: 0] -= old.size }
        files[file.key] = file
        usage[Self.budgetOf(file), default: 0] += file.size
        out.append(.audit(e))
        if sessions[id] != nil { out.append(.send(id, Frame(id: frameID, .decision(Self.record(d))))) }
    }

    mutating func open(_ id: SessionID, _ frameID: UInt32, location: UInt8, account text: String?, name: String,
                       _ out: inout [BrokerEffect]) -> Result<Void, WireError> {
        guard let l = OpenLocation(rawValue: Int(location)) else {
            return .failure(WireError(.fieldOutOfRange, "open location \(location) does not exist"))
        }
        if let e = NameRules.check(name, field: "name") { return .failure(WireError(.invalidName, e.detail)) }
        if let e = checkLocationAccount(text, takes: l.takesAccount, accepts: l.acceptsAccount, l.name) { return .failure(e) }
        let account: Account?
        switch resolveAccount(l.takesAccount ? text : nil, for: id) {
        case let .success(x): account = x
        case let .failure(e): return .failure(e)
        }
        let key = StoredFileKey(folder: Self.folder(l), accountFolder: l.takesAccount ? accountFolder(account) : nil, name: name)
        if writing.contains(key) { return .failure(WireError(.limitReached, "\(name) in \(l.name) is being written; try again")) }
        guard let file = files[key] else { return .failure(WireError(.unknownTarget, "no file \(name) in \(l.name)")) }
        guard mayStartJob(id) else {
            return .failure(WireError(.limitReached, "\(limits.jobsPerApp) files of this app are already being opened"))
        }
        // The file's data is its owner's: org data stays org data wherever it was saved.
        let ownerParty = file.owner.map { engine.party(manifest(for: file.app), identity: engine.tenant.identity(named: $0)) }
        let d = engine.openStoredFile(l, account: account, owner: ownerParty, receiver: party(id))
        let source = AuditEntry.Party(app: "location:\(l.name)", identity: file.owner ?? "personal", managed: ownerParty?.isManaged ?? false)
        let e = Self.entry(d, revision: revision, session: id, request: frameID, channel: "open-from", source: source, target: auditParty(id), size: file.size)
        guard d.allowed else {
            out.append(.audit(e))
            out.append(.send(id, Frame(id: frameID, .decision(Self.record(d)))))
            return .success(())
        }
        let job = newJob(.open(session: id, frameID: frameID, decision: d, file: file, entry: e), app: sessions[id]!.bundleID)
        out.append(.open(job: job, key: key, budget: budget(id)))
        return .success(())
    }

    mutating func finishOpen(_ n: Int, _ result: Result<Attachment, JobFailure>, _ out: inout [BrokerEffect]) {
        guard let job = takeJob(n), case let .open(id, frameID, d, file, e) = job else {
            if case let .success(a) = result { out.append(.release(attachment: a.token)) }
            return
        }
        switch result {
        case let .success(a):
            if sessions[id] != nil {
                // An open's answers: the decision, then the file, both under the request's id.
                out.append(.audit(e))
                out.append(.send(id, Frame(id: frameID, .decision(Self.record(d)))))
                out.append(.send(id, Frame(id: frameID, .file(name: file.key.name, owner: file.owner)), attachment: a.token))
            }
            out.append(.release(attachment: a.token))
        case let .failure(f):
            out.append(.log(LogLine(level: f.missing ? .warning : .error, message: "opening a stored file failed",
                                    metadata: ["file": file.key.relativePath, "reason": f.reason])))
            if sessions[id] != nil {
                out.append(.send(id, Frame(id: frameID, .error(code: f.missing ? .unknownTarget : .internalError, detail: "\(file.key.name) could not be opened"))))
            }
        }
    }
}
