import Foundation
import MAMBrokerCore
import MAMPolicy
import MAMScript
import MAMTestSupport
import MAMWire
import Testing

/// The identity-lifecycle property through the processes: a real `mambroker`, sample apps
/// started by `mamlaunch run` in their sandboxes and driven in scripted mode, the admin's wipe
/// by `mamlaunch wipe`. Fewer and shorter lifecycles than through the core (each step is a
/// round trip through two processes), with the same model: every enrollment status an app gets
/// is the one the engine's state predicts, and data an app protects is encrypted (it got the
/// account's key) only for an account signed in and enrolled in that instance. A failure
/// names its seed and steps.
@Suite("Processes: random identity lifecycles agree with the engine", .serialized, .timeLimit(.minutes(4)))
struct IdentityLifecycleProcessTests {
    static let apps = ["Mail": "com.contoso.mail", "Docs": "com.contoso.docs", "Chat": "com.example.chat"]
    static let users: [String?] = [nil, "adele@contoso.com", "ben@contoso.com", "dana@outlook.com"]
    static let names = ["adele@contoso.com", "ADELE@contoso.com", "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", "dana@outlook.com"]

    @Test(arguments: 0..<3)
    func lifecycle(seed: UInt64) throws {
        var g = SplitMix64(state: (seed + 17) &* 0x2545_F491_4F6C_DD1D)
        let broker = try TestBroker(prefix: "mamlab-lifecycle")
        var running: [Int: ScriptedProcess] = [:]
        defer {
            for app in running.values { _ = app.finish() }
            broker.stop()
        }
        let engine = PolicyEngine(tenant: CoreLab.sampleTenant, apps: CoreLab.sampleApps)
        var model = LifecycleModel(engine: engine)
        /// (app, account) pairs the service holds a row for, of any state (a wipe finds those).
        var rows: Set<String> = []
        /// Rows an admin's wipe targeted while their app was not running: owed to that row only.
        var pendingWipes: Set<String> = []
        var trail: [String] = []
        var next = 0
        func failure(_ what: String) -> Comment { Comment(rawValue: "seed \(seed): \(what)\nsteps:\n" + trail.map { "  " + $0 }.joined(separator: "\n")) }
        func manifest(_ n: Int) -> AppManifest { model.instances[n]!.app }
        func row(_ app: AppManifest, _ a: Account) -> String { LifecycleModel.key(app, a) }
        /// An enrollment notice for the app, as every instance of it is told.
        func told(_ n: Int, _ message: Message) {
            if case let .enrollmentNotice(_, name, status) = message, let a = model.account(name) {
                if [100, 200, 208, 225].contains(status) { rows.insert(row(manifest(n), a)) }
                if status == 104 || status == 102 { rows.remove(row(manifest(n), a)) }
            }
            model.told(n, message)
        }

        for _ in 0..<10 {
            let roll = Int.random(in: 0..<100, using: &g)
            if running.isEmpty || roll < 25 && running.count < 3 {
                let name = Self.apps.keys.sorted().randomElement(using: &g)!, user = Self.users.randomElement(using: &g)!
                trail.append("launch \(name)" + (user.map { " --user \($0)" } ?? ""))
                next += 1
                let app = try ScriptedProcess(TestBroker.bin + "/mamlaunch",
                                              ["run", name, "--broker", broker.launcherSocket, "--containers", broker.containers]
                                                  + (user.map { ["--user", $0] } ?? []) + ["--", "--script"], environment: TestBroker.environment)
                running[next] = app
                _ = try app.send("hello")
                let m = engine.apps[Self.apps[name]!]!
                let hadApp = model.appEnrolled[m.bundleID.lowercased()] != nil
                model.launch(next, m, user: user)
                // AutoEnrollOnLaunch enrolls the launcher's tenant user when the app has nobody.
                if let user, let a = model.account(user), a.userIndex != nil, !hadApp, m.sdkFlag("AutoEnrollOnLaunch") {
                    let already = rows.contains(row(m, a)) && model.appEnrolled[m.bundleID.lowercased()] == nil
                    let status: UInt16 = engine.tenant.policy(app: m.bundleID, account: a) == nil ? 225 : already ? 208 : 100
                    told(next, .enrollmentNotice(kind: 0, account: user, status: status))
                }
                // Wipes issued while the app was not running arrive as it starts.
                for a in [model.account("adele@contoso.com")!, model.account("ben@contoso.com")!, model.account("dana@outlook.com")!]
                where rows.contains(row(m, a)) && pendingWipes.contains(row(m, a)) {
                    told(next, .wipeRequest(account: a.upn ?? a.name))
                    rows.remove(row(m, a))
                    pendingWipes.remove(row(m, a))
                }
                continue
            }
            let n = running.keys.sorted().randomElement(using: &g)!
            let app = running[n]!, me = manifest(n).bundleID, name = Self.names.randomElement(using: &g)!
            switch roll {
            case 0..<40:
                trail.append("#\(n) \(me): enroll \(name)")
                let got = try app.send("enroll", name)
                let a = model.account(name)!
                if !model.instances[n]!.signedIn.contains(a) {
                    #expect(got["status"] == nil && got["error"] != nil, failure("enroll of an account not signed in: \(got)"))
                } else {
                    let status = got["status"]?.number.map { UInt16($0) }
                    #expect(status != nil, failure("enroll \(name): \(got)"))
                    let already = model.appEnrolled[me.lowercased()]
                    let refused: Bool
                    if case .failure = engine.enrollment(of: manifest(n), signedIn: [already, a].compactMap { $0 }) { refused = true } else { refused = false }
                    #expect((status == 227) == refused, failure("enroll \(name) beside \(String(describing: already)): \(got); the engine refuses: \(refused)"))
                    if let status { told(n, .enrollmentNotice(kind: 0, account: a.upn ?? a.name, status: status)) }
                }
            case 40..<55:
                let wipe = Bool.random(using: &g)
                trail.append("#\(n) \(me): unenroll \(name)" + (wipe ? " wipe" : " keep"))
                let got = try app.send("unenroll", name, wipe ? "wipe" : "keep")
                let a = model.account(name)!
                if let status = got["status"]?.number.map({ UInt16($0) }) {
                    told(n, .enrollmentNotice(kind: 2, account: a.upn ?? a.name, status: status))
                } else if got["wipe"] != nil {
                    told(n, .enrollmentNotice(kind: 2, account: a.upn ?? a.name, status: 104))
                }
            case 55..<65:
                trail.append("admin wipes \(name) everywhere")
                let run = try ChildProcess.run(TestBroker.bin + "/mamlaunch", ["wipe", "--user", name, "--broker", broker.launcherSocket], timeout: 30)
                let a = model.account(name)!
                // A wipe targets the rows that exist now; with none it is refused, and nothing is
                // kept for a later enrollment.
                let targets = rows.filter { $0.hasSuffix("|" + a.description.lowercased()) }
                #expect(run.status == (targets.isEmpty ? 1 : 0), failure("mamlaunch wipe with rows \(targets.sorted()): \(run.out) \(run.err)"))
                // Running apps with a row for the account are wiped now, the others when they start.
                var reached: Set<String> = []
                for (other, _) in running.sorted(by: { $0.key < $1.key }) where rows.contains(row(manifest(other), a)) {
                    let bundle = manifest(other).bundleID
                    if reached.insert(bundle).inserted {
                        told(other, .wipeRequest(account: a.upn ?? a.name))
                        rows.remove(row(manifest(other), a))
                    }
                }
                // The rows of apps not running are owed the wipe when they start.
                pendingWipes.formUnion(targets.filter(rows.contains))
            case 65..<75:
                trail.append("#\(n) \(me): quits")
                _ = app.finish()
                running[n] = nil
                model.instances[n] = nil
            default:
                trail.append("#\(n) \(me): protects a text for \(name)")
                let got = try app.send("protect", name, "minutes")
                let a = model.account(name)!
                // The key reached the app only if the account is signed in and enrolled here.
                if got["encrypted"]?.bool == true {
                    #expect(model.mayHoldKey(n, a), failure("\(me)#\(n) encrypted for \(name) with its key; signed in: \(model.instances[n]!.signedIn), enrolled: \(String(describing: model.enrolled(n)))"))
                }
            }
        }
    }
}
