import MAMBroker
import MAMBrokerCore
import MAMPolicy
import MAMTestSupport
import MAMWire
import Testing

/// Random conversations between random parties under random policies, checked against two
/// invariants that do not use the engine's decisions (issue 9 item 8):
///
/// 1. org data never arrives readable at a party the source's policy forbids: under Send
///    `none` or `managedApps` (without OS sharing) a document of account A reaches, in clear,
///    only parties policy-managed under A; under a restricted clipboard a text longer than the
///    exception length pastes, as itself, only into parties acting under A (or the copier);
/// 2. every decision an app is answered with has exactly one audit entry with the same outcome
///    and rule, and every audit entry answers one request; no descriptor is left held.
@Suite("Broker core: random conversations keep org data in and the audit honest")
struct PropertyTests {
    typealias SplitMix = SplitMix64

    /// Where a piece of content came from: the data's account and the source's policy then.
    struct Origin {
        var account: Account?
        var settings: PolicySettings?
        var copier: SessionID?
    }

    static let apps = ["com.contoso.mail", "com.contoso.docs", "com.example.notes", "com.example.chat", "com.microsoft.msedge",
                       "com.contoso.dialer"]
    static let accounts: [String?] = [nil, "adele@contoso.com", "ben@contoso.com", "dana@outlook.com", ""]
    static let types = ["com.adobe.pdf", "public.plain-text", "public.jpeg", "com.microsoft.word.doc"]

    static func randomTenant(_ g: inout SplitMix) -> Tenant {
        var t = CoreLab.sampleTenant
        for i in t.policies.indices {
            var s = t.policies[i].settings
            s.send = SendLevel.allCases.randomElement(using: &g)!
            s.receive = ReceiveLevel.allCases.randomElement(using: &g)!
            s.clipboard = ClipboardLevel.allCases.randomElement(using: &g)!
            s.clipboardExceptionLength = [0, 0, 3, 100].randomElement(using: &g)!
            s.saveAsBlocked = Bool.random(using: &g)
            s.filterOpenInToOnlyManagedApps = Bool.random(using: &g)
            s.disableProtectionOfManagedOutboundOpenInData = Bool.random(using: &g)
            s.blockDataIngestionIntoOrganizationDocuments = Bool.random(using: &g)
            t.policies[i].settings = s
        }
        return t
    }

