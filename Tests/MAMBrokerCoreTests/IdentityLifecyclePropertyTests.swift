import Foundation
import MAMBroker
import MAMBrokerCore
import MAMCatalog
import MAMPolicy
import MAMTestSupport
import MAMWire
import Testing

/// Issue 19, as a property: random identity lifecycles (launch with or without a user, sign-in
/// after launch with a right, wrong or no password, enroll and unenroll under any spelling, an
/// admin wipe, a second instance, a relaunch, a switch, a document received, a quit) driven
/// through the broker's core. After every step the broker agrees with the engine asked about the
/// state a `LifecycleModel` kept from what the user did and what the apps were told: each
/// instance is the party the engine builds (identity, enrolled account, managed, policy), each
/// identity switch and each share is the engine's decision with its rule, an enrollment is
/// refused for an account not signed in and refused as a second managed account exactly when the
/// engine says so, and a key goes to an account exactly when it is signed in and enrolled in that
/// instance, never otherwise.
///
/// A failure names its seed and the steps that led to it; `MAMLAB_LIFECYCLE_SEED=N` runs that
/// one lifecycle alone (`MAMLAB_LIFECYCLE_TRACE=1` adds each instance's party after each step).
@Suite("Broker core: random identity lifecycles agree with the engine at every step")
struct IdentityLifecyclePropertyTests {
    static let apps = ["com.contoso.mail", "com.contoso.docs", "com.contoso.dialer", "com.example.chat", "com.microsoft.msedge", "com.example.notes"]
    static let launchUsers: [String?] = [nil, nil, "adele@contoso.com", "ben@contoso.com", "dana@outlook.com"]
    static let names = ["adele@contoso.com", "ADELE@contoso.com", "5F1C7A2E-3B4D-4E6F-8A9B-0C1D2E3F4A5B", "ben@contoso.com",
                        "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", "dana@outlook.com", "carol@contoso.com"]
    static let passwords: [String?] = [nil, "contoso-adele", "contoso-ben", "wrong"]
    static let types = ["com.adobe.pdf", "public.plain-text", "com.microsoft.word.doc"]
    /// 1,200 lifecycles in the suite (about 10 s of one core in a debug build);
    /// `MAMLAB_LIFECYCLES=N` runs N.
    static let lifecyclesPerChunk = (ProcessInfo.processInfo.environment["MAMLAB_LIFECYCLES"].flatMap(Int.init) ?? 1_200) / 8

    /// The sample tenant's credentials against the passwords tried, each checked once: PBKDF2
    /// is slow by design, and a lifecycle tries hundreds.
    static let verdicts: [String: Bool] = {
        var v: [String: Bool] = [:]
        for u in CoreLab.sampleTenant.users {
            guard let c = u.credential else { continue }
            for p in passwords.compactMap({ $0 }) { v[c + "\n" + p] = Credential.matches(c, password: p) }
        }
        return v
    }()

    @Test(arguments: 0..<8)
    func lifecycles(chunk: Int) {
        if let only = ProcessInfo.processInfo.environment["MAMLAB_LIFECYCLE_SEED"].flatMap(UInt64.init) {
            if chunk == 0, let failure = Self.run(seed: only) { Issue.record(Comment(rawValue: failure)) }
            return
        }
        for n in 0..<Self.lifecyclesPerChunk {
            let seed = UInt64(chunk * Self.lifecyclesPerChunk + n)
            if let failure = Self.run(seed: seed) {
                Issue.record(Comment(rawValue: failure))
                return
            }
        }
    }

