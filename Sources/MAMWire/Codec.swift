/// The byte format of a frame (docs/PROTOCOL.md, "Frames"):
///
///     magic "MW" | version u8 | type u8 | id u32 | length u32 | payload (length bytes)
///
/// Integers are little-endian. Payload fields follow the message's list in order: `u8`, `u32`,
/// `bool` (one byte, 0 or 1), `text` (u16 length, then that many bytes of UTF-8), `text?` (a
/// presence byte 0 or 1, then a text), and lists (u16 count, then the items).
public enum Wire {
    /// The newest version, which this side's own clients speak.
    public static let version: UInt8 = 3
    /// Every version this side reads and writes (docs/PROTOCOL.md, "Versions"). A message's layout
    /// never changes within a version: version 2 added `ruleName` and `decidedAt` to a decision
    /// and the message `setViewIdentities`; version 3 added `conditionalLaunch`.
    public static let versions: ClosedRange<UInt8> = 1...3
    public static let headerSize = 12
    /// The largest frame either side accepts.
    public static let maximumFrame = 65_536
    /// The largest text field, except pasteboard text (`maximumPasteText`).
    public static let maximumText = 4_096
    public static let maximumPasteText = 60_000
    public static let maximumListCount = 256
    /// Storage locations are the SDK API's save or open location bits (SEMANTICS §2).
    public static let maximumLocation: UInt8 = 128
    public static let maximumOpenLocation: UInt8 = 32
    /// An account key (`accountKey`): 256 bits.
    public static let keySize = 32

    static let magic: [UInt8] = [0x4D, 0x57]

    /// Type numbers, by message.
    public static func type(of m: Message) -> UInt8 {
        switch m {
        case .hello: return 0x01
        case .welcome: return 0x02
        case .error: return 0x03
        case .bye: return 0x04
        case .setIdentity: return 0x10
        case .setViewIdentities: return 0x11
        case .canOpenURL: return 0x20
        case .canOpenURLResult: return 0x21
        case .openURL: return 0x22
        case .urlDelivery: return 0x23
        case .decision: return 0x2F
        case .copy: return 0x30
        case .copied: return 0x31
        case .paste: return 0x32
        case .pasteResult: return 0x33
        case .listTargets: return 0x40
        case .targets: return 0x41
        case .share: return 0x42
        case .document: return 0x43
        case .importRequest: return 0x44
        case .exportRequest: return 0x45
        case .exportReply: return 0x46
        case .saveTo: return 0x50
        case .openFrom: return 0x51
        case .file: return 0x52
        case .enroll: return 0x60
        case .loginAndEnroll: return 0x65
        case .signedIn: return 0x66
        case .unenroll: return 0x61
        case .enrollmentNotice: return 0x62
        case .restartRequest: return 0x63
        case .wipeRequest: return 0x64
        case .conditionalLaunch: return 0x67
        case .allowedAccountsRequest: return 0x6C
        case .allowedAccounts: return 0x6D
        case .restartReply: return 0x6E
        case .appConfigRequest: return 0x70
        case .appConfigData: return 0x71
        case .appConfigChanged: return 0x72
        case .acquireToken: return 0x78
        case .token: return 0x79
        case .remediateCompliance: return 0x7A
        case .remediationAccepted: return 0x7B
        case .complianceStatus: return 0x7C
        case .remediationInProgress: return 0x7D
        case .remediationProgress: return 0x7E
        case .policyRequest: return 0x80
        case .policySnapshot: return 0x81
        case .keyRequest: return 0x82
        case .accountKey: return 0x83
        }
    }

    /// The version a message type first appeared in (every other one is in version 1).
    static func firstVersion(of type: UInt8) -> UInt8 {
        switch type {
        case 0x11: return 2
        case 0x67: return 3
        default: return 1
        }
    }

    public static let knownTypes: Set<UInt8> = [0x01, 0x02, 0x03, 0x04, 0x10, 0x11, 0x20, 0x21, 0x22, 0x23, 0x2F, 0x30, 0x31, 0x32,
                                                0x33, 0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x50, 0x51, 0x52,
                                                0x60, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x6C, 0x6D, 0x6E, 0x70, 0x71, 0x72,
                                                0x78, 0x79, 0x7A, 0x7B, 0x7C, 0x7D, 0x7E,
                                                0x80, 0x81, 0x82, 0x83]

    // MARK: Encoding

