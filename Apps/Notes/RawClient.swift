import Crypto
import Foundation
import Glibc
import MAMScript
import MAMWire
import SystemPackage

/// One reply frame and its descriptor.
struct Reply {
    var frame: Frame
    var descriptor: Int32?
}

/// A broker client without the SDK: one reader thread routes replies to the request that waits
/// for them (by frame id) and turns everything else into scripted-mode events.
final class RawClient: @unchecked Sendable {
    let socket: WireSocket
    let output: ScriptOutput
    private let condition = NSCondition()
    private var nextID: UInt32 = 1
    private var waiting: [UInt32: (count: Int, replies: [Reply])] = [:]
    private var events: [(kind: String, fields: [String: JSONValue])] = []
    private var served: [String: (name: String, bytes: [UInt8])] = [:]
    private var closed = false

    init(socket: WireSocket, output: ScriptOutput) {
        self.socket = socket
        self.output = output
    }

    func start() {
        let thread = Thread { [self] in readLoop() }
        thread.name = "notes.reader"
        thread.start()
    }

    private func readLoop() {
        while var r = socket.receive() {
            guard case let .success(frame) = r.frame else { continue }
            // From here its descriptor is closed by hand: a reply travels in lists.
            let descriptor = r.descriptor.take()?.release()
            condition.lock()
            if var w = waiting[frame.id] {
                w.replies.append(Reply(frame: frame, descriptor: descriptor))
                waiting[frame.id] = w
                condition.broadcast()
                condition.unlock()
                continue
            }
            condition.unlock()
            unsolicited(Reply(frame: frame, descriptor: descriptor))
        }
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    func waitUntilClosed() {
        condition.lock()
        while !closed { condition.wait() }
        condition.unlock()
    }

    /// Sends and waits for the replies: one, or a decision and (when it allows) one more.
    func request(_ m: Message, descriptor: Int32? = nil, twoWhenAllowed: Bool = false) -> [Reply] {
        condition.lock()
        let id = nextID
        nextID = nextID >= 0x7FFF_FFFF ? 1 : nextID + 1
        waiting[id] = (0, [])
        condition.unlock()
        do { try socket.send(Frame(id: id, m), descriptor: descriptor.map(FileDescriptor.init(rawValue:))) } catch {
            condition.lock(); waiting[id] = nil; condition.unlock()
            return []
        }
        condition.lock()
        defer { waiting[id] = nil; condition.unlock() }
        while !closed {
            let replies = waiting[id]!.replies
            if let first = replies.first {
                guard twoWhenAllowed, case let .decision(d) = first.frame.message, d.allowed else { return replies }
                if replies.count >= 2 { return replies }
            }
            condition.wait()
        }
        return waiting[id]?.replies ?? []
    }

    private func event(_ kind: String, _ fields: [String: JSONValue]) {
        condition.lock()
        events.append((kind, fields))
        condition.broadcast()
        condition.unlock()
        output.event(kind, fields)
    }

    private func unsolicited(_ r: Reply) {
        switch r.frame.message {
        case let .urlDelivery(url, sender):
            event("url", ["url": .string(url), "opened": .string(url), "sender": JSONValue(sender), "identity": .null])
        case let .document(type, name, owner, encrypted):
            event("document", Self.document(type, name, owner, encrypted, r.descriptor, via: "open-in"))
        case let .exportRequest(type):
            condition.lock()
            let doc = served[type.lowercased()] ?? served.values.first
            condition.unlock()
            if let doc, let fd = try? SealedDocument.create(doc.bytes) {
                try? socket.send(Frame(id: r.frame.id, .exportReply(contentType: type, name: doc.name)), descriptor: FileDescriptor(rawValue: fd.rawValue))
            }
        default:
            r.descriptor.map { _ = close($0) }
        }
    }

    /// A document as the scripted mode reports it: an app without the SDK never reads ciphertext.
    static func document(_ type: String, _ name: String, _ owner: String?, _ encrypted: Bool, _ fd: Int32?, via: String) -> [String: JSONValue] {
        let bytes = fd.map { d -> [UInt8] in defer { close(d) }; return SealedDocument.read(FileDescriptor(rawValue: d)) } ?? []
        return ["type": .string(type), "name": .string(name), "owner": JSONValue(owner), "encrypted": .bool(encrypted),
                "readable": .bool(!encrypted), "sha256": .string(sha256(bytes)), "identity": .null, "via": .string(via),
                "size": .number(Double(bytes.count))]
    }

    static func sha256(_ bytes: [UInt8]) -> String { SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined() }

    static func decision(_ d: DecisionRecord) -> JSONValue {
        let tags = ["doc", "observed", "chosen"]
        return ["outcome": .string(WireOutcome.name(of: d.outcome)), "allowed": .bool(d.allowed), "rule": .string(d.rule),
                "message": .string(d.message), "detail": .string(d.detail), "tag": .string(tags[Int(d.tag)]),
                "ruleName": .string(d.ruleName), "decidedAt": .string(d.decidedAt)]
    }

    /// The oldest event of `kind` not yet returned, waiting up to `seconds`.
    func take(_ kind: String, seconds: Double) -> [String: JSONValue]? {
        let deadline = Date().addingTimeInterval(seconds)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let i = events.firstIndex(where: { $0.kind == kind }) { return events.remove(at: i).fields }
            if !condition.wait(until: deadline) { return nil }
        }
    }

