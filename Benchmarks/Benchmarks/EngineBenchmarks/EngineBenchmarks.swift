import Benchmark
import Foundation
import MAMPolicy

// The sample tenant's shape, built in code so the benchmark measures decisions, not file I/O:
// adele under "Managed only" for the SDK apps.
private func sampleEngine() -> (PolicyEngine, mail: Party, docs: Party, notes: Party, candidates: [Party]) {
    func twins(_ s: [String]) -> [String] { s.flatMap { [$0, $0 + "-intunemam"] } }
    func types(_ t: [String]) -> [String] { t.flatMap { [$0, "com.microsoft.intune.mam." + $0] } }
    let sdk = Node(.object([("MultiIdentity", Node(.bool(true)))]))
    let apps = [
        AppManifest(bundleID: "com.contoso.mail", urlSchemes: twins(["contosomail"]),
                    queriedSchemes: twins(["contosodocs"]), documentTypes: [.init(contentTypes: types(["com.adobe.pdf"]))],
                    mamSettings: sdk),
        AppManifest(bundleID: "com.contoso.docs", urlSchemes: twins(["contosodocs"]),
                    documentTypes: [.init(contentTypes: types(["com.adobe.pdf"]))], mamSettings: sdk),
        AppManifest(bundleID: "com.example.notes", urlSchemes: ["notes"], documentTypes: [.init(contentTypes: ["com.adobe.pdf"])]),
        AppManifest(bundleID: "com.example.chat", urlSchemes: ["chat"], documentTypes: [.init(contentTypes: ["public.image"])]),
        AppManifest(bundleID: "com.example.files", documentTypes: [.init(contentTypes: ["public.item"])]),
    ]
    var s = PolicySettings()
    s.send = .managedApps
    s.receive = .managedApps
    s.clipboard = .managedAppsWithPasteIn
    let policy = Policy(id: "managed-only", displayName: "Managed only", settings: s,
                        targetedApps: ["com.contoso.mail", "com.contoso.docs"], includedGroups: ["sales"])
    let tenant = Tenant(name: "contoso.com", users: [TenantUser(upn: "adele@contoso.com", oid: "5f1c", groups: ["sales"])],
                        policies: [policy])
    let engine = PolicyEngine(tenant: tenant, apps: apps)
    let adele = Identity.account(tenant.knownAccount(named: "adele@contoso.com")!)
    let parties = apps.map { engine.party($0, identity: $0.integratesSDK ? adele : .personal) }
    return (engine, parties[0], parties[1], parties[2], parties)
}

let benchmarks: @Sendable () -> Void = {
    // Each sample runs a thousand decisions so the clock's own cost (tens of ns) does not
    // swamp them; the figures are per decision.
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock, .mallocCountTotal], timeUnits: .nanoseconds,
                                           scalingFactor: .kilo, maxDuration: .seconds(2), maxIterations: 100_000)
    let (engine, mail, docs, notes, candidates) = sampleEngine()

    // A blocked send: managed Mail to the unmanaged Notes (the sender's check and its rule).
    Benchmark("send (managed → unmanaged)") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(engine.transfer(from: mail, to: notes, mode: .push)) }
    }
    // An allowed send: both checks run.
    Benchmark("send (managed → managed)") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(engine.transfer(from: mail, to: docs, mode: .push)) }
    }
    let item = PasteboardItem(source: mail, text: "Q3 forecast: 4.2M")
    Benchmark("paste (org data → unmanaged)") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(engine.paste(item, into: notes)) }
    }
    Benchmark("isURLAllowed (exempt scheme)") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(engine.isURLAllowed("skype:echo123", by: mail)) }
    }
    Benchmark("open-in target listing (5 apps)") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(engine.openInTargets(type: "com.adobe.pdf", from: mail, candidates: candidates)) }
    }
}
