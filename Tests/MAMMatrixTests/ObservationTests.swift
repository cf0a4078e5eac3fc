import MAMMatrix
import MAMPolicy
import MAMScript
import Testing

@Suite("Live observations to outcomes")
struct ObservationTests {
    let sha = "aa11"
    func decision(_ outcome: String, allowed: Bool) -> JSONValue {
        ["outcome": .string(outcome), "allowed": .bool(allowed), "rule": "4.1.4", "message": ""]
    }

    @Test func whatArrivedDecidesNotWhatTheBrokerSaid() {
        // Readable payload under the same identity: allowed.
        var o = Observation(decision: decision("allowed", allowed: true),
                            arrival: ["event": "document", "readable": true, "encrypted": false, "sha256": .string(sha), "identity": "adele@contoso.com"],
                            targetIdentity: "adele@contoso.com", payloadSHA256: sha)
        #expect(o.verdict(.openIn).outcome == .allowed)
        // Ciphertext it cannot read: encrypted.
        o.arrival = ["event": "document", "readable": false, "encrypted": true, "sha256": "ff", "identity": "adele@contoso.com"]
        #expect(o.verdict(.openIn).outcome == .encrypted)
        // Under another identity: switched, with the identity.
        o.arrival = ["event": "document", "readable": true, "encrypted": false, "sha256": .string(sha), "identity": ""]
        let v = o.verdict(.openIn)
        #expect(v.outcome == .switched && v.identity == "personal")
        // The broker said allowed, nothing arrived: not allowed.
        o.arrival = nil
        let lost = o.verdict(.openIn)
        #expect(lost.outcome == .blocked && lost.note?.contains("nothing arrived") == true)
        // The broker said blocked but the data arrived readable: the arrival wins (a leak).
        o.decision = decision("blocked", allowed: false)
        o.arrival = ["event": "document", "readable": true, "encrypted": false, "sha256": .string(sha), "identity": "adele@contoso.com"]
        let leak = o.verdict(.openIn)
        #expect(leak.outcome == .allowed && leak.arrival?.readable == true)
    }

    @Test func aBlockedPasteDeliversTheReplacementNotThePayload() {
        let o = Observation(decision: decision("blocked", allowed: false), arrival: ["text": "Your organization's data cannot be pasted here.", "sha256": "bb"],
                            payloadSHA256: sha)
        #expect(o.verdict(.paste).outcome == .blocked)
    }

    @Test func aLeakIsOrgDataArrivingReadableWhereThePolicyForbidsIt() {
        let cell = Cell(id: 1, policy: "p", channel: ChannelSpec(.openIn), source: PartySpec(name: "A", app: "Mail"))
        let live = Verdict(outcome: .allowed, rule: "4.1.4", arrival: Arrival(readable: true))
        #expect(CellResult(cell: cell, predicted: Verdict(outcome: .blocked, rule: "4.1.4"), live: live, orgData: true).leaked)
        #expect(!CellResult(cell: cell, predicted: Verdict(outcome: .blocked, rule: "4.1.4"), live: live, orgData: false).leaked)
        #expect(!CellResult(cell: cell, predicted: Verdict(outcome: .allowed, rule: "4.1.4"), live: live, orgData: true).leaked)
    }
}