    /// One lifecycle of 60 steps; the first disagreement, with the seed and the steps, or nil.
    static func run(seed: UInt64, steps: Int = 60) -> String? {
        var g = SplitMix64(state: seed &* 0x5851_F42D_4C95_7F2D &+ 1)
        var lab = CoreLab(tenant: CoreLab.sampleTenant, apps: CoreLab.sampleApps, credentials: { Self.verdicts[$0 + "\n" + $1] ?? false })
        var model = LifecycleModel(engine: lab.core.engine)
        let engine = lab.core.engine
        var seen: [Int: Int] = [:]
        var auditsSeen = 0
        var trail: [String] = []
        // Wrong passwords in a row, by account: after three, a password is not looked at until
        // time passes (the broker's SignInThrottle), and here no time passes.
        var wrongInARow: [String: Int] = [:]
        /// "app|account" enrollments a wipe was issued against (the admin's, or the app's own
        /// unenroll with wipe) and not yet delivered: a wipe request for any other is a wipe of an
        /// enrollment nobody wiped, such as one made after the admin's wipe.
        var owed: Set<String> = []
        func fail(_ what: String) -> String {
            "seed \(seed) (MAMLAB_LIFECYCLE_SEED=\(seed)): \(what)\nsteps:\n" + trail.enumerated().map { "  \($0.offset): \($0.element)" }.joined(separator: "\n")
        }
        func manifest(_ app: String) -> AppManifest { engine.apps[app]! }
        func id(_ n: Int) -> SessionID { SessionID(n) }

        /// Every frame the apps got since the last look, as the model learns it; a key is checked
        /// wherever it arrives, asked for or not.
        func observe() -> String? {
            var delivered: Set<String> = []
            defer { owed.subtract(delivered) }
            for n in model.instances.keys.sorted() {
                let new = lab.received(id(n)).dropFirst(seen[n] ?? 0)
                seen[n, default: 0] += new.count
                for d in new {
                    if case let .accountKey(name, _) = d.frame.message {
                        guard let a = model.account(name), model.mayHoldKey(n, a) else {
                            return fail("\(model.instances[n]!.app.bundleID)#\(n) was handed the key of \(name); signed in there: \(model.instances[n]!.signedIn), enrolled: \(String(describing: model.enrolled(n)))")
                        }
                    }
                    if case let .wipeRequest(name) = d.frame.message, let a = model.account(name) {
                        let row = LifecycleModel.key(model.instances[n]!.app, a)
                        guard owed.contains(row) || delivered.contains(row) else {
                            return fail("\(model.instances[n]!.app.bundleID)#\(n) was told to wipe \(name), an enrollment no wipe was issued against")
                        }
                        delivered.insert(row)
                    }
                    switch d.frame.message {
                    case .enrollmentNotice, .wipeRequest, .restartRequest, .signedIn: trail.append("    #\(n) is told \(d.frame.message)")
                    default: break
                    }
                    // What the service said of an enrollment is learned from its audit line below:
                    // a notice reaches only the instances its account is signed in to.
                    switch d.frame.message {
                    case .enrollmentNotice, .wipeRequest: break
                    default: model.told(n, d.frame.message)
                    }
                }
            }
            for entry in lab.shell.audits.dropFirst(auditsSeen) where entry.channel == "enrollment" {
                let parts = (entry.detail ?? "").split(separator: ":", omittingEmptySubsequences: false)
                guard parts.count == 2, let status = UInt16(parts[1].trimmingCharacters(in: .whitespaces)),
                      let n = model.instances.keys.sorted().first(where: { model.instances[$0]!.app.bundleID.lowercased() == entry.source.app.lowercased() })
                else { continue }
                model.told(n, .enrollmentNotice(kind: status == 102 || status == 104 ? 2 : 0, account: String(parts[0]), status: status))
            }
            auditsSeen = lab.shell.audits.count
            return nil
        }

        /// Each running instance is the party the engine builds from the model's state.
        func agree() -> String? {
            for n in model.instances.keys.sorted() {
                guard let broker = lab.core.party(of: id(n)) else { return fail("#\(n) is not connected") }
                let expected = model.party(n)
                let same = broker.identity == expected.identity && broker.enrolled == expected.enrolled && broker.isManaged == expected.isManaged
                    && broker.policy?.id == expected.policy?.id && broker.personalAccountSignedIn == expected.personalAccountSignedIn
                if !same {
                    let b = "identity \(broker.identity), enrolled \(String(describing: broker.enrolled)), managed \(broker.isManaged), personal signed in \(broker.personalAccountSignedIn)"
                    let e = "identity \(expected.identity), enrolled \(String(describing: expected.enrolled)), managed \(expected.isManaged), personal signed in \(expected.personalAccountSignedIn)"
                    return fail("\(expected.bundleID)#\(n): the broker has \(b); the engine, from what the user did: \(e) (signed in: \(model.instances[n]!.signedIn))")
                }
            }
            return nil
        }

        func same(_ got: DecisionRecord?, _ d: Decision) -> Bool {
            got != nil && got!.allowed == d.allowed && got!.rule == d.rule.id && Int(got!.outcome) == Outcome.allCases.firstIndex(of: d.outcome)!
        }

        for step in 0..<steps {
            let live = model.instances.keys.sorted()
            let roll = Int.random(in: 0..<100, using: &g)
            if live.isEmpty || roll < 14 {
                let app = apps.randomElement(using: &g)!, user = launchUsers.randomElement(using: &g)!
                trail.append("launch \(app)" + (user.map { " --user \($0)" } ?? ""))
                let s = lab.launch(app, account: user)
                model.launch(s.raw, manifest(app), user: user)
            } else {
                let n = live.randomElement(using: &g)!
                let me = model.instances[n]!.app.bundleID
                let name = names.randomElement(using: &g)!
                switch roll {
                case 14..<28:
                    let secret = passwords.randomElement(using: &g)!, sameLauncher = Bool.random(using: &g)
                    trail.append("#\(n) \(me): the user signs in \(name) with " + (secret.map { "password \($0)" } ?? "no password") + (sameLauncher ? " from its launcher" : " from elsewhere"))
                    let before = lab.received(id(n)).count
                    lab.run(lab.core.handle(.signIn(id(n), account: name, secret: secret, sameLauncher: sameLauncher)))
                    let told = lab.received(id(n)).dropFirst(before).contains { if case .signedIn = $0.frame.message { true } else { false } }
                    // The sample tenant's demo passwords (docs/POLICIES.md), by user index.
                    let a = model.account(name)
                    let right = secret != nil && a?.userIndex.map { ["contoso-adele", "contoso-ben"][$0] } == secret
                    let proven = secret != nil || !sameLauncher
                    let key = a.map { $0.upn ?? $0.name } ?? ""
                    let throttled = a != nil && proven && wrongInARow[key, default: 0] >= 3
                    let accepted = a != nil && !throttled && (secret == nil ? sameLauncher : right)
                    if a != nil && proven && !throttled { wrongInARow[key] = accepted ? 0 : wrongInARow[key, default: 0] + 1 }
                    if accepted { model.signIn(n, a!) }
                    if told != accepted { return fail("sign-in of \(name): the app was told \(told), expected \(accepted)") }
                case 28..<40:
                    trail.append("#\(n) \(me): enroll \(name)")
                    let a = model.account(name)
                    let signedIn = a.map { model.instances[n]!.signedIn.contains($0) } ?? false
                    let bundle = me.lowercased()
                    let already = model.appEnrolled[bundle]
                    let got = lab.send(id(n), .enroll(account: name))
                    let sdk = manifest(me).integratesSDK
                    if !sdk || !signedIn {
                        if got.error != WireErrorCode.notAllowed { return fail("enroll \(name) not signed in here: answered \(got.map { $0.frame.message })") }
                    } else {
                        let statuses = got.compactMap { d -> Int? in if case let .enrollmentNotice(0, _, s) = d.frame.message { Int(s) } else { nil } }
                        guard let status = statuses.first else { return fail("enroll \(name): no enrollment notice, answered \(got.map { $0.frame.message })") }
                        // The engine's one-managed-account rule, with the app's enrolled account first.
                        let refused: Bool
                        if case .failure = engine.enrollment(of: manifest(me), signedIn: [already, a].compactMap { $0 }) { refused = true } else { refused = false }
                        if (status == EnrollmentStatus.singleManagedAccountMode.rawValue) != refused && engine.tenant.device.enrollments[bundle] == nil {
                            return fail("enroll \(name) beside \(String(describing: already)): status \(status), the engine refuses: \(refused)")
                        }
                    }
                case 40..<48:
                    let wipe = Bool.random(using: &g)
                    trail.append("#\(n) \(me): unenroll \(name)" + (wipe ? " with wipe" : ""))
                    if wipe, let a = model.account(name) { owed.insert(LifecycleModel.key(manifest(me), a)) }
                    lab.send(id(n), .unenroll(account: name, wipe: wipe))
                case 48..<52:
                    let app = Bool.random(using: &g) ? nil : me
                    trail.append("admin wipes \(name)" + (app.map { " from \($0)" } ?? " everywhere"))
                    if let a = model.account(name) {
                        owed.formUnion(lab.core.wipeTargets(account: name, app: app).map { $0.lowercased() + "|" + a.description.lowercased() })
                    }
                    lab.run(lab.core.handle(.wipe(account: name, app: app)))
                case 52..<57:
                    trail.append("#\(n) \(me): quits")
                    lab.send(id(n), .bye)
                    model.instances[n] = nil
                case 57..<68:
                    let target = apps.randomElement(using: &g)!, type = types.randomElement(using: &g)!
                    // A running instance takes it (the oldest, as the broker picks); starting an app is another test's.
                    guard let to = model.instances.keys.sorted().first(where: { $0 != n && model.instances[$0]!.app.bundleID == target }) else { continue }
                    trail.append("#\(n) \(me): shares a \(type) to \(target)#\(to)")
                    let d = engine.openIn(type: type, from: model.party(n), to: model.party(to))
                    let got = lab.send(id(n), .share(target: target, contentType: type, name: "s\(step)"), lab.document("minutes \(step)"))
                    lab.flushJobs()
                    if !same(got.decision, d) { return fail("share: the broker decided \(String(describing: got.decision)), the engine \(d.outcome) by \(d.rule.id)") }
                    // The receiving SDK switches to the document's identity, as MAMKit does, and the switch is decided too.
                    if d.outcome == Outcome.switched, let wanted = d.receivingIdentity {
                        trail.append("#\(to) \(target): switches to \(wanted) on arrival")
                        let s = engine.setIdentity(wanted, for: model.party(to), signedIn: model.instances[to]!.signedIn)
                        let answer = lab.send(id(to), .setIdentity(account: wanted.account.map { $0.upn ?? $0.name } ?? ""))
                        if !same(answer.decision, s) { return fail("switch on arrival: the broker decided \(String(describing: answer.decision)), the engine \(s.outcome) by \(s.rule.id)") }
                        if s.allowed { model.instances[to]!.identity = wanted }
                    }
                case 68..<78:
                    trail.append("#\(n) \(me): sets identity \(name)")
                    let wanted = engine.tenant.identity(named: name)
                    let d = engine.setIdentity(wanted, for: model.party(n), signedIn: model.instances[n]!.signedIn)
                    let got = lab.send(id(n), .setIdentity(account: name))
                    if !same(got.decision, d) { return fail("setIdentity \(name): the broker decided \(String(describing: got.decision)), the engine \(d.outcome) by \(d.rule.id)") }
                    if d.allowed { model.instances[n]!.identity = wanted }
                default:
                    trail.append("#\(n) \(me): asks for the key of \(name)")
                    let expected = model.account(name).map { model.mayHoldKey(n, $0) } ?? false
                    let got = lab.send(id(n), .keyRequest(account: name))
                    let granted = got.contains { if case .accountKey = $0.frame.message { true } else { false } }
                    if granted != expected {
                        return fail("key of \(name): granted \(granted), the engine's state says \(expected) (signed in: \(model.instances[n]!.signedIn), "
                                    + "enrolled: \(String(describing: model.enrolled(n))), the app's enrollment: \(String(describing: model.appEnrolled[me.lowercased()])))")
                    }
                }
            }
            if let f = observe() ?? agree() { return f }
            if ProcessInfo.processInfo.environment["MAMLAB_LIFECYCLE_TRACE"] != nil {
                for n in model.instances.keys.sorted() { trail.append("    #\(n) is \(model.party(n)) enrolled \(String(describing: model.enrolled(n)))") }
            }
        }
        return nil
    }
}
