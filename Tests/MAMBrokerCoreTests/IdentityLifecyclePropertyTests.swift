import MAMBroker
import MAMBrokerCore
import MAMPolicy
import MAMTestSupport
import MAMWire
import Testing

/// Issue 19, as a property: random identity lifecycles (launch with or without a user, a sign-in
/// after launch with a right, wrong or no password, enroll and unenroll under any spelling, an
/// admin wipe, a second instance, a relaunch, a switch, a document received, a quit) never hand a key, nor an identity, to an account the
/// user has not signed in to that instance, or has signed out of the app since. The model is
/// kept beside the core from what the user did and what the apps were told.
@Suite("Broker core: random identity lifecycles never give a key to an account not signed in")
struct IdentityLifecyclePropertyTests {
    static let apps = ["com.contoso.mail", "com.contoso.docs", "com.contoso.dialer", "com.example.chat"]
    static let launchUsers: [String?] = [nil, nil, "adele@contoso.com", "ben@contoso.com", "dana@outlook.com"]
    static let names = ["adele@contoso.com", "ADELE@contoso.com", "5F1C7A2E-3B4D-4E6F-8A9B-0C1D2E3F4A5B", "ben@contoso.com",
                        "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", "dana@outlook.com", "carol@contoso.com"]
    static let passwords: [String?] = [nil, "contoso-adele", "contoso-ben", "wrong"]

    struct Instance {
        var app: String
        /// Tenant users (by index) the user signed in to this instance and has not signed out.
        var signedIn: Set<Int>
        var seen = 0
    }

    @Test(arguments: 0..<40)
    func lifecycles(seed: Int) {
        var g = SplitMix64(state: UInt64(seed) &* 0x5851_F42D_4C95_7F2D)
        var lab = CoreLab()
        let tenant = lab.core.engine.tenant
        func user(_ name: String) -> Int? { tenant.identity(named: name).account?.userIndex }
        var instances: [SessionID: Instance] = [:]
        /// (app, user) pairs the user signed out of the app (an unenrollment, a wipe).
        var signedOut: Set<String> = []
        func key(_ app: String, _ u: Int) -> String { "\(app)|\(u)" }

        /// What the apps were told since: an unenrollment or a wipe signs the account out of the app.
        func observe() {
            for (id, inst) in instances {
                let new = lab.received(id).dropFirst(inst.seen)
                instances[id]!.seen += new.count
                for d in new {
                    let gone: String?
                    switch d.frame.message {
                    case let .wipeRequest(account): gone = account
                    case let .enrollmentNotice(2, account, 104): gone = account
                    default: gone = nil
                    }
                    guard let name = gone, let u = user(name) else { continue }
                    signedOut.insert(key(inst.app, u))
                    for (other, o) in instances where o.app == inst.app { instances[other]!.signedIn.remove(u) }
                }
            }
        }

        for step in 0..<60 {
            let live = instances.keys.sorted()
            let roll = Int.random(in: 0..<100, using: &g)
            if live.isEmpty || roll < 15 {
                let app = Self.apps.randomElement(using: &g)!
                let launchUser = Self.launchUsers.randomElement(using: &g)!
                var signed: Set<Int> = []
                if let launchUser, let u = user(launchUser) {
                    signed = [u]
                    signedOut.remove(key(app, u))
                } else if launchUser == nil, let d = tenant.defaultEnrollment(app: app)?.userIndex, !signedOut.contains(key(app, d)) {
                    signed = [d]
                }
                let id = lab.launch(app, account: launchUser)
                instances[id] = Instance(app: app, signedIn: signed)
                observe()
                continue
            }
            let id = live.randomElement(using: &g)!
            let name = Self.names.randomElement(using: &g)!
            switch roll {
            case 15..<30:
                let secret = Self.passwords.randomElement(using: &g)!, sameLauncher = Bool.random(using: &g)
                lab.run(lab.core.handle(.signIn(id, account: name, secret: secret, sameLauncher: sameLauncher)))
                // The sample tenant's demo passwords (docs/POLICIES.md), by user index.
                let right = secret != nil && user(name).map { ["contoso-adele", "contoso-ben"][$0] } == secret
                if let u = user(name), secret == nil ? sameLauncher : right {
                    instances[id]!.signedIn.insert(u)
                    signedOut.remove(key(instances[id]!.app, u))
                }
            case 30..<45: lab.send(id, .enroll(account: name))
            case 45..<55: lab.send(id, .unenroll(account: name, wipe: Bool.random(using: &g)))
            case 55..<60:
                let app = Bool.random(using: &g) ? nil : instances[id]!.app
                lab.run(lab.core.handle(.wipe(account: name, app: app)))
            case 60..<65:
                lab.send(id, .bye)
                instances[id] = nil
                continue
            case 65..<72:
                // Receive: a document shared to another app; an instance that switches to its
                // owner's account on arrival may only switch to an account signed in there.
                let target = Self.apps.randomElement(using: &g)!
                let before = Dictionary(uniqueKeysWithValues: instances.keys.map { ($0, lab.core.party(of: $0)?.identity) })
                lab.send(id, .share(target: target, contentType: "com.adobe.pdf", name: "s\(step).pdf"), lab.document("minutes \(step)"))
                lab.flushJobs()
                for (other, inst) in instances where inst.app == target {
                    let now = lab.core.party(of: other)?.identity
                    if now != before[other] ?? nil, case let .account(a)? = now, let u = a.userIndex {
                        #expect(inst.signedIn.contains(u), "seed \(seed) step \(step): \(target) switched to \(a) on receiving, signed in: \(inst.signedIn)")
                    }
                }
            case 72..<80:
                let got = lab.send(id, .setIdentity(account: name))
                if got.decision?.allowed == true, let u = user(name) {
                    #expect(instances[id]!.signedIn.contains(u), "seed \(seed) step \(step): \(instances[id]!.app) took \(name) as its identity")
                }
            default:
                let got = lab.send(id, .keyRequest(account: name))
                let granted = got.contains { if case .accountKey = $0.frame.message { return true } else { return false } }
                if granted {
                    let inst = instances[id]!
                    let u = user(name)
                    #expect(u != nil && inst.signedIn.contains(u!) && !signedOut.contains(key(inst.app, u!)),
                            "seed \(seed) step \(step): \(inst.app) got the key of \(name), signed in: \(inst.signedIn)")
                }
            }
            observe()
        }
    }
}