    // MARK: Commands

    func execute(_ n: Int, _ c: ScriptCommand, bundleID: String) {
        func usage(_ text: String) { output.failure(n, command: c.name, "usage: \(c.name) \(text)") }
        func answer(_ replies: [Reply], _ read: (Reply) -> [String: JSONValue]?) {
            guard let first = replies.first else { return output.failure(n, command: c.name, "the broker closed the connection") }
            if case let .error(code, detail) = first.frame.message {
                return output.result(n, c, ["error": .string(detail), "code": .string("\(code)")])
            }
            guard let fields = read(first) else { return output.failure(n, command: c.name, "unexpected reply \(first.frame.message)") }
            output.result(n, c, fields)
        }
        func decision(_ r: Reply) -> [String: JSONValue]? {
            if case let .decision(d) = r.frame.message { return ["decision": Self.decision(d)] }
            return nil
        }
        func retrying(_ body: () -> [Reply]) -> [Reply] {
            for _ in 0..<50 {
                let replies = body()
                if case .error(.unknownTarget, _)? = replies.first?.frame.message { usleep(100_000); continue }
                return replies
            }
            return body()
        }
        let script: Script
        do { script = try Script(c) } catch { return output.failure(n, command: c.name, error.message) }
        switch script {
        case .hello:
            output.result(n, c, ["app": .string(bundleID), "sdk": false, "identity": .null, "accounts": []])
        case let .identity(word):
            let account = word.lowercased() == "personal" ? "" : word
            answer(request(.setIdentity(account: account))) { r in
                guard case let .decision(d) = r.frame.message else { return nil }
                return ["result": .string(d.allowed ? "success" : "notAllowed"), "decision": Self.decision(d), "identity": .null]
            }
        case .policy:
            // No SDK, no policy object: what applies is the broker's decision per action.
            output.result(n, c, ["managed": false, "policy": .null])
        case let .openURL(url):
            answer(request(.openURL(url: url))) { r in decision(r).map { $0.merging(["target": .null]) { x, _ in x } } }
        case let .canOpen(url):
            answer(request(.canOpenURL(url: url))) { r in
                if case let .canOpenURLResult(b) = r.frame.message { return ["result": .bool(b)] }
                return nil
            }
        case let .copy(text):
            answer(request(.copy(text: text, types: ["public.utf8-plain-text"]))) { r in
                if case let .copied(count) = r.frame.message { return ["ok": true, "change": .number(Double(count))] }
                return nil
            }
        case .paste:
            answer(request(.paste)) { r in
                guard case let .pasteResult(d, text) = r.frame.message else { return nil }
                return ["decision": Self.decision(d), "text": .string(text), "sha256": .string(Self.sha256(Array(text.utf8)))]
            }
        case let .targets(type):
            answer(request(.listTargets(contentType: type))) { r in
                guard case let .targets(list) = r.frame.message else { return nil }
                return ["targets": .array(list.map { ["app": .string($0.bundleID), "outcome": .string(WireOutcome.name(of: $0.outcome))] })]
            }
        case let .share(target, type, name, content):
            answer(retrying {
                guard let fd = try? SealedDocument.create(Array(content.utf8)) else { return [] }
                return request(.share(target: target, contentType: type, name: name), descriptor: fd.rawValue)
            }, decision)
        case let .serve(type, name, content):
            condition.lock()
            served[type.lowercased()] = (name, Array(content.utf8))
            condition.unlock()
            output.result(n, c, ["ok": true])
        case let .importDocument(source, type):
            let replies = retrying { request(.importRequest(source: source, contentType: type), twoWhenAllowed: true) }
            if replies.count > 1, case let .document(type, name, owner, encrypted) = replies[1].frame.message {
                event("document", Self.document(type, name, owner, encrypted, replies[1].descriptor, via: "import"))
            }
            answer(replies, decision)
        case let .save(place, account, name, content):
            guard let location = Self.location(place, save: true) else { return usage("LOCATION ACCOUNT|- NAME CONTENT (a SaveLocation case)") }
            guard let fd = try? SealedDocument.create(Array(content.utf8)) else { return output.failure(n, command: c.name, "could not seal") }
            answer(request(.saveTo(location: location, account: account, name: name), descriptor: fd.rawValue), decision)
        case let .open(place, account, name):
            guard let location = Self.location(place, save: false) else { return usage("LOCATION ACCOUNT|- NAME (an OpenLocation case)") }
            let replies = request(.openFrom(location: location, account: account, name: name), twoWhenAllowed: true)
            answer(replies) { r in
                guard case let .decision(d) = r.frame.message else { return nil }
                var fields: [String: JSONValue] = ["decision": Self.decision(d), "readable": false, "sha256": .null, "owner": .null]
                if replies.count > 1, case let .file(_, owner) = replies[1].frame.message {
                    let bytes = replies[1].descriptor.map { d -> [UInt8] in defer { close(d) }; return SealedDocument.read(FileDescriptor(rawValue: d)) } ?? []
                    fields["readable"] = true
                    fields["sha256"] = .string(Self.sha256(bytes))
                    fields["owner"] = JSONValue(owner)
                }
                return fields
            }
        case let .wait(kind, seconds):
            guard var fields = take(kind, seconds: seconds) else { return output.failure(n, command: c.name, "timeout") }
            fields["event"] = .string(kind)
            output.result(n, c, fields)
        case .events:
            condition.lock()
            let all = events
            events = []
            condition.unlock()
            output.result(n, c, ["events": .array(all.map { e in .object(e.fields.merging(["event": .string(e.kind)]) { x, _ in x }) })])
        case .protect, .unprotect, .within, .scopes, .refresh:
            output.failure(n, command: c.name, "an app without the SDK has no \(c.name)")
        case .window, .pause, .resume, .delegate, .registered, .blocked, .allowedAccounts, .queues, .queued, .writeFile, .readFile, .writeAt, .readAt, .files, .loginEnroll, .bye:
            // The SDK's own parts (windows, the delegate, its queues, protected files): an app
            // without it has none of them.
            output.failure(n, command: c.name, "unknown command or wrong number of arguments: \(c.line)")
        case let .enroll(account):
            answer(request(.enroll(account: account))) { _ in [:] }
        case let .unenroll(account, wipe):
            answer(request(.unenroll(account: account, wipe: wipe))) { _ in [:] }
        case let .appConfig(account):
            answer(request(.appConfigRequest(account: account))) { _ in [:] }
        case let .token(account):
            answer(request(.acquireToken(account: account))) { r in
                guard case let .token(outcome, home, detail) = r.frame.message else { return nil }
                return ["token": .string(["granted", "protectionPolicyRequired", "refused"][Int(outcome)]), "homeAccountId": JSONValue(home),
                        "detail": .string(detail)]
            }
        case let .remediate(account, silent):
            answer(request(.remediateCompliance(account: account, silent: silent))) { _ in [:] }
        }
    }

    static func location(_ name: String, save isSave: Bool) -> UInt8? {
        let save = ["other": 0, "oneDriveForBusiness": 1, "sharePoint": 2, "box": 4, "dropbox": 8, "googleDrive": 16, "localDrive": 32,
                    "cameraRoll": 64, "accountDocument": 128]
        let open = ["other": 0, "oneDriveForBusiness": 1, "sharePoint": 2, "camera": 4, "localStorage": 8, "photos": 16, "accountDocument": 32]
        return (isSave ? save : open)[name].map(UInt8.init)
    }
}
