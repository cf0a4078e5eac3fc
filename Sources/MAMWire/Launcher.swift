import SystemPackage

/// What the launcher tells the broker on the launcher socket (docs/PROTOCOL.md, "Launcher
/// hand-off"): one typed, versioned message per packet, shared by both ends.
///
///     magic "ML" | version u8 | type u8 | length u32 | payload
///
/// The broker learns who an app is only from here, never from the app.
public enum LauncherMessage: Sendable, Equatable {
    /// An app the launcher started; the packet carries the broker's end of the app's pair.
    case adopt(Adoption)
    /// A system call the sandbox refused or killed the app for.
    case violation(SandboxViolation)
    /// Control: move a virtual clock forward (`mamlaunch clock advance`), in milliseconds.
    case advanceClock(milliseconds: UInt64)
    /// Control: every running app checks in now (`mamlaunch sync`).
    case sync
    /// Control: a selective wipe of an account, in one app or all (`mamlaunch wipe`).
    case wipe(account: String, app: String?)
    /// The broker's answer to a control message: whether it was done, and what it says.
    case controlReply(ok: Bool, detail: String)
    /// The broker asks the launcher to restart the app it started with this pid: the app
    /// declined to restart itself after its first policy (the SDK restarts it then).
    case restart(pid: Int32)
    /// The broker has let go of the app the launcher started with this pid (its connection
    /// ended). Sent after anything the broker had for that app (a `restart`), so a launcher
    /// whose app has exited knows when no restart request can still come.
    case ended(pid: Int32)
    /// The user signed an account in to the app handed over with this pid (a sign-in after
    /// launch, as `--user` is one at launch): from the launcher connection that handed it over,
    /// or from any launcher with the account's credential (`secret`, the password the user typed).
    /// Answered with `controlReply`.
    case signIn(pid: Int32, account: String, secret: String?)
    /// Control: load the tenant file again, as SIGHUP does, and answer (`controlReply`) once
    /// the new policy decides: a launcher that runs one experiment under several policies
    /// (`mamlaunch matrix`) switches the policy between them and goes on only then.
    case reloadTenant
    /// Control: change the device profile the broker holds (`mamlaunch device set`): a JSON
    /// object of the profile's keys to change (docs/POLICIES.md, "The device"), with `offlineFor`
    /// in minutes on the broker's clock (0: online). `{}` changes nothing and shows the profile.
    /// Answered with `controlReply`: the profile and what the running apps' launch checks did.
    case setDevice(change: String)

    /// 2: `adopt` carries the program's digests and the developer and personal flags; `ended`
    /// and `signIn` are new.
    public static let version: UInt8 = 2
    static let magic: [UInt8] = [0x4D, 0x4C]

    public var carriesDescriptor: Bool {
        if case .adopt = self { return true }
        return false
    }

    public func encode() -> [UInt8] {
        var w = Wire.Writer()
        let type: UInt8
        switch self {
        case let .adopt(a):
            type = 0x01
            w.text(a.bundleID); w.u32(UInt32(bitPattern: a.pid)); w.optionalText(a.account)
            w.optionalText(a.manifestDigest); w.optionalText(a.executableDigest); w.bool(a.developer); w.bool(a.personal)
        case let .violation(v):
            type = 0x02
            w.text(v.bundleID); w.u32(UInt32(bitPattern: v.pid)); w.text(v.syscall); w.optionalText(v.detail)
            w.u8(v.action.rawValue); w.text(v.time)
        case let .advanceClock(ms):
            type = 0x03
            w.u32(UInt32(truncatingIfNeeded: ms)); w.u32(UInt32(truncatingIfNeeded: ms >> 32))
        case let .controlReply(ok, detail):
            type = 0x04
            w.bool(ok); w.text(detail)
        case .sync:
            type = 0x05
        case let .wipe(account, app):
            type = 0x06
            w.text(account); w.optionalText(app)
        case let .restart(pid):
            type = 0x07
            w.u32(UInt32(bitPattern: pid))
        case let .ended(pid):
            type = 0x08
            w.u32(UInt32(bitPattern: pid))
        case let .signIn(pid, account, secret):
            type = 0x09
            w.u32(UInt32(bitPattern: pid)); w.text(account); w.optionalText(secret)
        case .reloadTenant:
            type = 0x0A
        case let .setDevice(change):
            type = 0x0B
            w.text(change)
        }
        return Self.magic + [Self.version, type] + Wire.le(UInt32(w.bytes.count)) + w.bytes
    }

