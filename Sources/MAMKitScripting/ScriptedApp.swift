import Crypto
import Foundation
import MAMKit
import MAMPolicy
import MAMProtect
import MAMScript
import Synchronization

/// The scripted mode of the SDK sample apps (docs/SCRIPTING.md): command lines on stdin, one
/// JSON object per line on stdout, every answer MAMKit's (the broker's decisions, the engine's
/// policy answers), events written as they arrive.
public enum ScriptedApp {
    /// Runs until `bye`, or until stdin ends: then, when `serveAfterInput` (an app the broker
    /// started to take a URL or document, whose stdin is /dev/null), on until the broker closes.
    /// Returns the exit status.
    public static func run(integratesSDK: Bool = true, serveAfterInput: Bool = false,
                           output: ScriptOutput = ScriptOutput(), lines: AsyncStream<String> = StandardInput.lines()) async -> Int32 {
        // The commands run on the threads their input and their answers arrive on (InlineExecutor).
        await withTaskExecutorPreference(InlineExecutor.shared) {
            await commands(integratesSDK: integratesSDK, serveAfterInput: serveAfterInput, output: output, lines: lines)
        }
    }

    static func commands(integratesSDK: Bool, serveAfterInput: Bool, output: ScriptOutput, lines: AsyncStream<String>) async -> Int32 {
        let app: MAMApp
        // The delegate goes in first: a restart asked at launch (auto-enrollment) is answered by it.
        let delegate = ScriptedDelegate()
        do {
            app = try await MAMApp.start(integratesSDK: integratesSDK, policyDelegate: delegate)
        } catch {
            output.failure(0, command: "start", "\(error)")
            return 1
        }
        let executor = Executor(app: app, output: output, delegate: delegate)
        let events = Task { await executor.collectEvents() }
        var number = 0
        for await line in lines {
            number += 1
            let command: ScriptCommand
            do {
                command = try ScriptCommand.parse(line)
            } catch {
                output.failure(number, command: "?", error.description)
                continue
            }
            if command.name == "bye" {
                output.result(number, command, ["ok": true])
                app.stop()
                return 0
            }
            delegate.commandStarted()
            await executor.execute(number, command)
            delegate.commandEnded()
        }
        if serveAfterInput { await events.value }
        app.stop()
        return 0
    }
}

/// Lines of standard input, read on their own thread (a blocking read must not hold a task).
public enum StandardInput {
    public static func lines() -> AsyncStream<String> {
        let (stream, sink) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .unbounded)
        let thread = Thread {
            // The command loop runs here when its line comes (InlineExecutor).
            InlineExecutor.runsJobsInPlace()
            while let line = readLine(strippingNewline: true) { sink.yield(line) }
            sink.finish()
        }
        thread.name = "script.stdin"
        thread.start()
        return stream
    }
}

/// Events not yet returned by `wait` or `events`, oldest first.
final class EventQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [(kind: String, fields: [String: JSONValue])] = []

    func append(_ kind: String, _ fields: [String: JSONValue]) {
        condition.lock()
        items.append((kind, fields))
        condition.broadcast()
        condition.unlock()
    }

    func takeAll() -> [(kind: String, fields: [String: JSONValue])] {
        condition.lock()
        defer { condition.unlock() }
        let all = items
        items = []
        return all
    }

    /// The oldest event of `kind`, waiting up to `seconds` (on a thread of its own, not a task's).
    func take(_ kind: String, seconds: Double) async -> [String: JSONValue]? {
        await withCheckedContinuation { c in
            let thread = Thread { [self] in
                let deadline = Date().addingTimeInterval(seconds)
                condition.lock()
                defer { condition.unlock() }
                while true {
                    if let i = items.firstIndex(where: { $0.kind == kind }) {
                        c.resume(returning: items.remove(at: i).fields)
                        return
                    }
                    if !condition.wait(until: deadline) {
                        c.resume(returning: nil)
                        return
                    }
                }
            }
            thread.start()
        }
    }
}

