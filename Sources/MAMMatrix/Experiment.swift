import MAMPolicy

/// A sharing-matrix experiment: which apps, signed in how, try which channels under which
/// policies, and (optionally) what each cell should come out as (docs/MATRIX.md).
///
/// A value with no I/O: the loader reads one from JSON, the built-ins are written in code, and
/// `Plan` turns one into cells against a tenant and its app manifests.
public struct Experiment: Sendable, Hashable {
    public var name: String
    public var description: String
    /// The tenant file; nil is the sample tenant (Policies/contoso/tenant.json).
    public var tenant: String?
    public var parties: [PartySpec]
    /// Channels tried between every ordered pair of parties of different apps (push and pull
    /// ones) or by every party (save-to, open-from). Empty when only `cells` are wanted.
    public var channels: [ChannelSpec]
    /// What the apps send.
    public var payload: Payload
    /// The policies the whole matrix runs under, one matrix each.
    public var policies: [PolicyRef]
    /// Cells written out one by one (with their expected outcomes), besides the generated ones.
    public var cells: [CellSpec]
    /// `parties: policy-apps`: the parties are made from what the policies target (PolicyApps)
    /// when the run knows the tenant and the apps; `parties` is empty until then.
    public var policyApps = false

    public init(name: String, description: String = "", tenant: String? = nil, parties: [PartySpec],
                channels: [ChannelSpec] = [], payload: Payload = Payload(), policies: [PolicyRef] = [.tenant],
                cells: [CellSpec] = []) {
        self.name = name
        self.description = description
        self.tenant = tenant
        self.parties = parties
        self.channels = channels
        self.payload = payload
        self.policies = policies
        self.cells = cells
    }

    public func party(named name: String) -> PartySpec? { parties.first { $0.name == name } }
}

/// One side of a cell: an app, the accounts signed in to it and the identity it acts under.
public struct PartySpec: Sendable, Hashable, Codable {
    /// How the party is called in cells and reports ("Mail (adele)").
    public var name: String
    /// An Apps/ folder name or a bundle id.
    public var app: String
    /// Accounts signed in, in sign-in order: UPNs, OIDs, personal accounts (`personal` for an
    /// anonymous personal identity).
    public var accounts: [String]
    /// The identity the app acts under: one of `accounts`, `personal`, or `none` (a
    /// multi-identity app that has set none yet); nil: the first account, else the app's default.
    public var identity: String?

    public init(name: String, app: String, accounts: [String] = [], identity: String? = nil) {
        self.name = name
        self.app = app
        self.accounts = accounts
        self.identity = identity
    }
}

/// How data moves in a cell.
public enum Channel: String, Sendable, Hashable, CaseIterable, Codable {
    /// The source pushes a document to the target (seed 002's "send"; Open-in/share on the wire).
    case send
    /// The same push, seen from the target (seed 002's "passive receive").
    case receive
    /// The target pulls a document from the source while it runs (seed 002's "import").
    case `import`
    /// Open-in / share of the experiment's document type.
    case openIn = "open-in"
    /// Text copied in the source, pasted in the target.
    case paste
    /// The source opens a URL the target handles.
    case openURL = "open-url"
    /// The source saves org data to a storage location.
    case saveTo = "save-to"
    /// The source saves a file to a location, the target opens it from there.
    case openFrom = "open-from"
    /// The source app signs in `account`; `check` is then managed or not (seed 002's login table).
    case login
    /// The source app signs out `account`; `check` is then managed or not (seed 002's logout table).
    case logout

    /// Channels between two apps (the others involve one app and a location or an account).
    public var hasTarget: Bool {
        switch self {
        case .saveTo, .login, .logout: return false
        default: return true
        }
    }

    public var needsLocation: Bool { self == .saveTo || self == .openFrom }
    /// A document handed from one running app to another through the broker (share or import).
    public var carriesDocument: Bool { self == .send || self == .receive || self == .openIn || self == .import }
    public var isAccountChannel: Bool { self == .login || self == .logout }
}

/// A channel with its location, where it has one: `save-to dropbox`, `open-from sharePoint:adele@contoso.com`,
/// and for open-url the URL opened, when it is not the target's own scheme: `open-url https://contoso.sharepoint.com/q3`.
public struct ChannelSpec: Sendable, Hashable, Codable, CustomStringConvertible {
    public var channel: Channel
    /// `LOCATION[:ACCOUNT]` for save-to and open-from; the URL for open-url.
    public var location: String?

    public init(_ channel: Channel, location: String? = nil) {
        self.channel = channel
        self.location = location
    }

    public var description: String { location.map { "\(channel.rawValue) \($0)" } ?? channel.rawValue }

