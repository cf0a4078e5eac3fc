import MAMPolicy
import MAMService
import MAMWire

/// A connection the broker serves, as the core names it.
public struct SessionID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let raw: Int
    public init(_ raw: Int) { self.raw = raw }
    public static func < (a: SessionID, b: SessionID) -> Bool { a.raw < b.raw }
    public var description: String { "#\(raw)" }
}

/// Who is on the other end of a new connection, as the broker established it: from the
/// launcher's hand-off, or an unknown process on the public socket.
public struct Peer: Sendable, Equatable {
    public var bundleID: String
    public var pid: Int32
    /// The account the launcher's run signed in (`--user`); nil for none.
    public var account: String?
    public var fromLauncher: Bool
    /// SHA-256 of the manifest and of the program the launcher ran (nil: not said).
    public var manifestDigest: String?
    public var executableDigest: String?
    /// `mamlaunch run --developer`: the user's own program under an installed manifest.
    public var developer: Bool
    /// The user signed a personal account in as well (the hand-off's `personal`).
    public var personal: Bool

    public init(bundleID: String, pid: Int32, account: String? = nil, fromLauncher: Bool, manifestDigest: String? = nil,
                executableDigest: String? = nil, developer: Bool = false, personal: Bool = false) {
        self.personal = personal
        self.bundleID = bundleID
        self.pid = pid
        self.account = account
        self.fromLauncher = fromLauncher
        self.manifestDigest = manifestDigest
        self.executableDigest = executableDigest
        self.developer = developer
    }
}

/// What an installed app is made of, as the broker expects it: the SHA-256 of its manifest file
/// and of the program built for it (nil: not built, so no program is that app).
public struct InstalledProgram: Sendable, Equatable {
    public var manifestDigest: String?
    public var executableDigest: String?

    public init(manifestDigest: String?, executableDigest: String?) {
        self.manifestDigest = manifestDigest
        self.executableDigest = executableDigest
    }

    /// Whether a hand-off's digests are this app's: the program must be the built one; the
    /// manifest, when the launcher names one, the installed one.
    public func matches(_ peer: Peer) -> Bool {
        guard let expected = executableDigest, peer.executableDigest == expected else { return false }
        return peer.manifestDigest == nil || peer.manifestDigest == manifestDigest
    }
}

/// Checks a password against a tenant user's stored credential (`TenantUser.credential`).
/// Whether a password is the one a stored credential was made from (MAMCatalog's `Credential.matches`).
public typealias CredentialCheck = @Sendable (_ stored: String, _ password: String) -> Bool

/// A descriptor that came with a frame (or that the shell made), named by a token: the core
/// never holds descriptors, only what the shell found out about them before asking.
public struct Attachment: Sendable, Hashable {
    public var token: Int
    /// A memfd sealed against writes, shrinking, growing and further seals.
    public var sealed: Bool
    public var size: Int
    /// Bytes the file really occupies (`st_blocks` × 512): far below `size` means sparse.
    public var allocated: Int

    public init(token: Int, sealed: Bool, size: Int, allocated: Int) {
        self.token = token
        self.sealed = sealed
        self.size = size
        self.allocated = allocated
    }

    /// Mostly holes: a descriptor that claims a size its pages do not back. Copying it would
    /// write the holes out in full, so it is refused before any copy.
    public var isSparse: Bool { size > 64 * 1024 && allocated < size / 2 }
}

/// Where a stored file lives, built only from identifiers the broker owns: the location's
/// folder, the tenant user's object id for account-bound locations, and a checked name.
public struct StoredFileKey: Sendable, Hashable, CustomStringConvertible {
    /// The location's folder under `locations/` (a fixed list, never from an app).
    public var folder: String
    /// For account-bound locations: the folder of the resolved tenant user (its object id).
    public var accountFolder: String?
    /// One path component, checked by `NameRules`.
    public var name: String

    public init(folder: String, accountFolder: String?, name: String) {
        self.folder = folder
        self.accountFolder = accountFolder
        self.name = name
    }

    /// The path relative to the locations root, for logs and the state database.
    public var relativePath: String { [folder, accountFolder, name].compactMap { $0 }.joined(separator: "/") }
    public var description: String { relativePath }
}

/// What is known about a stored file: who owns its data, which app saved it, how big it is.
public struct StoredFile: Sendable, Hashable {
    public var key: StoredFileKey
    /// The managed account whose org data it is; nil for personal data.
    public var owner: String?
    public var app: String
    public var size: Int

    public init(key: StoredFileKey, owner: String?, app: String, size: Int) {
        self.key = key
        self.owner = owner
        self.app = app
        self.size = size
    }
}