/// The policy delegate of a scripted app: it answers as the script says (`delegate …`), so a
/// test can play the user who cancels conditional launch or refuses an identity switch.
final class ScriptedDelegate: PolicyDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var conditionalLaunchPasses = true
    private var switchAnswer = SwitchIdentityResult.success
    private var wipes = true
    private var restartsItself = true
    private var commandsRunning = 0

    func set(conditionalLaunch passes: Bool) { lock.lock(); conditionalLaunchPasses = passes; lock.unlock() }
    func set(switchAnswer answer: SwitchIdentityResult) { lock.lock(); switchAnswer = answer; lock.unlock() }
    func set(wipes: Bool) { lock.lock(); self.wipes = wipes; lock.unlock() }
    func set(restartsItself: Bool) { lock.lock(); self.restartsItself = restartsItself; lock.unlock() }

    func commandStarted() { lock.withLock { commandsRunning += 1 } }
    func commandEnded() { lock.withLock { commandsRunning -= 1 } }

    /// A scripted app applies a first policy in place (it "restarts itself") unless the script
    /// leaves the restart to the SDK side (`delegate restart sdk`): the launcher then restarts it.
    /// Then the command in flight (the enroll that brought the first policy) writes its answer
    /// first: the launcher kills this instance as soon as the broker hears the answer, and an
    /// answer not yet written is lost with it, leaving the driver waiting (issue 20). Bounded,
    /// so a command that waits on something else cannot hold the restart up.
    func restartApplication() async -> Bool {
        if lock.withLock({ restartsItself }) { return true }
        let deadline = ContinuousClock.now + .seconds(5)
        while lock.withLock({ commandsRunning > 0 }), ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
        return false
    }

    /// The app's own wipe: this scripted app keeps nothing of its own beyond files, so it only
    /// says whether it claims to have wiped; the kit removes the account's files either way.
    func wipeData(for account: String) async -> Bool { lock.withLock { wipes } }

    func conditionalLaunch(for account: String, requirements: ConditionalLaunchRequirements) async -> Bool {
        lock.withLock { conditionalLaunchPasses }
    }

    func identitySwitchRequired(for account: String, reason: IdentitySwitchReason) async -> SwitchIdentityResult {
        lock.withLock { switchAnswer }
    }
}

struct Executor: Sendable {
    let app: MAMApp
    let output: ScriptOutput
    let queue = EventQueue()
    let delegate: ScriptedDelegate

    // MARK: Events

    func collectEvents() async {
        for await event in app.events {
            guard let (kind, fields) = describe(event) else { continue }
            queue.append(kind, fields)
            output.event(kind, fields)
        }
    }

    static func launch(_ n: LaunchCheckNotice) -> [String: JSONValue] {
        ["account": .string(n.account), "action": .string("\(n.action)"), "rule": .string(n.rule), "message": .string(n.message), "detail": .string(n.detail)]
    }

    func describe(_ event: MAMEvent) -> (String, [String: JSONValue])? {
        switch event {
        case let .url(u):
            return ("url", ["url": .string(u.delivered), "opened": .string(u.url), "sender": JSONValue(u.sender), "identity": Self.identity(u.identity)])
        case let .document(d):
            return ("document", [
                "type": .string(d.contentType), "name": .string(d.name), "owner": JSONValue(d.owner), "encrypted": .bool(d.encrypted),
                "readable": .bool(d.isReadable), "sha256": .string(Self.sha256(d.plaintext ?? d.bytes)), "identity": Self.identity(d.identity),
                "via": .string(d.via.rawValue), "size": .number(Double((d.plaintext ?? d.bytes).count)),
            ])
        case let .enrollment(n): return ("notice", Self.notice(n))
        case let .restart(account): return ("restart", ["account": .string(account)])
        case let .signedIn(account): return ("signin", ["account": .string(account)])
        case let .wipe(account, completed): return ("wipe", ["account": .string(account), "completed": .bool(completed)])
        case let .appConfigChanged(account): return ("config", ["account": .string(account)])
        case let .compliance(c):
            return ("compliance", ["account": .string(c.account), "status": .string("\(c.status)"), "code": .number(Double(c.status.rawValue)),
                                   "title": .string(c.title), "message": .string(c.message)])
        case .policyChanged: return nil
        case let .allowedAccountsChanged(list): return ("allowed-accounts", ["accounts": list.map { .array($0.map { .string($0) }) } ?? .null])
        case let .launchCheck(n): return ("launch", Self.launch(n))
        }
    }