    /// `version`: the one the two sides agreed on (a hello goes out in the oldest, which every
    /// broker reads).
    public static func encode(_ frame: Frame, version: UInt8 = Wire.version) -> [UInt8] {
        // The header goes first and its length is filled in after the payload: one buffer.
        var w = Writer(version: version)
        // Room for a decision answer and its text without growing (most replies are smaller).
        w.bytes.reserveCapacity(256)
        w.u8(magic[0]); w.u8(magic[1]); w.u8(version); w.u8(type(of: frame.message))
        w.u32(frame.id)
        w.u32(0)
        payload(frame.message, &w)
        let n = UInt32(w.bytes.count - headerSize)
        for i in 0..<4 { w.bytes[8 + i] = UInt8(truncatingIfNeeded: n >> (8 * UInt32(i))) }
        return w.bytes
    }

    struct Writer {
        /// The layout written (a decision's fields depend on it).
        var version: UInt8 = Wire.version
        var bytes: [UInt8] = []
        mutating func u8(_ v: UInt8) { bytes.append(v) }
        mutating func bool(_ v: Bool) { bytes.append(v ? 1 : 0) }
        // Byte by byte: an array literal here is an allocation per field.
        mutating func u16(_ v: UInt16) { bytes.append(UInt8(v & 0xff)); bytes.append(UInt8(v >> 8)) }
        mutating func u32(_ v: UInt32) {
            bytes.append(UInt8(v & 0xff)); bytes.append(UInt8((v >> 8) & 0xff))
            bytes.append(UInt8((v >> 16) & 0xff)); bytes.append(UInt8(v >> 24))
        }
        mutating func text(_ s: String) {
            u16(UInt16(truncatingIfNeeded: s.utf8.count))
            bytes += s.utf8
        }
        mutating func optionalText(_ s: String?) {
            if let s { u8(1); text(s) } else { u8(0) }
        }
        mutating func decision(_ d: DecisionRecord) {
            bool(d.allowed); u8(d.outcome); text(d.rule); u8(d.tag); text(d.message); text(d.detail)
            if version >= 2 { text(d.ruleName); text(d.decidedAt) }
        }
    }

    static func le(_ v: UInt32) -> [UInt8] { [UInt8(v & 0xff), UInt8((v >> 8) & 0xff), UInt8((v >> 16) & 0xff), UInt8(v >> 24)] }

    static func payload(_ m: Message, _ w: inout Writer) {
        switch m {
        case let .hello(minV, maxV, sdk): w.u8(minV); w.u8(maxV); w.bool(sdk)
        case let .welcome(v, bundle, account): w.u8(v); w.text(bundle); w.optionalText(account)
        case let .error(code, detail): w.u16(code.rawValue); w.text(detail)
        case .bye, .paste, .loginAndEnroll, .allowedAccountsRequest, .policyRequest: break
        case let .setIdentity(account): w.text(account)
        case let .setViewIdentities(accounts):
            w.u16(UInt16(accounts.count))
            for a in accounts { w.text(a) }
        case let .canOpenURL(url), let .openURL(url): w.text(url)
        case let .canOpenURLResult(b): w.bool(b)
        case let .urlDelivery(url, sender): w.text(url); w.optionalText(sender)
        case let .decision(d): w.decision(d)
        case let .copy(text, types):
            w.text(text)
            w.u16(UInt16(types.count))
            for t in types { w.text(t) }
        case let .copied(n): w.u32(n)
        case let .pasteResult(d, text): w.decision(d); w.text(text)
        case let .listTargets(t), let .exportRequest(t): w.text(t)
        case let .targets(list):
            w.u16(UInt16(list.count))
            for t in list { w.text(t.bundleID); w.u8(t.outcome) }
        case let .share(target, type, name): w.text(target); w.text(type); w.text(name)
        case let .document(type, name, owner, encrypted): w.text(type); w.text(name); w.optionalText(owner); w.bool(encrypted)
        case let .importRequest(source, type): w.text(source); w.text(type)
        case let .exportReply(type, name): w.text(type); w.text(name)
        case let .saveTo(location, account, name), let .openFrom(location, account, name):
            w.u8(location); w.optionalText(account); w.text(name)
        case let .file(name, owner): w.text(name); w.optionalText(owner)
        case let .enroll(account), let .restartRequest(account), let .wipeRequest(account), let .appConfigRequest(account),
             let .appConfigChanged(account), let .signedIn(account): w.text(account)
        case let .appConfigData(account, json): w.text(account); w.text(json)
        case let .acquireToken(account), let .remediationInProgress(account): w.text(account)
        case let .remediationProgress(state, position): w.u8(state); w.u16(position)
        case let .token(outcome, home, detail): w.u8(outcome); w.optionalText(home); w.text(detail)
        case let .remediateCompliance(account, silent): w.text(account); w.bool(silent)
        case let .remediationAccepted(outcome, detail): w.u8(outcome); w.text(detail)
        case let .complianceStatus(account, status, title, message): w.text(account); w.u8(status); w.text(title); w.text(message)
        case let .unenroll(account, wipe): w.text(account); w.bool(wipe)
        case let .restartReply(itself): w.bool(itself)
        case let .allowedAccounts(restricted, accounts):
            w.bool(restricted)
            w.u16(UInt16(accounts.count))
            for a in accounts { w.text(a) }
        case let .policySnapshot(json): w.text(json)
        case let .keyRequest(account): w.text(account)
        case let .accountKey(account, key): w.text(account); w.bytes += key
        case let .enrollmentNotice(kind, account, status): w.u8(kind); w.text(account); w.u16(status)
        case let .conditionalLaunch(account, action, rule, message, detail):
            w.text(account); w.u8(action); w.text(rule); w.text(message); w.text(detail)
        }
    }

