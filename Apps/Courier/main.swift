// Courier: a small app that speaks the broker protocol (MAMWire) step by step, as its arguments
// say, and prints one JSON line per step. Tests launch two of them under the identities of
// real sample apps (mamlaunch run --manifest Apps/Mail/Info.plist -- Courier ...) and watch
// data move between them through the broker. It is also the shortest example of a client.
//
// With no steps it greets and waits for one URL, which is how the broker starts it to open one.
// Steps: hello | identity ACCOUNT | copy TEXT | paste | can-open URL | open-url URL | wait-url |
// targets TYPE | share TARGET TYPE NAME CONTENT | wait-document | serve-export NAME CONTENT |
// import SOURCE TYPE | save LOCATION ACCOUNT|- NAME CONTENT | open LOCATION ACCOUNT|- NAME |
// enroll ACCOUNT | unenroll ACCOUNT wipe|keep | wait-notice [SECONDS] | app-config ACCOUNT | token ACCOUNT |
// remediate ACCOUNT silent|interactive | wait-compliance [SECONDS] | restart-answer self|sdk [SECONDS] | allowed-accounts |
// key ACCOUNT | raw HEX | sleep MS | bye
import Foundation
import Glibc
import MAMWire
import SystemPackage

guard let fdText = ProcessInfo.processInfo.environment["MAMLAB_BROKER_FD"], let fd = Int32(fdText) else {
    print(#"{"error": "no broker connection (MAMLAB_BROKER_FD)"}"#)
    exit(2)
}
let socket = WireSocket(adopting: Descriptor(adopting: fd))
nonisolated(unsafe) var nextID: UInt32 = 1
/// Frames that arrived while waiting for something else (documents, URLs, export requests).
nonisolated(unsafe) var inbox: [(Frame, Int32?)] = []

func emit(_ object: [String: Any]) {
    let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
    print(String(decoding: data, as: UTF8.self))
    fflush(nil)
}

func describe(_ d: DecisionRecord) -> [String: Any] {
    return ["allowed": d.allowed, "outcome": WireOutcome.name(of: d.outcome), "rule": d.rule, "message": d.message, "detail": d.detail,
            "ruleName": d.ruleName, "decidedAt": d.decidedAt]
}

func next() -> (Frame, Int32?)? {
    if !inbox.isEmpty { return inbox.removeFirst() }
    guard var r = socket.receive() else { return nil }
    switch r.frame {
    case let .success(f): return (f, r.descriptor.take()?.release())
    case let .failure(e): emit(["local-error": e.description]); return nil
    }
}

/// Sends a request and returns its replies: everything with its id up to the first that ends it.
func request(_ m: Message, descriptor: Int32? = nil, replies: Int = 1) -> [(Frame, Int32?)] {
    let id = nextID
    nextID += 1
    do { try socket.send(Frame(id: id, m), descriptor: descriptor.map(FileDescriptor.init(rawValue:))) } catch { emit(["send-error": error.description]); return [] }
    var got: [(Frame, Int32?)] = []
    var parked: [(Frame, Int32?)] = []
    while got.count < replies, let f = next() {
        if f.0.id == id {
            got.append(f)
            if case .error = f.0.message { break }
            if case let .decision(d) = f.0.message, !d.allowed { break }
        } else {
            parked.append(f)
        }
    }
    inbox = parked + inbox
    return got
}

func waitFor(_ match: (Message) -> Bool, seconds: Double = 10) -> (Frame, Int32?)? {
    if let i = inbox.firstIndex(where: { match($0.0.message) }) { return inbox.remove(at: i) }
    let deadline = Date().addingTimeInterval(seconds)
    while true {
        // Wait no longer than the deadline for the next frame.
        let left = deadline.timeIntervalSinceNow
        var p = pollfd(fd: socket.descriptor.rawValue, events: Int16(POLLIN), revents: 0)
        guard left > 0, poll(&p, 1, Int32(left * 1000)) > 0, var r = socket.receive() else { return nil }
        guard case let .success(f) = r.frame else { return nil }
        let descriptor = r.descriptor.take()?.release()
        if match(f.message) { return (f, descriptor) }
        inbox.append((f, descriptor))
    }
}

func result(_ step: String, _ replies: [(Frame, Int32?)]) {
    var object: [String: Any] = ["step": step]
    for (f, d) in replies {
        switch f.message {
        case let .decision(r): object["decision"] = describe(r)
        case let .error(code, detail): object["error"] = "\(code)"; object["detail"] = detail
        case let .welcome(v, bundle, account): object["version"] = Int(v); object["bundleId"] = bundle; object["managedAccount"] = account ?? NSNull()
        case let .canOpenURLResult(b): object["result"] = b
        case let .copied(n): object["changeCount"] = Int(n)
        case let .pasteResult(r, text): object["decision"] = describe(r); object["text"] = text
        case let .targets(list): object["targets"] = list.map { ["app": $0.bundleID, "outcome": Int($0.outcome)] }
        case let .document(type, name, owner, encrypted):
            object["type"] = type; object["name"] = name; object["owner"] = owner ?? NSNull(); object["encrypted"] = encrypted
            if let d {
                let bytes = SealedDocument.read(FileDescriptor(rawValue: d))
                object["content"] = String(decoding: bytes, as: UTF8.self)
                object["hex"] = bytes.map { String(format: "%02x", $0) }.joined()
                object["sealed"] = SealedDocument.isSealed(FileDescriptor(rawValue: d))
                close(d)
            }
        case let .file(name, owner):
            object["file"] = name; object["owner"] = owner ?? NSNull()
            if let d { object["content"] = String(decoding: SealedDocument.read(FileDescriptor(rawValue: d)), as: UTF8.self); close(d) }
        case let .enrollmentNotice(kind, account, status):
            object["notice"] = ["enrollment", "policy", "unenrollment"][Int(kind)]; object["account"] = account; object["status"] = Int(status)
        case let .restartRequest(account): object["restart"] = account
        case let .signedIn(account): object["signedIn"] = account
        case let .allowedAccounts(restricted, accounts): object["allowedAccounts"] = restricted ? accounts : NSNull()
        case let .wipeRequest(account): object["wipe"] = account
        // Only a fingerprint of the key: enough to tell one key from another.
        case let .accountKey(account, key): object["account"] = account; object["key"] = key.prefix(4).map { String(format: "%02x", $0) }.joined()
        case let .appConfigData(account, json): object["account"] = account; object["config"] = json
        case let .token(outcome, home, detail):
            object["token"] = ["granted", "protectionPolicyRequired", "refused"][Int(outcome)]; object["homeAccountId"] = home ?? NSNull()
            object["detail"] = detail
        case let .remediationAccepted(outcome, detail): object["accepted"] = ["started", "queued", "dropped", "refused"][Int(outcome)]; object["detail"] = detail
        case let .complianceStatus(account, status, title, message):
            object["account"] = account; object["compliance"] = Int(status); object["title"] = title; object["text"] = message
        default: object["message"] = "\(f.message)"
        }
    }
    if replies.isEmpty { object["closed"] = true }
    emit(object)
}

func document(_ content: String) -> Int32? { try? SealedDocument.create(Array(content.utf8)).release() }
func optional(_ s: String) -> String? { s == "-" ? nil : s }

nonisolated(unsafe) var args = Array(CommandLine.arguments.dropFirst())
// Started by the broker to open a URL (no steps given): greet, take the URL, say what came.
if args.isEmpty { args = ["hello", "wait-url", "bye"] }
func take() -> String { args.isEmpty ? "" : args.removeFirst() }
while !args.isEmpty {
    let step = take()
    switch step {
    case "hello": result(step, request(.hello(minVersion: Wire.version, maxVersion: Wire.version, integratesSDK: true)))
    case "identity": result(step, request(.setIdentity(account: take())))
    case "copy": result(step, request(.copy(text: take(), types: ["public.utf8-plain-text"])))
    case "paste": result(step, request(.paste))
    case "can-open": result(step, request(.canOpenURL(url: take())))
    case "open-url": result(step, request(.openURL(url: take())))
    case "targets": result(step, request(.listTargets(contentType: take())))
    case "share":
        let target = take(), type = take(), name = take(), content = take()
        // The target may still be starting: retry while the broker does not know it yet.
        var replies: [(Frame, Int32?)] = []
        for _ in 0..<100 {
            let fd = document(content)
            replies = request(.share(target: target, contentType: type, name: name), descriptor: fd)
            fd.map { _ = close($0) }
            if case .error(.unknownTarget, _)? = replies.first?.0.message { usleep(50_000); continue }
            break
        }
        result(step, replies)
    case "wait-document":
        result(step, waitFor { if case .document = $0 { return true } else { return false } }.map { [$0] } ?? [])
    case "wait-url":
        if let (f, _) = waitFor({ if case .urlDelivery = $0 { return true } else { return false } }), case let .urlDelivery(url, sender) = f.message {
            emit(["step": step, "url": url, "sender": sender ?? NSNull()])
        } else { emit(["step": step, "closed": true]) }
    case "serve-export":
        let name = take(), content = take()
        if let (f, _) = waitFor({ if case .exportRequest = $0 { return true } else { return false } }), case let .exportRequest(type) = f.message {
            let fd = document(content)
            try? socket.send(Frame(id: f.id, .exportReply(contentType: type, name: name)), descriptor: fd.map(FileDescriptor.init(rawValue:)))
            fd.map { _ = close($0) }
            emit(["step": step, "type": type])
        } else { emit(["step": step, "closed": true]) }
    case "import":
        let source = take(), type = take()
        var replies: [(Frame, Int32?)] = []
        for _ in 0..<100 {
            replies = request(.importRequest(source: source, contentType: type), replies: 2)
            if case .error(.unknownTarget, _)? = replies.first?.0.message { usleep(50_000); continue }
            break
        }
        result(step, replies)
    case "save":
        let location = UInt8(take()) ?? 0, account = optional(take()), name = take(), content = take()
        let fd = document(content)
        result(step, request(.saveTo(location: location, account: account, name: name), descriptor: fd, replies: 1))
        fd.map { _ = close($0) }
    case "open":
        let location = UInt8(take()) ?? 0, account = optional(take()), name = take()
        result(step, request(.openFrom(location: location, account: account, name: name), replies: 2))
    case "raw":
        let hex = take()
        var bytes: [UInt8] = []
        var i = hex.startIndex
        while i < hex.endIndex, let j = hex.index(i, offsetBy: 2, limitedBy: hex.endIndex) { bytes.append(UInt8(hex[i..<j], radix: 16) ?? 0); i = j }
        try? socket.sendRaw(bytes)
        result(step, next().map { [$0] } ?? [])
    case "enroll": result(step, request(.enroll(account: take())))
    case "app-config": result(step, request(.appConfigRequest(account: take())))
    case "token": result(step, request(.acquireToken(account: take())))
    case "remediate":
        let account = take(), silent = take() != "interactive"
        result(step, request(.remediateCompliance(account: account, silent: silent)))
    case "wait-compliance":
        let seconds = Double(args.first ?? "").map { _ in Double(take())! } ?? 10
        result(step, waitFor({ if case .complianceStatus = $0 { return true } else { return false } }, seconds: seconds).map { [$0] } ?? [])
    case "unenroll":
        let account = take(), wipe = take() == "wipe"
        result(step, request(.unenroll(account: account, wipe: wipe)))
    case "wait-notice":
        // The next thing the service tells the app on its own (a restart or wipe request, a check-in).
        let seconds = Double(args.first ?? "").map { _ in Double(take())! } ?? 10
        let got = waitFor({ m in
            switch m {
            case .enrollmentNotice, .restartRequest, .wipeRequest, .signedIn: return true
            default: return false
            }
        }, seconds: seconds)
        result(step, got.map { [$0] } ?? [])
    case "restart-answer":
        // Waits for the restart delegate's call and answers it: `self` restarts itself, `sdk`
        // leaves it to the SDK side (the launcher then restarts the app).
        let itself = take() == "self"
        let seconds = Double(args.first ?? "").map { _ in Double(take())! } ?? 10
        if let (f, _) = waitFor({ if case .restartRequest = $0 { return true } else { return false } }, seconds: seconds) {
            // Said first: an app that leaves the restart to the SDK side is killed soon after.
            emit(["step": step, "restart": itself ? "self" : "sdk"])
            try? socket.send(Frame(id: f.id, .restartReply(restartsItself: itself)))
        } else { emit(["step": step, "closed": true]) }
    case "allowed-accounts": result(step, request(.allowedAccountsRequest))
    case "key": result(step, request(.keyRequest(account: take())))
    case "sleep": usleep(useconds_t((Int(take()) ?? 0) * 1000))
    case "bye": try? socket.send(Frame(id: nextID, .bye)); emit(["step": step])
    default: emit(["step": step, "error": "unknown step"])
    }
}
