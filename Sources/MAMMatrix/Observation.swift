import MAMPolicy
import MAMScript

/// What the live run saw for one cell, as the scripted apps reported it (docs/SCRIPTING.md),
/// turned into a verdict. What arrived decides, not what the broker said: a cell whose broker
/// decision says "allowed" but where nothing arrived is not allowed.
public struct Observation: Sendable {
    /// The `decision` object of the result that decided the cell (the source's for a push, a
    /// URL or a save; the target's for a paste, an import or an open).
    public var decision: JSONValue?
    /// The target's arrival: a `document` or `url` event, or a paste / open result.
    public var arrival: JSONValue?
    /// The identity the target acted under before the cell.
    public var targetIdentity: String?
    /// SHA-256 (hex) of the payload the source was asked to send.
    public var payloadSHA256: String?
    /// The URL the source opened.
    public var sentURL: String?
    /// Login/logout: the enrollment result and the checked account's `policy` result.
    public var account: JSONValue?
    public var policy: JSONValue?
    /// A step that failed (an `error` in a result): the cell cannot be judged.
    public var error: String?

    public init(decision: JSONValue? = nil, arrival: JSONValue? = nil, targetIdentity: String? = nil, payloadSHA256: String? = nil,
                sentURL: String? = nil, account: JSONValue? = nil, policy: JSONValue? = nil, error: String? = nil) {
        self.decision = decision
        self.arrival = arrival
        self.targetIdentity = targetIdentity
        self.payloadSHA256 = payloadSHA256
        self.sentURL = sentURL
        self.account = account
        self.policy = policy
        self.error = error
    }

    /// The verdict for a cell of `channel`, naming the rule the broker said it applied.
    public func verdict(_ channel: Channel) -> Verdict {
        var v = judged(channel)
        if let name = decision?["ruleName"]?.string, v.rule != "-" { v.ruleName = name }
        return v
    }

    func judged(_ channel: Channel) -> Verdict {
        let d = decision
        let said = d?["outcome"]?.string.flatMap(Outcome.init(rawValue:))
        let rule = d?["rule"]?.string ?? "-"
        let message = d?["message"]?.string ?? ""
        let tag = d?["tag"]?.string ?? ""
        if let error {
            return Verdict(outcome: .blocked, rule: rule, tag: tag, message: message, note: "the run could not perform the cell: \(error)")
        }
        if channel.isAccountChannel {
            // Signing in is refused only as the SDK refuses a second managed account
            // (SingleManagedAccountMode); an account the service does not license or target
            // signs in all the same, unmanaged.
            let refused = account?["status"]?.number == Double(EnrollmentStatus.singleManagedAccountMode.rawValue)
            let ok = account?["error"] == nil && !refused && (said.map(\.delivers) ?? true)
            let managed = policy?["managed"]?.bool
            return Verdict(outcome: ok ? .allowed : .blocked, rule: rule, tag: tag, message: message, managed: ok ? (managed ?? false) : false)
        }
        if channel == .saveTo {
            // Nothing arrives anywhere for a save but the broker's store: its decision is the answer.
            return Verdict(outcome: said ?? .blocked, rule: rule, tag: tag, message: message,
                           note: said == nil ? "no decision in the result" : nil)
        }
        guard let a = arrival, let arrival = Self.arrival(a, channel: channel) else {
            // An open that the broker allowed encrypted hands over bytes the app cannot read.
            if channel == .openFrom, said == .encrypted {
                return Verdict(outcome: .encrypted, rule: rule, tag: tag, message: message, arrival: Arrival(readable: false, encrypted: true))
            }
            var v = Verdict(outcome: said == .filtered ? .filtered : .blocked, rule: rule, tag: tag, message: message)
            if let said, said.delivers { v.note = "the broker said \(said.rawValue) but nothing arrived" }
            return v
        }
        var v = Verdict(outcome: .allowed, rule: rule, tag: tag, message: message, arrival: arrival)
        if channel == .openURL {
            v.url = arrival.url
            if said == .rewritten { v.outcome = .rewritten } else if let s = said, !s.delivers {
                v.outcome = .allowed
                v.note = "the broker said \(s.rawValue) but the URL arrived"
            }
        } else if !arrival.readable {
            v.outcome = .encrypted
        } else if let want = payloadSHA256, arrival.sha256 != want {
            // Something readable arrived, but not the payload: a blocked paste delivers the
            // replacement text [observed].
            v.outcome = .blocked
            v.arrival?.readable = false
            v.note = said.map(\.delivers) == true ? "the broker said \(said!.rawValue) but what arrived is not the payload"
                : "what arrived is not the payload (a blocked paste delivers the replacement text)"
        }
        // A twin-wrapped URL names the identity its receiver acts under (§4.4): acting under it
        // is the delivery the engine decided, not a switch.
        let claimed = arrival.url.flatMap(URLText.unwrap)?.upn
        if v.outcome == .allowed || v.outcome == .rewritten, let before = targetIdentity, let after = arrival.identity,
           Self.identityKey(before) != Self.identityKey(after), claimed.map({ Self.identityKey($0) != Self.identityKey(after) }) ?? true {
            v.outcome = .switched
            v.identity = after.isEmpty ? "personal" : after
        }
        if v.outcome == .allowed, let s = said, !s.delivers {
            v.note = "the broker said \(s.rawValue) but the data arrived"
        }
        return v
    }