/// One audit line, as the core decides it (the shell adds the time and the decision id).
public struct AuditEntry: Sendable, Equatable {
    public struct Party: Sendable, Equatable {
        public var app: String
        public var identity: String
        public var managed: Bool
        public init(app: String, identity: String, managed: Bool) {
            self.app = app
            self.identity = identity
            self.managed = managed
        }
    }
    public var session: SessionID
    /// The id of the request the decision answers (the requester's frame id).
    public var request: UInt32
    public var channel: String
    public var source: Party
    public var target: Party?
    public var dataType: String?
    public var size: Int?
    public var outcome: String
    /// The section of docs/SEMANTICS.md the deciding rule is in (several rules share one).
    public var rule: String
    public var tag: String
    public var detail: String?
    public var revision: Int
    /// The deciding rule's own name (`Rule`'s case, as `explain` names it): one rule, where
    /// `rule` is a section several share. Nil for a line no engine rule decided.
    public var ruleName: String? = nil
    /// Where the rule was chosen, file and line (`MAMPolicy/Transfer.swift:25`, `DecisionSite`).
    /// Nil for a line no rule decided.
    public var decidedAt: String? = nil

    public init(session: SessionID, request: UInt32, channel: String, source: Party, target: Party?,
                dataType: String?, size: Int?, outcome: String, rule: String, tag: String,
                detail: String?, revision: Int, ruleName: String? = nil, decidedAt: String? = nil) {
        self.session = session
        self.request = request
        self.channel = channel
        self.source = source
        self.target = target
        self.dataType = dataType
        self.size = size
        self.outcome = outcome
        self.rule = rule
        self.tag = tag
        self.detail = detail
        self.revision = revision
        self.ruleName = ruleName
        self.decidedAt = decidedAt
    }
}

/// What must be written to the state database. (A stored file is recorded by its `store` job,
/// with the file, before the core hears that it landed.)
public enum StateChange: Sendable, Equatable {
    case pasteboard(PasteboardState)
    /// The service's enrollments, the wipes not yet delivered and the ("app|account") pairs the
    /// user signed out, whole.
    case enrollments([Enrollment], Set<String>, signedOut: Set<String>)
    /// A wiped account's key is destroyed: what was encrypted under it can never be read again.
    case destroyKey(String)
}

/// The pasteboard as it survives a restart.
public struct PasteboardState: Sendable, Equatable {
    public var text: String
    public var types: [String]
    public var ownerApp: String
    /// "personal" or the account name.
    public var ownerIdentity: String
    public var changeCount: UInt32

    public init(text: String, types: [String], ownerApp: String, ownerIdentity: String, changeCount: UInt32) {
        self.text = text
        self.types = types
        self.ownerApp = ownerApp
        self.ownerIdentity = ownerIdentity
        self.changeCount = changeCount
    }
}

/// A line for the broker's own log. Values may come from apps: the shell escapes them.
public struct LogLine: Sendable, Equatable {
    public enum Level: String, Sendable { case info, notice, warning, error }
    public var level: Level
    public var message: String
    public var metadata: [String: String]

    public init(level: Level, message: String, metadata: [String: String]) {
        self.level = level
        self.message = message
        self.metadata = metadata
    }
}

