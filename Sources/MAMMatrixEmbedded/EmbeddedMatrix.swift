import MAMBrokerCore
import MAMMatrix
import MAMPolicy

/// The matrix run in process: the same plan (DevicePlan), scheduler (CellSchedule), cell
/// logic (CellPerformer) and judging (Observation, RecordCheck) as the live run, on embedded
/// devices (EmbeddedDevice) in place of a broker process and sandboxed apps. One lane: cells
/// run one after another, in the order the schedule picks them.
public struct EmbeddedMatrix {
    /// Each policy's tenant, as its prediction decides by (Predictor.engine.tenant), by label.
    public var tenants: [String: Tenant]
    public var performer: CellPerformer
    public var manifests: [AppManifest]
    public var conditionalAccess: ConditionalAccessSettings?
    /// Every policy on a device of its own (`--broker-per-policy`).
    public var perPolicy = false

    public init(tenants: [String: Tenant], apps: [(names: [String], manifest: AppManifest)], payload: Payload,
                conditionalAccess: ConditionalAccessSettings? = nil, perPolicy: Bool = false) {
        self.tenants = tenants
        manifests = apps.map(\.manifest)
        performer = CellPerformer(apps: apps, payload: payload, documentSHA256: EmbeddedDevice.sha256(payload.documentContent),
                                  textSHA256: EmbeddedDevice.sha256(payload.text))
        self.conditionalAccess = conditionalAccess
        self.perPolicy = perPolicy
    }

    /// Answers each predicted cell on embedded devices; returns them with both sides.
    public func run(_ predicted: [CellResult]) -> [CellResult] {
        var results = predicted
        let plan = DevicePlan.stints(predicted.map(\.cell), targeting: tenants.mapValues(DevicePlan.targeting), perPolicy: perPolicy) { p in
            (try? performer.bundle(p)) ?? p.app.lowercased()
        }
        for stint in plan {
            var device: EmbeddedDevice?
            for part in stint {
                guard let typed = tenants[part.policy] else {
                    for i in part.cells { results[i].live = Verdict(outcome: .blocked, rule: "-", note: "no policy \(part.policy)") }
                    continue
                }
                let tenant: Tenant
                do { tenant = try DevicePlan.brokerTenant(typed) } catch {
                    for i in part.cells { results[i].live = Verdict(outcome: .blocked, rule: "-", note: "policy \(part.policy): \(error)") }
                    continue
                }
                if let device { device.reload(tenant, conditionalAccess: conditionalAccess) } else {
                    device = EmbeddedDevice(tenant: tenant, apps: manifests, conditionalAccess: conditionalAccess)
                }
                perform(part.cells, on: device!, into: &results)
            }
        }
        return results
    }

    /// One policy's cells on a device, in the schedule's order.
    func perform(_ cells: [Int], on device: EmbeddedDevice, into results: inout [CellResult]) {
        let open = cells.filter { results[$0].live == nil }
        // The apps every cell names, started before the first (as the live run does).
        try? device.ensure(performer.upfront(open.map { results[$0].cell }))
        var schedule = CellSchedule(open)
        while !schedule.isDrained {
            guard let (i, claim) = schedule.next(claim: { i in
                let cell = results[i].cell
                return CellSchedule.claim(parts: performer.parts(cell), alone: performer.runsAlone(cell), paste: cell.channel.channel == .paste,
                                          starting: []) { device.accounts(of: $0) }
            }) else {
                // One lane and nothing running: every cell may run, and one always does; were
                // none picked, the cells left are answered as not run rather than looped on.
                for i in schedule.pending { results[i].live = Verdict(outcome: .blocked, rule: "-", note: "the schedule picked no cell") }
                break
            }
            results[i] = perform(results[i], on: device)
            schedule.finished(claim)
        }
    }

    func perform(_ result: CellResult, on device: EmbeddedDevice) -> CellResult {
        var r = result
        let mark = device.recordMark()
        do {
            let (live, told) = try performer.perform(r.cell, on: device, mark: mark)
            r.live = live
            if let source = try? performer.bundle(r.cell.source) {
                _ = RecordCheck.judge(&r, told: told, source: source, target: r.cell.target.flatMap { try? performer.bundle($0) },
                                      records: device.records(since: mark))
            }
        } catch {
            r.live = Verdict(outcome: .blocked, rule: "-", note: "the run could not perform the cell: \(error)")
        }
        return r
    }
}

extension EmbeddedDevice {
    /// The decision records the broker wrote since `mark`, as the live run decodes them from its log.
    public func records(since mark: UInt64) -> [BrokerRecord] {
        broker.audits.enumerated().dropFirst(Int(mark)).map { n, e in
            BrokerRecord(id: UInt64(n), channel: e.channel, source: .init(app: e.source.app, identity: e.source.identity, managed: e.source.managed),
                         target: e.target.map { .init(app: $0.app, identity: $0.identity, managed: $0.managed) }, outcome: e.outcome, rule: e.rule,
                         ruleName: e.ruleName, tag: e.tag, detail: e.detail, revision: e.revision)
        }
    }
}
