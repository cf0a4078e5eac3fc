// mamkitbench: what a policy query costs through MAMKit against the engine call it wraps.
//
// The kit is started over a socket pair whose other end answers as the broker does (a welcome
// and the policy snapshot of the sample tenant's Mail for adele), so the kit's queries run on
// exactly what a sandboxed Mail would have. Then, in alternating blocks (kit, engine, kit, ...)
// so both see the same machine state, each block times N queries of every kind:
// isSaveToAllowed(dropbox), isOpenFromAllowed(camera), isURLAllowed(https), the policy view.
// Prints each side's median per query and the ratio kit/engine per block pair: median, min, max.
import Foundation
import MAMCatalog
import MAMKit
import MAMPolicy
import MAMWire

let arguments = CommandLine.arguments.dropFirst()
if arguments.contains("--help") || arguments.contains("-h") {
    print("""
    usage: mamkitbench [--blocks N] [--queries N] [--queues] [--dispatches N]

    Times a policy query through MAMKit (PolicyManager.policy(for:) and its answer) against the
    engine function it wraps, on the sample tenant's Mail for adele@contoso.com, in alternating
    blocks; prints the median time per query of each and the kit/engine ratio (median, min, max).
    Defaults: 20 blocks of 20000 queries.

    --queues: then what carrying the scoped identity into queued work costs a dispatch_async:
    libdispatch's own call, the interposed one from code with no scoped identity, and the
    interposed one inside a scope, in alternating blocks of N dispatches (default 100000), with
    each one's ratio to libdispatch's own.
    """)
    exit(0)
}
func option(_ name: String, _ fallback: Int) -> Int {
    guard let i = arguments.firstIndex(of: name), arguments.index(after: i) < arguments.endIndex,
          let v = Int(arguments[arguments.index(after: i)]), v > 0 else { return fallback }
    return v
}
let blocks = option("--blocks", 20), queries = option("--queries", 20_000), dispatches = option("--dispatches", 100_000)

guard let root = Catalog.projectRoot() else {
    FileHandle.standardError.write(Data("mamkitbench: run it inside the MAMLab project (or set MAMLAB_ROOT)\n".utf8))
    exit(2)
}
let tenant = try Catalog.loadTenant(root.appendingPathComponent("Policies/contoso/tenant.json").path).tenant
let apps = Catalog.loadApps(in: root.appendingPathComponent("Apps")).apps.map(\.manifest)
let engine = PolicyEngine(tenant: tenant, apps: apps)
guard let mail = engine.apps["com.contoso.mail"], let adele = tenant.knownAccount(named: "adele@contoso.com") else {
    FileHandle.standardError.write(Data("mamkitbench: the sample tenant has no Mail or no adele\n".utf8))
    exit(2)
}
let party = engine.party(mail, identity: .account(adele), personalAccountSignedIn: true)
let snapshot = PolicySnapshot(app: mail, enrolled: party.enrolled, policy: party.policy, identity: party.identity, signedIn: [adele],
                              isMDMManaged: party.isMDMManaged, personalAccountSignedIn: party.personalAccountSignedIn, revision: 1)
let json = String(decoding: try JSONEncoder().encode(snapshot), as: UTF8.self)

// The broker's side: a welcome and the snapshot, nothing else.
let (appEnd, brokerEnd) = try WireSocket.pair()
let broker = Thread {
    while let r = brokerEnd.receive(), case let .success(frame) = r.frame {
        switch frame.message {
        case .hello: try? brokerEnd.send(Frame(id: frame.id, .welcome(version: 1, bundleID: mail.bundleID, managedAccount: adele.name)))
        case .policyRequest: try? brokerEnd.send(Frame(id: frame.id, .policySnapshot(json: json)))
        case .bye: return
        default: try? brokerEnd.send(Frame(id: frame.id, .error(code: .notAllowed, detail: "not in this benchmark")))
        }
    }
}
broker.start()
let app = try await MAMApp.start(connection: appEnd.release()!)
let pm = app.policyManager

// Both sides must agree, or the comparison means nothing.
let kitPolicy = pm.policy(for: "adele@contoso.com")
guard kitPolicy.isSaveToAllowed(for: .dropbox, account: nil) == engine.saveTo(.dropbox, account: nil, owner: party).allowed,
      kitPolicy.isManaged == PolicyView(party).isManaged else {
    FileHandle.standardError.write(Data("mamkitbench: the kit and the engine disagree\n".utf8))
    exit(1)
}

@inline(never) func sink(_ b: Bool) { if b && queries < 0 { print(b) } }

func kitBlock() -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    for i in 0..<queries {
        let p = pm.policy(for: "adele@contoso.com")
        switch i & 3 {
        case 0: sink(p.isSaveToAllowed(for: .dropbox, account: nil))
        case 1: sink(p.isOpenFromAllowed(for: .camera, account: nil))
        case 2: sink(p.isURLAllowed("https://contoso.com/q3"))
        default: sink(p.isFileEncryptionRequired)
        }
    }
    return Double(DispatchTime.now().uptimeNanoseconds - start) / Double(queries)
}

func engineBlock() -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    for i in 0..<queries {
        switch i & 3 {
        case 0: sink(engine.saveTo(.dropbox, account: nil, owner: party).allowed)
        case 1: sink(engine.openFrom(.camera, account: nil, receiver: party).allowed)
        case 2: sink(engine.isURLAllowed("https://contoso.com/q3", by: party).allowed)
        default: sink(PolicyView(party).isFileEncryptionRequired)
        }
    }
    return Double(DispatchTime.now().uptimeNanoseconds - start) / Double(queries)
}

_ = kitBlock()
_ = engineBlock()
var kit: [Double] = [], direct: [Double] = []
for _ in 0..<blocks {
    kit.append(kitBlock())
    direct.append(engineBlock())
}
func median(_ v: [Double]) -> Double { let s = v.sorted(); return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2 }
let ratios = zip(kit, direct).map { $0 / $1 }
print(String(format: "policy query through MAMKit: %.0f ns (median of %d blocks of %d)", median(kit), blocks, queries))
print(String(format: "the engine call it wraps:    %.0f ns", median(direct)))
print(String(format: "ratio kit/engine: median %.2f, min %.2f, max %.2f", median(ratios), ratios.min() ?? 0, ratios.max() ?? 0))
if arguments.contains("--queues") { QueueBenchmark(blocks: blocks, dispatches: dispatches).run() }
app.stop()