    // MARK: Decoding

    /// The id of a frame whose header could be read (12 bytes or more, magic "MW", this
    /// version), else nil. An error about a frame answers under this id, or 0 when nil.
    public static func frameID(_ bytes: [UInt8]) -> UInt32? {
        guard bytes.count >= headerSize, bytes[0] == magic[0], bytes[1] == magic[1], versions.contains(bytes[2]) else { return nil }
        return UInt32(bytes[4]) | UInt32(bytes[5]) << 8 | UInt32(bytes[6]) << 16 | UInt32(bytes[7]) << 24
    }

    /// Decodes one frame, strictly: every byte must be accounted for and every field in range,
    /// in the layout of the frame's version: `agreed` once the two sides have agreed on one (a
    /// frame of another is refused), any version this side speaks before.
    public static func decode(_ bytes: [UInt8], agreed: UInt8? = nil) throws(WireError) -> Frame {
        if bytes.count > maximumFrame { throw WireError(.oversized, "frame of \(bytes.count) bytes; the limit is \(maximumFrame)") }
        guard bytes.count >= headerSize else {
            throw WireError(.truncated, "frame of \(bytes.count) bytes is shorter than the \(headerSize)-byte header")
        }
        guard bytes[0] == magic[0], bytes[1] == magic[1] else {
            throw WireError(.badMagic, "bytes 0-1 are 0x\(hex(bytes[0]))\(hex(bytes[1])); a frame starts with \"MW\" (0x4D57)")
        }
        let version = bytes[2]
        if let agreed, version != agreed {
            throw WireError(.unsupportedVersion, "byte 2: version \(version); this connection agreed on version \(agreed)")
        }
        guard versions.contains(version) else {
            throw WireError(.unsupportedVersion, "byte 2: version \(version); this side speaks \(versions.lowerBound)...\(versions.upperBound)")
        }
        let type = bytes[3]
        guard knownTypes.contains(type) else { throw WireError(.unknownType, "byte 3: unknown message type 0x\(hex(type))") }
        guard version >= firstVersion(of: type) else {
            throw WireError(.unknownType, "byte 3: message type 0x\(hex(type)) is new in version \(firstVersion(of: type)); this frame is version \(version)")
        }
        var r = Reader(bytes: bytes, offset: 4, version: version)
        let id = try r.u32("id")
        let length = Int(try r.u32("length"))
        guard headerSize + length == bytes.count else {
            if headerSize + length > bytes.count {
                throw WireError(.truncated, "header announces \(length) payload bytes; \(bytes.count - headerSize) arrived")
            }
            throw WireError(.trailingBytes, "header announces \(length) payload bytes; \(bytes.count - headerSize) arrived")
        }
        let message = try decodePayload(type, &r)
        if r.offset != bytes.count {
            throw WireError(.trailingBytes, "\(bytes.count - r.offset) bytes after the last field, at byte \(r.offset)")
        }
        return Frame(id: id, message)
    }

    static func hex(_ b: UInt8) -> String { (b < 16 ? "0" : "") + String(b, radix: 16, uppercase: true) }

    struct Reader {
        let bytes: [UInt8]
        var offset: Int
        /// The layout read (a decision's fields depend on it).
        var version: UInt8 = Wire.version