    /// Decodes one packet strictly, as `Wire.decode` does frames.
    public static func decode(_ bytes: [UInt8]) throws(WireError) -> LauncherMessage {
        guard bytes.count >= 8 else { throw WireError(.truncated, "launcher message of \(bytes.count) bytes is shorter than its 8-byte header") }
        guard bytes[0] == magic[0], bytes[1] == magic[1] else {
            throw WireError(.badMagic, "bytes 0-1 are 0x\(Wire.hex(bytes[0]))\(Wire.hex(bytes[1])); a launcher message starts with \"ML\" (0x4D4C)")
        }
        guard bytes[2] == version else { throw WireError(.unsupportedVersion, "byte 2: launcher message version \(bytes[2]); this side speaks \(version)") }
        var r = Wire.Reader(bytes: bytes, offset: 4)
        let length = Int(try r.u32("length"))
        guard 8 + length == bytes.count else {
            throw WireError(8 + length > bytes.count ? .truncated : .trailingBytes,
                            "header announces \(length) payload bytes; \(bytes.count - 8) arrived")
        }
        let message: LauncherMessage
        switch bytes[3] {
        case 0x01:
            let bundle = try r.text("bundleID"), pid = Int32(bitPattern: try r.u32("pid"))
            let account = try r.optionalText("account")
            let manifestDigest = try r.optionalText("manifestDigest"), executableDigest = try r.optionalText("executableDigest")
            let developer = try r.bool("developer")
            message = .adopt(Adoption(bundleID: bundle, pid: pid, account: account, manifestDigest: manifestDigest,
                                      executableDigest: executableDigest, developer: developer, personal: try r.bool("personal")))
        case 0x02:
            let bundle = try r.text("bundleID"), pid = Int32(bitPattern: try r.u32("pid"))
            let syscall = try r.text("syscall"), detail = try r.optionalText("detail")
            let at = r.offset
            guard let action = SandboxViolation.Action(rawValue: try r.u8("action")) else {
                throw WireError(.fieldOutOfRange, "field action at byte \(at) is \(bytes[at]); allowed 0 (denied), 1 (killed)")
            }
            message = .violation(SandboxViolation(bundleID: bundle, pid: pid, syscall: syscall, detail: detail, action: action, time: try r.text("time")))
        case 0x03:
            let low = UInt64(try r.u32("milliseconds")), high = UInt64(try r.u32("milliseconds"))
            message = .advanceClock(milliseconds: high << 32 | low)
        case 0x04:
            message = .controlReply(ok: try r.bool("ok"), detail: try r.text("detail"))
        case 0x05:
            message = .sync
        case 0x06:
            message = .wipe(account: try r.text("account"), app: try r.optionalText("app"))
        case 0x07:
            message = .restart(pid: Int32(bitPattern: try r.u32("pid")))
        case 0x08:
            message = .ended(pid: Int32(bitPattern: try r.u32("pid")))
        case 0x09:
            let pid = Int32(bitPattern: try r.u32("pid"))
            let account = try r.text("account")
            message = .signIn(pid: pid, account: account, secret: try r.optionalText("secret"))
        case 0x0A:
            message = .reloadTenant
        case 0x0B:
            message = .setDevice(change: try r.text("change"))
        case let t:
            throw WireError(.unknownType, "byte 3: unknown launcher message type 0x\(Wire.hex(t))")
        }
        guard r.offset == bytes.count else { throw WireError(.trailingBytes, "\(bytes.count - r.offset) bytes after the last field, at byte \(r.offset)") }
        return message
    }

    /// Sends the message on a launcher connection, with the app's end of its pair for `adopt`
    /// (borrowed: the broker gets its own copy, the caller still closes this one).
    public func send(on socket: WireSocket, descriptor: FileDescriptor? = nil) throws(WireError) {
        try socket.sendRaw(encode(), descriptor: descriptor)
    }
}

/// An app handed to the broker.
public struct Adoption: Sendable, Equatable {
    /// The bundle id of the manifest the launcher ran the app under.
    public var bundleID: String
    public var pid: Int32
    /// The account the run signed in (`mamlaunch run --user`), if any.
    public var account: String?
    /// SHA-256 (lower-case hex) of the manifest file the app runs under, its real path resolved.
    public var manifestDigest: String?
    /// SHA-256 (lower-case hex) of the program the launcher executes, its real path resolved
    /// (for an interpreter, the interpreter). An installed bundle id is the installed app only
    /// when this is the digest of the program built for it.
    public var executableDigest: String?
    /// `mamlaunch run --developer`: the user runs a program of their own under an installed
    /// app's manifest, knowingly; it keeps the app's bundle id but is never given a key.
    public var developer: Bool
    /// The user has a personal account signed in to the app as well (beside `account`).
    public var personal: Bool

    public init(bundleID: String, pid: Int32, account: String?, manifestDigest: String? = nil, executableDigest: String? = nil,
                developer: Bool = false, personal: Bool = false) {
        self.personal = personal
        self.bundleID = bundleID
        self.pid = pid
        self.account = account
        self.manifestDigest = manifestDigest
        self.executableDigest = executableDigest
        self.developer = developer
    }
}

/// One refused system call, as the launcher's supervisor saw it.
public struct SandboxViolation: Sendable, Equatable {
    public enum Action: UInt8, Sendable { case denied = 0, killed = 1 }
    public var bundleID: String
    public var pid: Int32
    public var syscall: String
    /// The file, address family or signal target, where there is one (app-controlled: escape it).
    public var detail: String?
    public var action: Action
    /// ISO 8601, UTC.
    public var time: String

    public init(bundleID: String, pid: Int32, syscall: String, detail: String?, action: Action, time: String) {
        self.bundleID = bundleID
        self.pid = pid
        self.syscall = syscall
        self.detail = detail
        self.action = action
        self.time = time
    }
}

extension SandboxViolation: CustomStringConvertible {
    /// One log line, as the launcher prints it: the detail comes from the app (a file name may
    /// hold a newline or a terminal escape), so it is escaped, as the bundle id from its
    /// manifest is.
    public var description: String {
        let shown = detail.map { " " + LogText.escaped($0) } ?? ""
        return "\(time) sandbox violation: \(LogText.escaped(bundleID)) (pid \(pid)) \(syscall)\(shown) \(action == .killed ? "killed" : "denied")"
    }
}