    static func identityKey(_ s: String) -> String {
        let l = s.lowercased()
        return l == "" || l == "personal" ? "personal" : l
    }

    static func arrival(_ a: JSONValue, channel: Channel) -> Arrival? {
        switch channel {
        case .openURL:
            guard let url = a["url"]?.string else { return nil }
            return Arrival(readable: true, identity: a["identity"]?.string, url: url)
        case .paste:
            guard let text = a["text"], !text.isNull else { return nil }
            return Arrival(sha256: a["sha256"]?.string, readable: true, identity: a["identity"]?.string)
        case .openFrom:
            // The open result says what the app got: bytes it could read (with their hash), or none.
            guard let readable = a["readable"]?.bool, readable, let sha = a["sha256"]?.string else { return nil }
            return Arrival(sha256: sha, owner: a["owner"]?.string, readable: true, encrypted: false, identity: a["identity"]?.string)
        default:
            guard let readable = a["readable"]?.bool else { return nil }
            return Arrival(sha256: a["sha256"]?.string, owner: a["owner"]?.string, readable: readable,
                           encrypted: a["encrypted"]?.bool ?? false, identity: a["identity"]?.string)
        }
    }
}

/// Running a matrix from the engine alone.
public enum MatrixPrediction {
    /// Every cell answered by its policy's predictor. A cell the engine cannot answer (a party
    /// refused at sign-in) is a failed cell with the reason.
    public static func run(_ cells: [Cell], predictors: [String: Predictor], payload: Payload) -> [CellResult] {
        // Parties repeat across a policy's cells: each is built once per policy.
        var parties: [String: [PartySpec: Result<Party, Predictor.PartyProblem>]] = [:]
        func party(_ spec: PartySpec, _ policy: String, _ p: Predictor) throws(Predictor.PartyProblem) -> Party {
            if let known = parties[policy]?[spec] { return try known.get() }
            let made = Result { () throws(Predictor.PartyProblem) -> Party in try p.party(spec) }
            parties[policy, default: [:]][spec] = made
            return try made.get()
        }
        return cells.map { cell in
            guard let p = predictors[cell.policy] else {
                return CellResult(cell: cell, predicted: Verdict(outcome: .blocked, rule: "-", note: "no policy \(cell.policy)"))
            }
            do {
                let source = try party(cell.source, cell.policy, p)
                let target = try cell.target.map { spec throws(Predictor.PartyProblem) in try party(spec, cell.policy, p) }
                return CellResult(cell: cell, predicted: try p.predict(cell, payload: payload, source: source, target: target),
                                  orgData: source.isManaged, targetManaged: target?.isManaged)
            } catch {
                return CellResult(cell: cell, predicted: Verdict(outcome: .blocked, rule: "-", note: "\(error)"),
                                  live: Verdict(outcome: .blocked, rule: "-", note: "\(error)"))
            }
        }
    }
}