    @Test func tenThousandRandomConversations() {
        var g = SplitMix(state: 0x4D41_4D4C_6162)
        var deliveries = 0, readableOrg = 0, decisions = 0
        for round in 0..<10_000 {
            var lab = CoreLab(tenant: Self.randomTenant(&g))
            var origins: [String: Origin] = [:]
            var next = 0
            var sessions: [SessionID] = []
            var checked: [SessionID: Int] = [:]
            var answered: Set<UInt32> = []
            for _ in 0..<Int.random(in: 2...4, using: &g) {
                let app = Self.apps.randomElement(using: &g)!
                sessions.append(lab.launch(app, account: Self.accounts.randomElement(using: &g)!))
            }
            func originOf(_ s: SessionID, lab: CoreLab) -> Origin {
                let p = lab.core.party(of: s)!
                return Origin(account: p.dataAccount, settings: p.activePolicy, copier: s)
            }
            for _ in 0..<Int.random(in: 4...14, using: &g) {
                let s = sessions.randomElement(using: &g)!
                guard lab.core.party(of: s) != nil else { continue }
                next += 1
                let text = "c\(round)-\(next)-" + String(repeating: "x", count: Int.random(in: 0...6, using: &g))
                let other = sessions.randomElement(using: &g)!
                let otherApp = lab.core.party(of: other)?.bundleID ?? Self.apps[0]
                switch Int.random(in: 0...8, using: &g) {
                case 0:
                    origins[text] = originOf(s, lab: lab)
                    lab.send(s, .copy(text: text, types: ["public.utf8-plain-text"]))
                case 1: lab.send(s, .paste)
                case 2:
                    origins[text] = originOf(s, lab: lab)
                    lab.send(s, .share(target: otherApp, contentType: Self.types.randomElement(using: &g)!, name: "d.pdf"), lab.document(text))
                case 3:
                    lab.send(s, .importRequest(source: otherApp, contentType: Self.types.randomElement(using: &g)!))
                    // The source answers every export request it has.
                    for d in lab.received(other) {
                        if case let .exportRequest(type) = d.frame.message, !answered.contains(d.frame.id), lab.core.party(of: other) != nil {
                            answered.insert(d.frame.id)
                            let t = "e\(round)-\(d.frame.id)"
                            origins[t] = originOf(other, lab: lab)
                            lab.send(other, .exportReply(contentType: type, name: "e.pdf"), lab.document(t), frameID: d.frame.id)
                        }
                    }
                case 4:
                    origins[text] = originOf(s, lab: lab)
                    let location = [1, 8, 32, 64].randomElement(using: &g)!
                    let account = [1].contains(location) ? Self.accounts.randomElement(using: &g)! : nil
                    lab.send(s, .saveTo(location: UInt8(location), account: account, name: "f\(next % 3)"), lab.document(text))
                case 5:
                    let location = [1, 8, 16].randomElement(using: &g)!
                    let account = location == 1 ? Self.accounts.randomElement(using: &g)! : nil
                    lab.send(s, .openFrom(location: UInt8(location), account: account, name: "f\(Int.random(in: 0...2, using: &g))"))
                case 6: lab.send(s, .setIdentity(account: Self.accounts.randomElement(using: &g)! ?? ""))
                case 7: lab.send(s, .openURL(url: ["contosomail://x", "https://example.com", "tel:123", "courier://y"].randomElement(using: &g)!))
                default: lab.send(s, .listTargets(contentType: Self.types.randomElement(using: &g)!))
                }
                // Invariant 1, checked at each delivery as the receiver stands now.
                for r in sessions {
                    guard let receiver = lab.core.party(of: r) else { continue }
                    for d in lab.received(r).dropFirst(checked[r] ?? 0) {
                        let (text, readable, pasted): (String?, Bool, Bool)
                        switch d.frame.message {
                        case .document, .file: (text, readable, pasted) = (d.content?.text, d.content?.encrypted == false, false)
                        case let .pasteResult(decision, t): (text, readable, pasted) = (t, decision.allowed, true)
                        default: continue
                        }
                        guard let text, readable, let origin = origins[text], let account = origin.account, let settings = origin.settings else { continue }
                        deliveries += 1
                        if pasted {
                            if settings.clipboard == .allApps || text.utf16.count <= settings.clipboardExceptionLength || origin.copier == r { continue }
                            #expect(receiver.isActing(under: account), "round \(round): \(text) pasted into \(receiver)")
                        } else {
                            if settings.send == .allApps || settings.disableProtectionOfManagedOutboundOpenInData { continue }
                            readableOrg += 1
                            #expect(receiver.isPolicyManaged(under: account), "round \(round): \(text) of \(account) readable at \(receiver)")
                        }
                    }
                    checked[r] = lab.received(r).count
                }
            }
            // Invariant 2.
            #expect(lab.heldDescriptors == 0, "round \(round)")
            var replies: [String] = []
            for (id, got) in lab.inbox {
                for d in got {
                    switch d.frame.message {
                    case let .decision(r), let .pasteResult(r, _): replies.append("\(id)/\(d.frame.id)/\(WireOutcome.name(of: r.outcome))/\(r.rule)")
                    default: break
                    }
                }
            }
            // Decisions about data answer requests; the MAM service's own notices (an automatic
            // enrollment at launch) are audited too but answer none.
            let dataChannels: Set<String> = ["open-url", "paste", "open-in", "import", "save-to", "open-from", "identity"]
            let audited = lab.audits.filter { dataChannels.contains($0.channel) }.map { "\($0.session)/\($0.request)/\($0.outcome)/\($0.rule)" }
            #expect(replies.sorted() == audited.sorted(), "round \(round)")
            decisions += audited.count
        }
        #expect(deliveries > 1000, "the generator must reach the interesting cases: \(deliveries) org deliveries")
        #expect(readableOrg > 40)
        #expect(decisions > 40_000)
    }
}