/// What the shell must do. The core returns these in order; the shell carries them out.
public indirect enum BrokerEffect: Sendable, Equatable {
    /// Send a frame, with an attachment's descriptor when given. A send that would block closes
    /// that connection (the broker never waits on one app for another).
    case send(SessionID, Frame, attachment: Int? = nil)
    /// Deliver a frame the broker starts to a third party (a URL, a pushed document, an export
    /// request). Carried out only if it goes through at once: then `then` follows (the final
    /// answer and its audit entry); if the receiver is not reading, it keeps its connection and
    /// `otherwise` follows (the requester is told). So no app can get another one disconnected
    /// by flooding it, and nothing is audited that did not arrive.
    case deliver(SessionID, Frame, attachment: Int? = nil, then: [BrokerEffect], otherwise: [BrokerEffect])
    /// Close a connection; the core has already forgotten it.
    case close(SessionID, reason: String)
    case audit(AuditEntry)
    case persist(StateChange)
    /// Ask the app starter to start an app (its launch is pending until it says hello).
    case startApp(bundleID: String)
    /// Ask the launcher that started this app (pid as the launcher gave it) to restart it: the
    /// app declined to restart itself after its first policy.
    case restartApp(SessionID, pid: Int32)
    /// (`budget` names whose turn a job takes on the shell's worker lanes: one app's queue of
    /// large jobs does not hold up another app's.)
    /// Copy an attachment into a location and record it in the state database (off the event
    /// loop); answer with `.stored`.
    case store(job: Int, attachment: Int, file: StoredFile, budget: String)
    /// Open a stored file read-only (off the event loop); answer with `.opened`.
    case open(job: Int, key: StoredFileKey, budget: String)
    /// Encrypt an attachment under an account's key into a new sealed memfd; answer with `.encrypted`.
    /// `receiver`: the budget of the app the ciphertext is for, which it counts against while held.
    case encrypt(job: Int, attachment: Int, keyID: String, budget: String, receiver: String)
    /// Check a sign-in's password against the account's stored credential, slow by design
    /// (PBKDF2), so on a worker and never on the event loop; answer with `.credentialChecked`.
    case checkCredential(job: Int, stored: String, secret: String)
    /// Send the account's key (made the first time, kept in the state database) as `accountKey`
    /// answering `frameID`, or `internalError` when it cannot be read.
    case sendKey(SessionID, frameID: UInt32, account: String, keyID: String)
    /// An export request could not be delivered (its source is not reading): the shell hands it
    /// back as the event of the same name, so the core answers the importer once and frees its
    /// slot (before, the time-out answered the same request a second time).
    case exportUndelivered(brokerFrameID: UInt32)
    /// The core is done with this descriptor: close it.
    case release(attachment: Int)
    case log(LogLine)
}

/// What happens to the broker: the shell turns I/O into these.
public enum BrokerEvent: Sendable {
    case connected(SessionID, Peer)
    case frame(SessionID, Frame, Attachment?)
    /// A frame that did not decode, or broke the framing (oversized, two descriptors), with
    /// the frame's id when its header was read (else 0): the error answers under it.
    case badFrame(SessionID, UInt32, WireError)
    case disconnected(SessionID)
    case stored(job: Int, error: String?)
    case opened(job: Int, Result<Attachment, JobFailure>)
    case encrypted(job: Int, Result<Attachment, JobFailure>)
    /// The starter could not start an app (it may still never say hello: `tick` times that out).
    case startFailed(bundleID: String, reason: String)
    /// Time passed; the core reads its clock.
    case tick
    /// The admin: every running app checks in now.
    case sync
    /// The admin: a selective wipe of an account, in one app or every app.
    case wipe(account: String, app: String?)
    /// The effect `exportUndelivered`, handed back.
    case exportUndelivered(brokerFrameID: UInt32)
    /// The user signed an account in to this app instance after its launch: said by the launcher
    /// that handed it over (`sameLauncher`), or proven with the account's credential (`secret`).
    case signIn(SessionID, account: String, secret: String?, sameLauncher: Bool)
    /// A sign-in's password was checked (`checkCredential`).
    case credentialChecked(job: Int, matches: Bool)
}

public struct JobFailure: Error, Sendable, Equatable {
    public var reason: String
    /// A missing file is the app's mistake (unknownTarget); anything else is the broker's.
    public var missing: Bool
    /// A bound of the receiver's was reached (limitReached, with the reason, to the requester).
    public var limitReached: Bool
    public init(_ reason: String, missing: Bool = false, limitReached: Bool = false) {
        self.reason = reason
        self.missing = missing
        self.limitReached = limitReached
    }
}

/// Every bound the broker keeps, so that one app cannot exhaust what the others need.
public struct BrokerLimits: Sendable, Equatable {
    /// Largest document saved to a location.
    public var maximumFileSize = 256 << 20
    /// Bytes one app may keep in locations in all.
    public var quotaPerApp = 1 << 30
    /// Largest document the broker encrypts for an `encrypted` outcome (it reads those).
    public var maximumEncryptedSize = 256 << 20
    /// Bytes of encrypted documents the broker made that one receiving app may hold at once:
    /// the broker writes them, so they are charged to the broker's memory, not the app's.
    public var encryptedHeldPerApp = 512 << 20
    /// Imports one app may have waiting for their source.
    public var pendingImportsPerApp = 8
    /// Saves, opens and encryptions one app may have in flight.
    public var jobsPerApp = 4
    /// URLs waiting for one app that is being started.
    public var pendingURLsPerTarget = 16
    /// Export requests one source app may have unanswered, from every importer together.
    public var pendingExportsPerSource = 64
    /// How long a source has to answer an export request before the importer is told.
    public var exportTimeout: Duration = .seconds(30)
    /// How long an app being started has to say hello.
    public var launchTimeout: Duration = .seconds(15)
    /// Connections on the public socket (unknown apps).
    public var publicConnections = 64

    public init() {}
}