        mutating func take(_ n: Int, _ field: String) throws(WireError) -> ArraySlice<UInt8> {
            guard offset + n <= bytes.count else {
                throw WireError(.truncated, "field \(field) at byte \(offset) needs \(n) bytes; \(bytes.count - offset) remain")
            }
            defer { offset += n }
            return bytes[offset..<offset + n]
        }
        mutating func u8(_ field: String) throws(WireError) -> UInt8 { try take(1, field).first! }
        mutating func u16(_ field: String) throws(WireError) -> UInt16 {
            let b = try take(2, field)
            return UInt16(b[b.startIndex]) | UInt16(b[b.startIndex + 1]) << 8
        }
        mutating func u32(_ field: String) throws(WireError) -> UInt32 {
            // Read in place: an array of the four bytes was an allocation per field, two per frame.
            let b = try take(4, field), i = b.startIndex
            return UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24
        }
        mutating func bool(_ field: String) throws(WireError) -> Bool {
            let at = offset
            switch try u8(field) {
            case 0: return false
            case 1: return true
            case let v: throw WireError(.fieldOutOfRange, "field \(field) at byte \(at) is \(v); a flag is 0 or 1")
            }
        }
        mutating func range(_ field: String, _ allowed: ClosedRange<UInt8>) throws(WireError) -> UInt8 {
            let at = offset
            let v = try u8(field)
            guard allowed.contains(v) else {
                throw WireError(.fieldOutOfRange, "field \(field) at byte \(at) is \(v); allowed \(allowed.lowerBound)...\(allowed.upperBound)")
            }
            return v
        }
        mutating func text(_ field: String, limit: Int = Wire.maximumText) throws(WireError) -> String {
            let at = offset
            let n = Int(try u16(field))
            guard n <= limit else { throw WireError(.fieldOutOfRange, "field \(field) at byte \(at) is \(n) bytes long; the limit is \(limit)") }
            let raw = try take(n, field)
            guard let s = String(validating: raw, as: UTF8.self) else {
                throw WireError(.invalidText, "field \(field) at byte \(at + 2) is not valid UTF-8")
            }
            return s
        }
        mutating func optionalText(_ field: String) throws(WireError) -> String? {
            try bool(field + " presence") ? try text(field) : nil
        }
        mutating func count(_ field: String) throws(WireError) -> Int {
            let at = offset
            let n = Int(try u16(field))
            guard n <= Wire.maximumListCount else {
                throw WireError(.fieldOutOfRange, "field \(field) at byte \(at) counts \(n) items; the limit is \(Wire.maximumListCount)")
            }
            return n
        }
        mutating func decision() throws(WireError) -> DecisionRecord {
            DecisionRecord(allowed: try bool("allowed"), outcome: try range("outcome", DecisionRecord.outcomes), rule: try text("rule"),
                           tag: try range("tag", DecisionRecord.tags), message: try text("message"), detail: try text("detail"),
                           ruleName: version >= 2 ? try text("ruleName") : "", decidedAt: version >= 2 ? try text("decidedAt") : "")
        }
    }