    // MARK: Commands

    func execute(_ id: Int, _ command: ScriptCommand) async {
        do {
            let fields = try await run(command)
            output.result(id, command, fields)
        } catch let e as MAMKitError {
            var fields: [String: JSONValue] = ["error": .string(e.detail)]
            if case let .refused(code) = e.code { fields["code"] = .string("\(code)") } else { fields["code"] = .string("\(e.code)") }
            output.result(id, command, fields)
        } catch let e as MAMKit.DataProtection.Failure {
            output.result(id, command, ["error": .string(e.detail), "code": .string("\(e.status)"), "status": .number(Double(e.status.rawValue))])
        } catch let e as FileProtection.Failure {
            output.result(id, command, ["error": .string(e.detail), "code": .string("\(e.status)"), "status": .number(Double(e.status.rawValue))])
        } catch let e as UsageError {
            output.failure(id, command: command.name, e.message)
        } catch {
            output.failure(id, command: command.name, "\(error)")
        }
    }

    struct UsageError: Error { var message: String }

    func run(_ c: ScriptCommand) async throws -> [String: JSONValue] {
        do { return try await run(try Script(c)) } catch let e as Script.UsageError { throw UsageError(message: e.message) }
    }

    func run(_ script: Script) async throws -> [String: JSONValue] {
        let pm = app.policyManager
        func account(_ word: String) -> String { word.lowercased() == "personal" ? "" : word }
        switch script {
        case .hello:
            return ["app": .string(app.bundleID), "sdk": .bool(app.integratesSDK), "identity": Self.identity(pm.effectiveIdentity),
                    "accounts": .array(pm.signedInAccounts.map { .string($0) })]
        case let .identity(word):
            let (result, decision) = await pm.setUIIdentity(account(word))
            var fields: [String: JSONValue] = ["result": .string(result.name), "identity": Self.identity(pm.effectiveIdentity)]
            if let decision { fields["decision"] = Self.decision(decision) }
            return fields
        case let .window(name, change):
            let window = UIWindowID(name)
            var fields: [String: JSONValue] = [:]
            switch change {
            case let .identity(word)?:
                let name = word.lowercased() == "personal" ? "" : word.lowercased() == "none" ? nil : word
                let (result, decision) = await pm.setUIIdentity(name, for: window)
                fields["result"] = .string(result.name)
                if let decision { fields["decision"] = Self.decision(decision) }
            case let .identities(words)?:
                let names = words.map { $0.lowercased() == "personal" ? "" : $0 }
                let (result, decision) = await pm.setUIIdentities(names, for: window)
                fields["result"] = .string(result.name)
                if let decision { fields["decision"] = Self.decision(decision) }
            case .key?:
                fields["result"] = .string(await pm.makeKey(window).name)
            case nil:
                break
            }
            fields["window"] = JSONValue(pm.uiIdentity(for: window))
            fields["windowAccounts"] = pm.uiIdentities(for: window).map { .array($0.map { .string($0) }) } ?? .null
            fields["windowManaged"] = .bool(pm.policy(for: window).isManaged)
            fields["key"] = JSONValue(pm.keyWindow?.name)
            fields["identity"] = Self.identity(pm.effectiveIdentity)
            return fields
        case .pause:
            pm.pause()
            return ["ok": true]
        case .resume:
            // Conditional launch as the delegate answers it (`delegate conditional-launch …`,
            // `delegate switch allow|refuse` for a cancelled one).
            let result = await pm.resume()
            return ["result": .string(result.name), "identity": Self.identity(pm.effectiveIdentity), "managed": .bool(pm.policy.isManaged)]
        case let .delegate(answer):
            switch answer {
            case let .conditionalLaunch(pass): delegate.set(conditionalLaunch: pass)
            case let .switchIdentity(allow): delegate.set(switchAnswer: allow ? .success : .failed)
            case let .wipe(done): delegate.set(wipes: done)
            case let .restart(itself): delegate.set(restartsItself: itself)
            }
            return ["ok": true]
        case let .within(word, inner):
            return try await IdentityScope.withAccount(account(word)) { try await run(inner) }
        case let .scopes(word):
            return await scopes(account(word))
        case .registered:
            return ["accounts": .array(app.enrollment.registeredAccounts.map { .string($0) }), "enrolled": JSONValue(app.enrollment.enrolledAccount)]
        case .blocked:
            let blocked = app.policyManager.blockedAccounts
            return ["blocked": .array(blocked.map { .string($0) }),
                    "checks": .array(blocked.compactMap { app.policyManager.launchCheck(for: $0) }.map { .object(Self.launch($0)) })]
        case .allowedAccounts:
            return ["accounts": (try await app.enrollment.allowedAccounts()).map { .array($0.map { .string($0) }) } ?? .null]
        case let .queues(word):
            return await queues(account(word))
        case let .queued(inner):
            // A plain dispatch: whatever identity the work runs under, the interposed libdispatch
            // carried it from here (a Task made in the block inherits the block's).
            return try await withCheckedThrowingContinuation { (done: CheckedContinuation<[String: JSONValue], any Error>) in
                DispatchQueue.global().async {
                    Task<Void, Never> {
                        do { done.resume(returning: try await self.run(inner)) } catch { done.resume(throwing: error) }
                    }
                }
            }
        case let .policy(word):
            let policy = word.map { pm.policy(for: account($0)) } ?? pm.policy
            return ["managed": .bool(policy.isManaged), "policy": Self.policy(policy)]
        case .refresh:
            let revision = try await pm.refresh()
            return ["revision": revision.map { .number(Double($0)) } ?? .null, "managed": .bool(pm.policy.isManaged),
                    "identity": Self.identity(pm.effectiveIdentity)]
        case let .openURL(url):
            let d = try await app.urls.open(url)
            return ["decision": Self.decision(d), "target": .null]
        case let .canOpen(url):
            return ["result": .bool(try await app.urls.canOpen(url))]
        case let .copy(text):
            let n = try await app.pasteboard.copy(text)
            return ["ok": true, "change": .number(Double(n))]
        case .paste:
            let (d, text) = try await app.pasteboard.paste()
            return ["decision": Self.decision(d), "text": .string(text), "sha256": .string(Self.sha256(Array(text.utf8)))]
        case let .targets(type):
            let list = try await app.openIn.targets(for: type)
            return ["targets": .array(list.map { .object(["app": .string($0.bundleID), "outcome": .string($0.outcome.rawValue)]) })]
        case let .share(target, type, name, content):
            let d = try await retryingStart { try await app.openIn.share(Array(content.utf8), name: name, contentType: type, to: target) }
            return ["decision": Self.decision(d)]
        case let .serve(type, name, content):
            app.openIn.serve(Array(content.utf8), name: name, contentType: type)
            return ["ok": true]
        case let .importDocument(source, type):
            let (d, document) = try await retryingStart { try await app.openIn.importDocument(from: source, contentType: type) }
            if let document, let (kind, fields) = describe(.document(document)) {
                queue.append(kind, fields)
                output.event(kind, fields)
            }
            return ["decision": Self.decision(d)]
        case let .save(place, owner, name, content):
            guard let location = Self.saveLocation(place) else { throw UsageError(message: "\(place) is not a save location (\(SaveLocation.allCases.map(\.name).joined(separator: ", ")))") }
            let d = try await app.locations.save(Array(content.utf8), name: name, to: location, account: owner)
            return ["decision": Self.decision(d)]
        case let .open(place, owner, name):
            guard let location = Self.openLocation(place) else { throw UsageError(message: "\(place) is not an open location (\(OpenLocation.allCases.map(\.name).joined(separator: ", ")))") }
            let (d, bytes, fileOwner) = try await app.locations.open(name, from: location, account: owner)
            return ["decision": Self.decision(d), "readable": .bool(bytes != nil), "sha256": bytes.map { .string(Self.sha256($0)) } ?? .null,
                    "owner": JSONValue(fileOwner), "identity": Self.identity(pm.effectiveIdentity)]
        case let .wait(kind, seconds):
            guard var fields = await queue.take(kind, seconds: seconds) else { throw UsageError(message: "timeout") }
            fields["event"] = .string(kind)
            return fields
        case .events:
            return ["events": .array(queue.takeAll().map { item in
                var f = item.fields
                f["event"] = .string(item.kind)
                return .object(f)
            })]
        case let .writeFile(name, owner, text):
            // A file in the app's container, owned by ACCOUNT, or with - by the identity in
            // effect for file work (`in ACCOUNT write-file NAME - TEXT`: the scoped one), and
            // encrypted when that account's policy requires it.
            let path = try Self.containerFile(name)
            if let owner {
                guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
                    throw UsageError(message: "\(name) could not be written")
                }
                try await app.fileProtection.protect(path, for: account(owner))
            } else {
                try await app.fileProtection.createFile(path, contents: Array(text.utf8))
            }
            return ["owner": JSONValue(try app.fileProtection.owner(of: path)), "encrypted": .bool(try app.fileProtection.isFileEncrypted(path))]
        case let .readFile(name):
            let path = try Self.containerFile(name)
            guard FileManager.default.fileExists(atPath: path) else { return ["exists": false] }
            let encrypted = try app.fileProtection.isFileEncrypted(path)
            let bytes = Array((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data())
            return ["exists": true, "owner": JSONValue(try app.fileProtection.owner(of: path)), "encrypted": .bool(encrypted),
                    "text": encrypted ? .null : .string(String(decoding: bytes, as: UTF8.self)), "sha256": .string(Self.sha256(bytes))]
        case let .writeAt(name, owner, offset, text):
            // Plaintext at an offset of a managed account's encrypted file (IntuneMAMFile).
            let file = try await app.fileProtection.encryptedFile(try Self.containerFile(name), for: owner)
            defer { file.close() }
            try file.write(Array(text.utf8), at: offset)
            try file.sync()
            return ["size": .number(Double(file.size))]
        case let .readAt(name, owner, offset, count):
            let file = try await app.fileProtection.encryptedFile(try Self.containerFile(name), for: owner)
            defer { file.close() }
            return ["text": .string(String(decoding: try file.read(at: offset, count: count), as: UTF8.self))]
        case .files:
            let names = (try? FileManager.default.contentsOfDirectory(atPath: FileManager.default.currentDirectoryPath)) ?? []
            return ["files": .array(names.filter { !$0.hasPrefix(".") }.sorted().map { .string($0) })]
        case let .protect(owner, text):
            let data = try await app.dataProtection.protect(Array(text.utf8), for: owner)
            let info = app.dataProtection.protectionInfo(of: data)
            return ["data": .string(Data(data).base64EncodedString()), "protected": .bool(info != nil),
                    "encrypted": .bool(info?.isEncrypted ?? false), "owner": JSONValue(info?.owner)]
        case let .unprotect(data):
            let owner = app.dataProtection.owner(of: data)
            let plain = try await app.dataProtection.unprotect(data)
            return ["text": .string(String(decoding: plain, as: UTF8.self)), "owner": JSONValue(owner)]
        case let .enroll(name):
            return Self.notice(try await app.enrollment.registerAndEnroll(name))
        case .loginEnroll:
            return Self.notice(try await app.enrollment.loginAndEnroll())
        case let .unenroll(name, wipe):
            let notice = try await app.enrollment.deregisterAndUnenroll(name, wipe: wipe)
            return notice.map(Self.notice) ?? ["wipe": .string(name)]
        case let .appConfig(name):
            let config = try await app.appConfig.appConfig(for: name)
            return ["config": .array(config.fullData.map { .object($0.mapValues { .string($0) }) })]
        case let .token(name):
            let (outcome, detail) = try await app.compliance.acquireToken(for: name)
            switch outcome {
            case .granted: return ["token": "granted", "homeAccountId": .null, "detail": .string(detail)]
            case let .protectionPolicyRequired(home): return ["token": "protectionPolicyRequired", "homeAccountId": JSONValue(home), "detail": .string(detail)]
            case .refused: return ["token": "refused", "homeAccountId": .null, "detail": .string(detail)]
            }
        case let .remediate(name, silent):
            let (acceptance, detail) = try await app.compliance.remediateCompliance(for: name, silent: silent)
            return ["accepted": .string("\(acceptance)"), "detail": .string(detail)]
        case .bye:
            // The reading loop ends the script at `bye`; a `bye` anywhere else is no command.
            throw UsageError(message: "bye ends the script; it is not a command to run here")
        }
    }

