import MAMBrokerCore
import MAMWire

/// The embedded broker's shell: every effect recorded, every descriptor a string held by
/// token, every job done at once (or held back, to finish late or never).
public struct EmbeddedShell: BrokerShell {
    /// What a document descriptor holds here: its text, and whether it is ciphertext.
    public struct Content: Equatable, Sendable {
        public var text: String
        public var encrypted = false
        public init(text: String, encrypted: Bool = false) {
            self.text = text
            self.encrypted = encrypted
        }
    }

    /// Something an app received.
    public struct Delivered: Sendable {
        public var frame: Frame
        public var content: Content?
    }

    /// Descriptors the core holds, by token.
    public var contents: [Int: Content] = [:]
    /// The storage locations.
    public var disk: [StoredFileKey: Content] = [:]
    public var inbox: [SessionID: [Delivered]] = [:]
    public var audits: [AuditEntry] = []
    /// What the core asked to be written, in order.
    public var persisted: [StateChange] = []
    public var logs: [LogLine] = []
    public var closed: Set<SessionID> = []
    /// Apps whose connection is full: deliveries to them fail, as a send that would block does.
    public var notReading: Set<SessionID> = []
    public var started: [String] = []
    public var restarted: [SessionID] = []
    public var nextToken = 1
    /// Jobs are held back (a test finishes them late with `flushJobs`, or never).
    public var deferJobs = false
    /// How a sign-in's password is checked (the broker's is MAMCatalog's `Credential.matches`).
    public var credentials: CredentialCheck?
    public var pendingJobs: [BrokerEffect] = []

    public init() {}

    /// A sealed document (or, with `sealed: false`, any descriptor).
    public mutating func document(_ text: String, sealed: Bool = true, size: Int? = nil, allocated: Int? = nil) -> Attachment {
        let token = nextToken
        nextToken += 1
        contents[token] = Content(text: text)
        let n = size ?? text.utf8.count
        return Attachment(token: token, sealed: sealed, size: n, allocated: allocated ?? n)
    }

    public mutating func send(_ frame: Frame, to id: SessionID, attachment: Int?) -> SendResult {
        inbox[id, default: []].append(Delivered(frame: frame, content: attachment.flatMap { contents[$0] }))
        return .sent
    }

    public mutating func deliver(_ frame: Frame, to id: SessionID, attachment: Int?) -> Bool {
        guard !notReading.contains(id) else { return false }
        inbox[id, default: []].append(Delivered(frame: frame, content: attachment.flatMap { contents[$0] }))
        return true
    }

    public mutating func close(_ id: SessionID, reason: String?) { closed.insert(id) }
    public mutating func audit(_ entry: AuditEntry) { audits.append(entry) }
    public mutating func log(_ line: LogLine) { logs.append(line) }
    public mutating func persist(_ change: StateChange) { persisted.append(change) }
    public mutating func startApp(bundleID: String) { started.append(bundleID) }
    public mutating func restartApp(_ session: SessionID, pid: Int32) { restarted.append(session) }

    public mutating func store(job: Int, attachment: Int, file: StoredFile, budget: String) -> BrokerEvent? {
        hold(.store(job: job, attachment: attachment, file: file, budget: budget))
    }
    public mutating func open(job: Int, key: StoredFileKey, budget: String) -> BrokerEvent? {
        hold(.open(job: job, key: key, budget: budget))
    }
    public mutating func encrypt(job: Int, attachment: Int, keyID: String, budget: String, receiver: String) -> BrokerEvent? {
        hold(.encrypt(job: job, attachment: attachment, keyID: keyID, budget: budget, receiver: receiver))
    }

    public mutating func checkCredential(job: Int, stored: String, secret: String) -> BrokerEvent? {
        hold(.checkCredential(job: job, stored: stored, secret: secret))
    }

    /// The key is a function of its id here (the broker's lives in its state database).
    public mutating func key(_ keyID: String) -> [UInt8]? {
        (0..<32).map { UInt8(truncatingIfNeeded: $0 &+ keyID.utf8.count) }
    }

    public mutating func release(attachment token: Int) {
        precondition(contents[token] != nil, "released \(token) twice or never had it")
        contents[token] = nil
    }

    mutating func hold(_ job: BrokerEffect) -> BrokerEvent? {
        guard deferJobs else { return finish(job) }
        pendingJobs.append(job)
        return nil
    }

    /// Does one job as the broker's workers would, and says how it ended.
    mutating func finish(_ job: BrokerEffect) -> BrokerEvent? {
        switch job {
        case let .store(job, token, file, _):
            disk[file.key] = contents[token]
            return .stored(job: job, error: nil)
        case let .open(job, key, _):
            guard let c = disk[key] else { return .opened(job: job, .failure(JobFailure("gone", missing: true))) }
            let a = document(c.text)
            contents[a.token] = c
            return .opened(job: job, .success(a))
        case let .encrypt(job, token, _, _, _):
            var a = document("ciphertext")
            a.sealed = true
            contents[a.token] = Content(text: contents[token]!.text, encrypted: true)
            return .encrypted(job: job, .success(a))
        case let .checkCredential(job, stored, secret):
            return .credentialChecked(job: job, matches: credentials?(stored, secret) ?? false)
        default: return nil
        }
    }
}
