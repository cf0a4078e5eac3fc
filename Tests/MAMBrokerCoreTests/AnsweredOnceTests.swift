import MAMBroker
import MAMBrokerCore
import MAMPolicy
import MAMTestSupport
import MAMWire
import Testing

/// Random conversations in which apps stop reading and leave, checked for what an app waiting on
/// the broker relies on (issue 20): every request is answered, and exactly once. An answer is a
/// frame under the request's id other than the document or file that follows an allowed
/// decision. The import answered twice (`limitReached`, then `unknownTarget` at the time-out)
/// breaks it. Nothing is left waiting once time has run out, and every decision an app got is
/// the one the audit recorded.
@Suite("Broker core: every request is answered exactly once, and as audited")
struct AnsweredOnceTests {
    typealias SplitMix = SplitMix64

    static let apps = ["com.contoso.mail", "com.contoso.docs", "com.example.notes", "com.example.chat", "com.microsoft.msedge"]
    static let accounts: [String?] = [nil, "adele@contoso.com", "ben@contoso.com"]
    static let types = ["com.adobe.pdf", "public.plain-text"]

    static func isAnswer(_ m: Message) -> Bool {
        switch m {
        case .document, .file: return false
        default: return true
        }
    }

    @Test func tenThousandConversationsAnswerEveryRequestOnce() {
        var g = SplitMix(state: 0x2020_0A55_0E4D)
        var requests = 0, refusedDeliveries = 0, audits = 0
        for round in 0..<10_000 {
            var lab = CoreLab()
            var sessions: [SessionID] = []
            for _ in 0..<Int.random(in: 2...4, using: &g) {
                sessions.append(lab.launch(Self.apps.randomElement(using: &g)!, account: Self.accounts.randomElement(using: &g)!))
            }
            var asked: [(session: SessionID, id: UInt32, what: String)] = []
            var left: Set<SessionID> = []
            var nextID: UInt32 = 100
            for _ in 0..<Int.random(in: 3...10, using: &g) {
                // Some apps stop reading for a while (their deliveries are refused), some leave.
                lab.notReading = Set(sessions.filter { _ in Int.random(in: 0..<4, using: &g) == 0 })
                let s = sessions.randomElement(using: &g)!
                let other = sessions.randomElement(using: &g)!
                guard !left.contains(s), let target = lab.core.party(of: other)?.bundleID else { continue }
                nextID += 1
                let message: Message
                var attachment: MAMBrokerCore.Attachment?
                switch Int.random(in: 0...6, using: &g) {
                case 0: message = .copy(text: "t\(nextID)", types: ["public.utf8-plain-text"])
                case 1: message = .paste
                case 2:
                    message = .share(target: target, contentType: Self.types.randomElement(using: &g)!, name: "d.pdf")
                    attachment = lab.document("d\(nextID)")
                case 3, 4: message = .importRequest(source: target, contentType: Self.types.randomElement(using: &g)!)
                case 5: message = .openURL(url: ["contosomail://x", "https://example.com", "courier://y"].randomElement(using: &g)!)
                default:
                    // A source leaves with export requests unanswered.
                    if !left.contains(other) && other != s {
                        left.insert(other)
                        lab.run(lab.core.handle(.disconnected(other)))
                    }
                    continue
                }
                lab.send(s, message, attachment, frameID: nextID)
                asked.append((s, nextID, "\(message)".prefix { $0 != "(" }.description))
            }
            // Everything that waits on time (imports, launches) runs out.
            lab.notReading = []
            lab.clock.advance(by: .seconds(61))
            lab.run(lab.core.handle(.tick))
            // Nothing waits any more: no descriptor is held for a request that will never end.
            #expect(lab.heldDescriptors == 0, "round \(round): \(lab.heldDescriptors) descriptors still held")
            for request in asked {
                let answers = lab.received(request.session).filter { $0.frame.id == request.id && Self.isAnswer($0.frame.message) }
                // Replies and audit agree: a decision the app got is audited once, under its
                // request, with the same outcome and rule, named by a rule of that section; a request that got no decision has
                // no audit line that says it was allowed.
                let audited = lab.audits.filter { $0.session == request.session && $0.request == request.id }
                if let decision = answers.map(\.frame).decision {
                    audits += 1
                    #expect(audited.count == 1 && audited.first?.outcome == Outcome.allCases[Int(decision.outcome)].rawValue
                                && audited.first?.rule == decision.rule
                                && audited.first?.ruleName.flatMap(Rule.init(rawValue:))?.id == decision.rule,
                            "round \(round): \(request.what) \(request.id) answered \(decision), audited \(audited)")
                } else {
                    #expect(!audited.contains { $0.outcome == Outcome.allowed.rawValue },
                            "round \(round): \(request.what) \(request.id) answered \(answers.map(\.frame.message)), audited \(audited)")
                }
                if answers.contains(where: { if case .error(.limitReached, _) = $0.frame.message { true } else { false } }) { refusedDeliveries += 1 }
                if left.contains(request.session) {
                    #expect(answers.count <= 1, "round \(round): \(request.what) \(request.id) answered \(answers.map(\.frame.message))")
                } else {
                    #expect(answers.count == 1, "round \(round): \(request.what) \(request.id) answered \(answers.map(\.frame.message))")
                }
                requests += 1
            }
        }
        // The generator reaches the cases that matter: refused deliveries among them.
        #expect(requests > 40_000 && refusedDeliveries > 500 && audits > 15_000,
                "\(requests) requests, \(refusedDeliveries) answered limitReached, \(audits) decisions checked against the audit")
    }
}

extension Array where Element == Frame {
    /// The decision among these frames (a `decision`, or a `pasteResult`'s).
    var decision: DecisionRecord? {
        for f in self {
            if case let .decision(r) = f.message { return r }
            if case let .pasteResult(r, _) = f.message { return r }
        }
        return nil
    }
}