    /// The effective identity and whether its policy is managed, seen inside a scope for
    /// `account` from the scope itself, an `async let`, a task group's child, an unstructured
    /// `Task {}` and a `Task.detached` (SEMANTICS §1: inherited at creation, except detached).
    func scopes(_ account: String) async -> [String: JSONValue] {
        let pm = app.policyManager
        @Sendable func seen() -> JSONValue {
            ["identity": Self.identity(pm.effectiveIdentity), "scoped": JSONValue(pm.scopedIdentity), "managed": .bool(pm.policy.isManaged)]
        }
        return await IdentityScope.withAccount(account) {
            async let child = seen()
            let group = await withTaskGroup(of: JSONValue.self) { g in
                g.addTask { seen() }
                return await g.next() ?? .null
            }
            let unstructured = await Task { seen() }.value
            let detached = await Task.detached { seen() }.value
            // Inside the scope after the awaits, and a nested scope that clears it.
            let after = seen()
            let cleared = IdentityScope.withAccount(nil) { seen() }
            return ["scope": after, "asyncLet": await child, "taskGroup": group, "task": unstructured, "detached": detached,
                    "nestedNil": cleared, "outside": .null]
        }.merging(["outside": seen()]) { _, b in b }
    }

    /// The effective identity seen by work queued inside a scope for `account` (seed 000 and
    /// seed 002 §Thread queues), through the plain calls and MAMKit's explicit ones: Dispatch
    /// `async`, `asyncAfter`, `sync`, a barrier, a group and its notification, `concurrentPerform`,
    /// a source's handler, work items (which keep the identity of the code that made them, not of
    /// the code that dispatches them), OperationQueue operations (serial, added under two
    /// identities while the first still runs), and work that sets another identity while it runs;
    /// then the queue's next work, queued outside the scope, which carries none.
    func queues(_ account: String) async -> [String: JSONValue] {
        let pm = app.policyManager
        @Sendable func seen() -> JSONValue {
            ["identity": Self.identity(pm.effectiveIdentity), "scoped": JSONValue(pm.scopedIdentity), "managed": .bool(pm.policy.isManaged)]
        }
        func on(_ enqueue: (@escaping @Sendable (JSONValue) -> Void) -> Void) async -> JSONValue {
            await withCheckedContinuation { c in enqueue { c.resume(returning: $0) } }
        }
        let queue = DispatchQueue(label: "mamlab.scripted.queues")
        let concurrent = DispatchQueue(label: "mamlab.scripted.concurrent", attributes: .concurrent)
        let operations = OperationQueue()
        let other = account.isEmpty ? "dana@outlook.com" : ""
        var out: [String: JSONValue] = await IdentityScope.withAccount(account) {
            let kept = await on { done in queue.asyncKeepingIdentity { done(seen()) } }
            let plain = await on { done in queue.async { done(seen()) } }
            let later = await on { done in queue.asyncAfterKeepingIdentity(deadline: .now() + .milliseconds(10)) { done(seen()) } }
            let plainLater = await on { done in queue.asyncAfter(deadline: .now() + .milliseconds(10)) { done(seen()) } }
            let synced = queue.syncKeepingIdentity { seen() }
            let plainSync = DispatchQueue.global().sync { seen() }
            let barrier = await on { done in concurrent.async(flags: .barrier) { done(seen()) } }
            let group = DispatchGroup()
            let inGroup = await on { done in concurrent.async(group: group) { done(seen()) } }
            let notified = await on { done in group.notify(queue: queue) { done(seen()) } }
            let performed = Mutex<[JSONValue]>([])
            DispatchQueue.concurrentPerform(iterations: 4) { _ in performed.withLock { $0.append(seen()) } }
            let source = await on { done in
                let timer = DispatchSource.makeTimerSource(queue: queue)
                timer.setEventHandler { timer.cancel(); done(seen()) }
                timer.schedule(deadline: .now() + .milliseconds(5))
                timer.resume()
            }
            let changed = await on { done in queue.asyncKeepingIdentity { IdentityScope.withAccount(other) { done(seen()) } } }
            let plainChanged = await on { done in queue.async { IdentityScope.withAccount(other) { done(seen()) } } }
            let operation = await on { done in operations.addOperationKeepingIdentity { done(seen()) } }
            let plainOperation = await on { done in operations.addOperation { done(seen()) } }
            let itemInScope = await on { done in queue.async(execute: DispatchWorkItem { done(seen()) }) }
            let dispatchedOutsideItem = await on { done in
                let item = IdentityScope.withAccount(nil) { DispatchWorkItem { done(seen()) } }
                queue.async(execute: item)
            }
            return ["async": kept, "plainAsync": plain, "asyncAfter": later, "plainAsyncAfter": plainLater, "sync": synced,
                    "plainSync": plainSync, "barrier": barrier, "groupAsync": inGroup, "groupNotify": notified,
                    "concurrentPerform": .array(performed.withLock { $0 }), "sourceHandler": source,
                    "changedInside": changed, "plainChangedInside": plainChanged, "operation": operation, "plainOperation": plainOperation,
                    "workItemMadeInScope": itemInScope, "workItemMadeOutside": dispatchedOutsideItem]
        }
        out["workItem"] = await on { done in
            let item = IdentityScope.withAccount(account) { IdentityScope.workItem { done(seen()) } }
            queue.async(execute: item)
        }
        out["plainWorkItem"] = await on { done in
            let item = IdentityScope.withAccount(account) { DispatchWorkItem { done(seen()) } }
            queue.async(execute: item)
        }
        out["serialOperations"] = await serialOperations(account, other: other, seen: seen)
        out["afterWork"] = await on { done in queue.async { done(seen()) } }
        out["carriesIntoPlainQueues"] = .bool(IdentityScope.carriesIntoPlainQueues)
        return out
    }