    /// The URL an open-url cell opens, when the experiment names one.
    public var url: String? { channel == .openURL ? location : nil }

    /// Why `url` cannot be an open-url channel's URL (it becomes a command word and an engine
    /// input): a scheme (RFC 3986) and a colon, then printable ASCII without spaces, at most 2,048
    /// bytes. Any scheme: http, https, an app's own, an exempt one — the policy decides.
    public static func urlProblem(_ url: String) -> String? {
        if url.utf8.count > 2048 { return "a URL is at most 2,048 bytes" }
        if url.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7f }) { return "a URL is printable ASCII without spaces" }
        guard let colon = url.firstIndex(of: ":"), let first = url.unicodeScalars.first, first.properties.isAlphabetic,
              url[..<colon].unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0) })
        else { return "not a URL: it needs a scheme (a letter, then letters, digits, '+', '-', '.') and ':'" }
        return nil
    }

    /// The location's name and account.
    public var locationParts: (name: String, account: String?)? {
        guard channel.needsLocation, let location else { return nil }
        guard let colon = location.firstIndex(of: ":") else { return (location, nil) }
        return (String(location[..<colon]), String(location[location.index(after: colon)...]))
    }
}

/// What a source sends.
public struct Payload: Sendable, Hashable {
    /// Copied and pasted.
    public var text: String
    /// Pushed, imported, saved: a document of this type, name and content.
    public var documentType: String
    public var documentName: String
    public var documentContent: String
    /// Opened as `<target's first URL scheme>://<urlPath>`.
    public var urlPath: String

    /// The document a cell carries unless the experiment names another (and `explain`'s).
    public static let defaultDocumentType = "com.adobe.pdf"

    public init(text: String = "Q3 forecast: 4.2M (org data)", documentType: String = Payload.defaultDocumentType,
                documentName: String = "q3.pdf", documentContent: String = "Q3 forecast: 4.2M, confidential",
                urlPath: String = "matrix/open?doc=42") {
        self.text = text
        self.documentType = documentType
        self.documentName = documentName
        self.documentContent = documentContent
        self.urlPath = urlPath
    }
}

/// A policy a matrix runs under.
public enum PolicyRef: Sendable, Hashable, CustomStringConvertible {
    /// The tenant as it is: each user gets the policy that targets them.
    case tenant
    /// A policy file (Graph JSON or debug plist) whose settings replace every policy of the
    /// tenant, keeping who each targets (`mamlaunch explain --policy`).
    case file(String)

    /// How reports name it: `tenant`, or the file's name without folder and extension.
    public var label: String {
        switch self {
        case .tenant: return "tenant"
        case let .file(path):
            let last = path.split(separator: "/").last.map(String.init) ?? path
            guard let dot = last.lastIndex(of: "."), dot != last.startIndex else { return last }
            return String(last[..<dot])
        }
    }

    public var description: String {
        switch self {
        case .tenant: return "tenant"
        case let .file(path): return path
        }
    }
}

/// One cell written out in an experiment.
public struct CellSpec: Sendable, Hashable {
    /// What the row is (seed 002's wording, for instance).
    public var label: String?
    public var channel: ChannelSpec
    public var source: String
    public var target: String?
    /// Login/logout: the account signed in or out, and the one whose managed state is checked
    /// afterwards (default: `account`).
    public var account: String?
    public var check: String?
    /// Policy labels the cell runs under; empty: every policy of the experiment.
    public var policies: [String]
    public var expect: Expectation?

    public init(label: String? = nil, channel: ChannelSpec, source: String, target: String? = nil, account: String? = nil,
                check: String? = nil, policies: [String] = [], expect: Expectation? = nil) {
        self.label = label
        self.channel = channel
        self.source = source
        self.target = target
        self.account = account
        self.check = check
        self.policies = policies
        self.expect = expect
    }
}

/// What a cell should come out as.
public struct Expectation: Sendable, Hashable, Codable {
    /// Any of these outcomes passes (most expectations name one).
    public var outcomes: [Outcome]
    /// For `switched`: the identity the data must arrive under.
    public var identity: String?
    /// For login/logout: whether `check` must be managed afterwards.
    public var managed: Bool?
    /// Why the expectation is what it is (shown in reports).
    public var note: String?

    public init(_ outcomes: [Outcome], identity: String? = nil, managed: Bool? = nil, note: String? = nil) {
        self.outcomes = outcomes
        self.identity = identity
        self.managed = managed
        self.note = note
    }

    public init(_ outcome: Outcome, identity: String? = nil, managed: Bool? = nil, note: String? = nil) {
        self.init([outcome], identity: identity, managed: managed, note: note)
    }
}
