import Foundation

/// A scripted-mode command (docs/SCRIPTING.md) with its arguments checked: what both
/// interpreters (MAMKitScripting over the SDK, Notes over raw MAMWire) switch over, so that a
/// command means the same and is refused the same in either. Words stay as they were written
/// (`personal`, `-`): what they stand for is the interpreter's.
public indirect enum Script: Sendable, Hashable {
    case hello
    case identity(String)
    /// `window NAME`, `window NAME key`, `window NAME identity ACCOUNT|personal|none`,
    /// `window NAME identities A,B,…` (a view of several accounts).
    case window(String, WindowChange?)
    case pause
    case resume
    case delegate(DelegateAnswer)
    /// `in ACCOUNT COMMAND ...`: one command (not `in`, not `bye`) under a scoped identity.
    case within(account: String, Script)
    case scopes(String)
    case registered
    /// The accounts a launch check blocked, and the last check told of each.
    case blocked
    case allowedAccounts
    case queues(String)
    /// `queued COMMAND ...`: one command (not `queued`, not `bye`) run from work queued the plain
    /// way (`DispatchQueue.global().async`), as an app's background work would.
    case queued(Script)
    case policy(String?)
    /// The policy asked for again, as at a check-in (after the broker took a new tenant).
    case refresh
    case openURL(String)
    case canOpen(String)
    case copy(String)
    case paste
    case targets(contentType: String)
    case share(target: String, contentType: String, name: String, content: String)
    case serve(contentType: String, name: String, content: String)
    case importDocument(source: String, contentType: String)
    /// `account` nil: `-` (no account named).
    case save(location: String, account: String?, name: String, content: String)
    case open(location: String, account: String?, name: String)
    case wait(kind: String, seconds: Double)
    case events
    case writeFile(name: String, account: String?, text: String)
    case readFile(name: String)
    case writeAt(name: String, account: String, offset: Int, text: String)
    case readAt(name: String, account: String, offset: Int, count: Int)
    case files
    case protect(account: String, text: String)
    case unprotect([UInt8])
    case enroll(String)
    case loginEnroll
    case unenroll(String, wipe: Bool)
    case appConfig(String)
    case token(String)
    case remediate(String, silent: Bool)
    case bye

    public enum WindowChange: Sendable, Hashable {
        case key
        case identity(String)
        /// A view of several accounts; `personal` in the list is the personal account.
        case identities([String])
    }

    /// The app delegate's answers a script sets (`delegate WHAT ANSWER`).
    public enum DelegateAnswer: Sendable, Hashable {
        case conditionalLaunch(pass: Bool)
        case switchIdentity(allow: Bool)
        case wipe(done: Bool)
        case restart(itself: Bool)
    }

    /// The kinds of event `wait` takes.
    public static let eventKinds = ["url", "document", "notice", "wipe", "restart", "config", "compliance", "allowed-accounts", "signin", "launch"]

    /// A command that is unknown or whose arguments are wrong: said to the script as it is.
    public struct UsageError: Error, Sendable, Hashable, CustomStringConvertible {
        public var message: String
        public init(_ message: String) { self.message = message }
        public var description: String { message }
    }

    /// Checks `command`'s arguments once, for both interpreters.
    public init(_ command: ScriptCommand) throws(UsageError) {
        let a = command.arguments
        func count(_ range: ClosedRange<Int>, _ usage: String) throws(UsageError) {
            guard range.contains(a.count) else { throw UsageError("usage: \(command.name) \(usage)") }
        }
        func number(_ text: String, _ range: ClosedRange<Int>, _ what: String) throws(UsageError) -> Int {
            guard let n = Int(text), range.contains(n) else { throw UsageError(what) }
            return n
        }
        switch command.name {
        case "hello": try count(0...0, ""); self = .hello
        case "identity": try count(1...1, "ACCOUNT|personal"); self = .identity(a[0])
        case "window":
            let usage = "usage: window NAME [identity ACCOUNT|personal|none | identities ACCOUNT,ACCOUNT,… | key]"
            switch (a.count, a.count > 1 ? a[1] : "") {
            case (1, _): self = .window(a[0], nil)
            case (2, "key"): self = .window(a[0], .key)
            case (3, "identity"): self = .window(a[0], .identity(a[2]))
            case (3, "identities"):
                self = .window(a[0], .identities(a[2].split(separator: ",", omittingEmptySubsequences: false).map(String.init)))
            default: throw UsageError(usage)
            }
        case "pause": try count(0...0, ""); self = .pause
        case "resume": try count(0...0, ""); self = .resume
        case "delegate":
            let usage = "conditional-launch pass|cancel | switch allow|refuse | wipe done|decline | restart self|sdk"
            try count(2...2, usage)
            switch (a[0], a[1]) {
            case ("conditional-launch", "pass"), ("conditional-launch", "cancel"): self = .delegate(.conditionalLaunch(pass: a[1] == "pass"))
            case ("switch", "allow"), ("switch", "refuse"): self = .delegate(.switchIdentity(allow: a[1] == "allow"))
            case ("wipe", "done"), ("wipe", "decline"): self = .delegate(.wipe(done: a[1] == "done"))
            case ("restart", "self"), ("restart", "sdk"): self = .delegate(.restart(itself: a[1] == "self"))
            default: throw UsageError("usage: delegate \(usage)")
            }
        case "in":
            guard a.count >= 2 else { throw UsageError("usage: in ACCOUNT|personal COMMAND [ARGUMENTS]") }
            guard a[1] != "in", a[1] != "bye" else { throw UsageError("in takes one command other than in and bye") }
            self = .within(account: a[0], try Script(ScriptCommand(a[1], Array(a.dropFirst(2)))))
        case "scopes": try count(1...1, "ACCOUNT|personal"); self = .scopes(a[0])
        case "registered": try count(0...0, ""); self = .registered
        case "blocked": try count(0...0, ""); self = .blocked
        case "allowed-accounts": try count(0...0, ""); self = .allowedAccounts
        case "queues": try count(1...1, "ACCOUNT|personal"); self = .queues(a[0])
        case "queued":
            guard a.count >= 1 else { throw UsageError("usage: queued COMMAND [ARGUMENTS]") }
            guard a[0] != "queued", a[0] != "bye" else { throw UsageError("queued takes one command other than queued and bye") }
            self = .queued(try Script(ScriptCommand(a[0], Array(a.dropFirst()))))
        case "policy": try count(0...1, "[ACCOUNT]"); self = .policy(a.first)
        case "refresh": try count(0...0, ""); self = .refresh
        case "open-url": try count(1...1, "URL"); self = .openURL(a[0])
        case "can-open": try count(1...1, "URL"); self = .canOpen(a[0])
        case "copy": try count(1...1, "TEXT"); self = .copy(a[0])
        case "paste": try count(0...0, ""); self = .paste
        case "targets": try count(1...1, "TYPE"); self = .targets(contentType: a[0])
        case "share": try count(4...4, "TARGET TYPE NAME CONTENT"); self = .share(target: a[0], contentType: a[1], name: a[2], content: a[3])
        case "serve": try count(3...3, "TYPE NAME CONTENT"); self = .serve(contentType: a[0], name: a[1], content: a[2])
        case "import": try count(2...2, "SOURCE TYPE"); self = .importDocument(source: a[0], contentType: a[1])
        case "save":
            try count(4...4, "LOCATION ACCOUNT|- NAME CONTENT")
            self = .save(location: a[0], account: a[1] == "-" ? nil : a[1], name: a[2], content: a[3])
        case "open":
            try count(3...3, "LOCATION ACCOUNT|- NAME")
            self = .open(location: a[0], account: a[1] == "-" ? nil : a[1], name: a[2])
        case "wait":
            try count(1...2, "KIND [SECONDS]")
            guard Self.eventKinds.contains(a[0]) else {
                throw UsageError("\(a[0]) is not an event kind (\(Self.eventKinds.joined(separator: ", ")))")
            }
            let seconds = a.count > 1 ? Double(a[1]) : 5
            guard let seconds, seconds >= 0, seconds <= 3600 else { throw UsageError("SECONDS is a number from 0 to 3600") }
            self = .wait(kind: a[0], seconds: seconds)
        case "events": try count(0...0, ""); self = .events
        case "write-file": try count(3...3, "NAME ACCOUNT|- TEXT"); self = .writeFile(name: a[0], account: a[1] == "-" ? nil : a[1], text: a[2])
        case "read-file": try count(1...1, "NAME"); self = .readFile(name: a[0])
        case "write-at":
            try count(4...4, "NAME ACCOUNT OFFSET TEXT")
            self = .writeAt(name: a[0], account: a[1], offset: try number(a[2], 0...(1 << 30), "OFFSET is a byte offset from 0 to 2^30"), text: a[3])
        case "read-at":
            try count(4...4, "NAME ACCOUNT OFFSET COUNT")
            let offset = try number(a[2], 0...(1 << 30), "OFFSET is a byte offset from 0 to 2^30")
            self = .readAt(name: a[0], account: a[1], offset: offset, count: try number(a[3], 0...(1 << 20), "COUNT is from 0 to 2^20 bytes"))
        case "files": try count(0...0, ""); self = .files
        case "protect": try count(2...2, "ACCOUNT TEXT"); self = .protect(account: a[0], text: a[1])
        case "unprotect":
            try count(1...1, "BASE64")
            guard let data = Data(base64Encoded: a[0]) else { throw UsageError("not base64") }
            self = .unprotect(Array(data))
        case "enroll": try count(1...1, "ACCOUNT"); self = .enroll(a[0])
        case "login-enroll": try count(0...0, ""); self = .loginEnroll
        case "unenroll":
            try count(2...2, "ACCOUNT wipe|keep")
            guard a[1] == "wipe" || a[1] == "keep" else { throw UsageError("usage: unenroll ACCOUNT wipe|keep") }
            self = .unenroll(a[0], wipe: a[1] == "wipe")
        case "app-config": try count(1...1, "ACCOUNT"); self = .appConfig(a[0])
        case "token": try count(1...1, "ACCOUNT"); self = .token(a[0])
        case "remediate":
            try count(2...2, "ACCOUNT silent|interactive")
            guard a[1] == "silent" || a[1] == "interactive" else { throw UsageError("usage: remediate ACCOUNT silent|interactive") }
            self = .remediate(a[0], silent: a[1] == "silent")
        case "bye": try count(0...0, ""); self = .bye
        default: throw UsageError("unknown command \(command.name)")
        }
    }
}