    static func decodePayload(_ type: UInt8, _ r: inout Reader) throws(WireError) -> Message {
        switch type {
        case 0x01:
            let minV = try r.u8("minVersion"), maxV = try r.u8("maxVersion")
            guard minV <= maxV else { throw WireError(.fieldOutOfRange, "minVersion \(minV) is above maxVersion \(maxV)") }
            return .hello(minVersion: minV, maxVersion: maxV, integratesSDK: try r.bool("integratesSDK"))
        case 0x02: return .welcome(version: try r.u8("version"), bundleID: try r.text("bundleID"), managedAccount: try r.optionalText("managedAccount"))
        case 0x03:
            let at = r.offset
            let raw = try r.u16("code")
            guard let code = WireErrorCode(rawValue: raw) else { throw WireError(.fieldOutOfRange, "field code at byte \(at) is \(raw); no such error code") }
            return .error(code: code, detail: try r.text("detail"))
        case 0x04: return .bye
        case 0x10: return .setIdentity(account: try r.text("account"))
        case 0x11:
            let n = try r.count("accounts")
            var accounts: [String] = []
            for i in 0..<n { accounts.append(try r.text("accounts[\(i)]")) }
            return .setViewIdentities(accounts: accounts)
        case 0x20: return .canOpenURL(url: try r.text("url"))
        case 0x21: return .canOpenURLResult(try r.bool("result"))
        case 0x22: return .openURL(url: try r.text("url"))
        case 0x23: return .urlDelivery(url: try r.text("url"), senderAccount: try r.optionalText("senderAccount"))
        case 0x2F: return .decision(try r.decision())
        case 0x30:
            let text = try r.text("text", limit: Wire.maximumPasteText)
            let n = try r.count("types")
            var types: [String] = []
            for i in 0..<n { types.append(try r.text("types[\(i)]")) }
            return .copy(text: text, types: types)
        case 0x31: return .copied(changeCount: try r.u32("changeCount"))
        case 0x32: return .paste
        case 0x33: return .pasteResult(decision: try r.decision(), text: try r.text("text", limit: Wire.maximumPasteText))
        case 0x40: return .listTargets(contentType: try r.text("contentType"))
        case 0x41:
            let n = try r.count("targets")
            var list: [ShareTarget] = []
            for i in 0..<n {
                list.append(ShareTarget(bundleID: try r.text("targets[\(i)].bundleID"), outcome: try r.range("targets[\(i)].outcome", DecisionRecord.outcomes)))
            }
            return .targets(list)
        case 0x42: return .share(target: try r.text("target"), contentType: try r.text("contentType"), name: try r.text("name"))
        case 0x43: return .document(contentType: try r.text("contentType"), name: try r.text("name"), owner: try r.optionalText("owner"), encrypted: try r.bool("encrypted"))
        case 0x44: return .importRequest(source: try r.text("source"), contentType: try r.text("contentType"))
        case 0x45: return .exportRequest(contentType: try r.text("contentType"))
        case 0x46: return .exportReply(contentType: try r.text("contentType"), name: try r.text("name"))
        case 0x50, 0x51:
            let at = r.offset
            let location = try r.u8("location")
            // saveTo takes the SDK's save bits (up to 128), openFrom its open bits (up to 32).
            let highest = type == 0x50 ? maximumLocation : maximumOpenLocation
            guard location <= highest, location == 0 || location & (location - 1) == 0 else {
                throw WireError(.fieldOutOfRange, "field location at byte \(at) is \(location); a location is 0 or one bit up to \(highest)")
            }
            let account = try r.optionalText("account"), name = try r.text("name")
            return type == 0x50 ? .saveTo(location: location, account: account, name: name) : .openFrom(location: location, account: account, name: name)
        case 0x52: return .file(name: try r.text("name"), owner: try r.optionalText("owner"))
        case 0x60: return .enroll(account: try r.text("account"))
        case 0x61: return .unenroll(account: try r.text("account"), wipe: try r.bool("wipe"))
        case 0x62: return .enrollmentNotice(kind: try r.range("kind", 0...2), account: try r.text("account"), status: try r.u16("status"))
        case 0x63: return .restartRequest(account: try r.text("account"))
        case 0x64: return .wipeRequest(account: try r.text("account"))
        case 0x67:
            return .conditionalLaunch(account: try r.text("account"), action: try r.range("action", 0...2), rule: try r.text("rule"),
                                      message: try r.text("message"), detail: try r.text("detail"))
        case 0x65: return .loginAndEnroll
        case 0x66: return .signedIn(account: try r.text("account"))
        case 0x6C: return .allowedAccountsRequest
        case 0x6D:
            let restricted = try r.bool("restricted")
            let n = try r.count("accounts")
            var accounts: [String] = []
            for i in 0..<n { accounts.append(try r.text("accounts[\(i)]")) }
            return .allowedAccounts(restricted: restricted, accounts: accounts)
        case 0x6E: return .restartReply(restartsItself: try r.bool("restartsItself"))
        case 0x70: return .appConfigRequest(account: try r.text("account"))
        case 0x71: return .appConfigData(account: try r.text("account"), json: try r.text("json", limit: Wire.maximumPasteText))
        case 0x72: return .appConfigChanged(account: try r.text("account"))
        case 0x78: return .acquireToken(account: try r.text("account"))
        case 0x79: return .token(outcome: try r.range("outcome", 0...2), homeAccountID: try r.optionalText("homeAccountID"), detail: try r.text("detail"))
        case 0x7A: return .remediateCompliance(account: try r.text("account"), silent: try r.bool("silent"))
        case 0x7B: return .remediationAccepted(outcome: try r.range("outcome", 0...3), detail: try r.text("detail"))
        case 0x7D: return .remediationInProgress(account: try r.text("account"))
        case 0x7E: return .remediationProgress(state: try r.range("state", 0...2), position: try r.u16("position"))
        case 0x7C:
            return .complianceStatus(account: try r.text("account"), status: try r.range("status", 0...5), title: try r.text("title"),
                                     message: try r.text("message"))
        case 0x80: return .policyRequest
        case 0x81: return .policySnapshot(json: try r.text("json", limit: Wire.maximumPasteText))
        case 0x82: return .keyRequest(account: try r.text("account"))
        case 0x83: return .accountKey(account: try r.text("account"), key: Array(try r.take(Wire.keySize, "key")))
        default: throw WireError(.unknownType, "byte 3: unknown message type 0x\(hex(type))")
        }
    }
}