    /// A serial OperationQueue given two operations under two identities while a third, added
    /// first under no scope, still runs: the queue starts each from the thread the one before it
    /// ran on, and each must still run under the identity it was added with.
    func serialOperations(_ account: String, other: String, seen: @escaping @Sendable () -> JSONValue) async -> JSONValue {
        let serial = OperationQueue()
        serial.maxConcurrentOperationCount = 1
        let gate = DispatchSemaphore(value: 0)
        final class Results: Sendable { let seen = Mutex<[String: JSONValue]>([:]) }
        let results = Results()
        serial.addOperation { _ = gate.wait(timeout: .now() + 10); results.seen.withLock { $0["first"] = seen() } }
        IdentityScope.withAccount(account) { serial.addOperation { results.seen.withLock { $0["second"] = seen() } } }
        IdentityScope.withAccount(other) { serial.addOperation(BlockOperation { results.seen.withLock { $0["third"] = seen() } }) }
        gate.signal()
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async { serial.waitUntilAllOperationsAreFinished(); c.resume() }
        }
        return .object(results.seen.withLock { $0 })
    }

    /// A target or source that is still starting is not known to the broker yet: try again
    /// for a few seconds, as a user would.
    func retryingStart<T>(_ body: () async throws -> T) async throws -> T {
        var attempt = 0
        while true {
            do { return try await body() } catch let e as MAMKitError where e.code == .refused(.unknownTarget) && attempt < 50 {
                attempt += 1
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    // MARK: Forms

    static func identity(_ identity: Identity?) -> JSONValue {
        switch identity {
        case nil: return .null
        case .personal?: return ""
        case let .account(a)?: return .string(a.upn ?? a.name)
        }
    }

    static func decision(_ d: SharingDecision) -> JSONValue {
        ["outcome": .string(d.outcome.rawValue), "allowed": .bool(d.allowed), "rule": .string(d.rule), "message": .string(d.message),
         "detail": .string(d.detail), "tag": .string(d.tag.rawValue), "ruleName": .string(d.ruleName), "decidedAt": .string(d.decidedAt)]
    }

    static func notice(_ n: EnrollmentNotice) -> [String: JSONValue] {
        ["kind": .string("\(n.kind)"), "account": .string(n.account), "status": .number(Double(n.code)),
         "statusName": JSONValue(n.status.map { "\($0)" }), "succeeded": .bool(n.didSucceed)]
    }

    static func policy(_ p: AppPolicy) -> JSONValue {
        let account = p.identity?.account.map { $0.upn ?? $0.name }
        var save: [String: JSONValue] = [:]
        for (l, ok) in p.saveToLocations(account: account) { save[l.name] = .bool(ok) }
        var open: [String: JSONValue] = [:]
        for (l, ok) in p.openFromLocations(account: account) { open[l.name] = .bool(ok) }
        return [
            "identity": identity(p.identity), "isManaged": .bool(p.isManaged), "isPINRequired": .bool(p.isPINRequired),
            "isFileEncryptionRequired": .bool(p.isFileEncryptionRequired), "notificationPolicy": .string(p.notificationPolicy.rawValue),
            "isAppSharingAllowed": .bool(p.isAppSharingAllowed), "isSpotlightIndexingAllowed": .bool(p.isSpotlightIndexingAllowed),
            "areSiriIntentsAllowed": .bool(p.areSiriIntentsAllowed), "isManagedBrowserRequired": .bool(p.isManagedBrowserRequired),
            "isContactSyncAllowed": .bool(p.isContactSyncAllowed), "isPrintingAllowed": .bool(p.isPrintingAllowed),
            "isBackupAllowed": .bool(p.isBackupAllowed), "saveTo": .object(save), "openFrom": .object(open),
        ]
    }

    /// A plain file name in the container (the working directory): no folders, no dot names.
    static func containerFile(_ name: String) throws -> String {
        guard !name.isEmpty, name.utf8.count <= 255, !name.hasPrefix("."), !name.contains("/"), !name.contains("\0") else {
            throw UsageError(message: "a file name is one plain name in the container (no '/', not starting with '.')")
        }
        return FileManager.default.currentDirectoryPath + "/" + name
    }

    static func saveLocation(_ name: String) -> SaveLocation? {
        SaveLocation.allCases.first { $0.name == name } ?? SaveLocation(name: name)
    }

    static func openLocation(_ name: String) -> OpenLocation? {
        OpenLocation.allCases.first { $0.name == name } ?? OpenLocation(name: name)
    }

    static func sha256(_ bytes: [UInt8]) -> String {
        Hex.lowercase(SHA256.hash(data: bytes))
    }
}
