import MAMPolicy

/// One side of a cell's answer: what the engine predicts, or what the live run saw.
public struct Verdict: Sendable, Hashable, Codable {
    public var outcome: Outcome
    /// The rule's paragraph in docs/SEMANTICS.md (`4.1.4`).
    public var rule: String
    /// The rule's name in the engine (`sendToManagedTarget`); empty when only the id is known.
    public var ruleName: String
    /// `doc`, `observed` or `chosen`.
    public var tag: String
    /// Where the rule comes from (`seed 002 §Exit criteria`); empty when only the id is known.
    public var ruleSource: String
    /// What the user sees; empty when nothing.
    public var message: String
    /// The identity the data arrived under (a switch), when it changed.
    public var identity: String?
    /// The URL as delivered (open-url).
    public var url: String?
    /// Login/logout: whether the checked account is managed afterwards.
    public var managed: Bool?
    /// Live only: what arrived at the target.
    public var arrival: Arrival?
    /// Why a live answer is what it is when the broker and the arrival disagree, or the
    /// run could not perform a step.
    public var note: String?
    /// Live only: where the broker's own record of the decision disagrees with what the app
    /// was told or with the prediction's parties (RecordCheck); such a cell fails. Nil when
    /// nothing disagrees (and in reports written before the check).
    public var recordDisagreements: [String]?

    public init(outcome: Outcome, rule: String, ruleName: String = "", tag: String = "", ruleSource: String = "",
                message: String = "", identity: String? = nil, url: String? = nil, managed: Bool? = nil,
                arrival: Arrival? = nil, note: String? = nil) {
        self.outcome = outcome
        self.rule = rule
        self.ruleName = ruleName
        self.tag = tag
        self.ruleSource = ruleSource
        self.message = message
        self.identity = identity
        self.url = url
        self.managed = managed
        self.arrival = arrival
        self.note = note
    }

    /// The engine's decision as a verdict.
    public init(_ d: Decision, managed: Bool? = nil) {
        self.init(outcome: d.outcome, rule: d.rule.id, ruleName: d.rule.rawValue, tag: d.tag.rawValue,
                  ruleSource: d.source.description, message: d.message,
                  identity: d.outcome == .switched ? d.receivingIdentity?.description : nil, url: d.url, managed: managed)
    }

    /// Whether two verdicts say the same thing: outcome, rule (its section, and its name where
    /// both know it: one section holds several rules), and what a switch or a login changed.
    public func agrees(with other: Verdict) -> Bool {
        guard outcome == other.outcome, rule == other.rule, managed == other.managed else { return false }
        if !ruleName.isEmpty && !other.ruleName.isEmpty && ruleName != other.ruleName { return false }
        if outcome == .switched { return identity?.lowercased() == other.identity?.lowercased() }
        return true
    }

    /// Short form for tables: `allowed 4.1.4`.
    public var short: String { "\(outcome.rawValue) \(rule)" + (identity.map { " as \($0)" } ?? "") + (managed.map { $0 ? " managed" : " unmanaged" } ?? "") }
}

/// What the live run saw arrive at the target.
public struct Arrival: Sendable, Hashable, Codable {
    /// SHA-256 (hex) of the plaintext when readable, else of the bytes received.
    public var sha256: String?
    /// The account that owns the data, as the receiver was told.
    public var owner: String?
    /// Whether the receiver could read the plaintext.
    public var readable: Bool
    /// Delivered as ciphertext.
    public var encrypted: Bool
    /// The identity the receiver acts under after it arrived.
    public var identity: String?
    /// The URL as delivered.
    public var url: String?

    public init(sha256: String? = nil, owner: String? = nil, readable: Bool, encrypted: Bool = false,
                identity: String? = nil, url: String? = nil) {
        self.sha256 = sha256
        self.owner = owner
        self.readable = readable
        self.encrypted = encrypted
        self.identity = identity
        self.url = url
    }
}

/// A cell with its answers.
public struct CellResult: Sendable, Hashable, Codable {
    public var cell: Cell
    public var predicted: Verdict
    /// nil when the run was `--predict` only.
    public var live: Verdict?
    /// The broker's audit records for the cell (JSON lines), kept to show on a disagreement.
    public var audit: [String]
    /// The source's data is org data (a managed source): what the leak invariant guards.
    public var orgData: Bool
    /// The target party is managed under the cell's policy; nil for a cell with no target app
    /// (a location, an account). The report's summary names the unmanaged apps org data reaches.
    public var targetManaged: Bool?

    public init(cell: Cell, predicted: Verdict, live: Verdict? = nil, audit: [String] = [], orgData: Bool = false, targetManaged: Bool? = nil) {
        self.cell = cell
        self.orgData = orgData
        self.targetManaged = targetManaged
        self.predicted = predicted
        self.live = live
        self.audit = audit
    }

    /// The answer the report shows: live when there is one.
    public var shown: Verdict { live ?? predicted }

    /// Live agrees with predicted, and the broker's record with both (true when there is no
    /// live answer).
    public var agree: Bool { live.map { $0.agrees(with: predicted) && ($0.recordDisagreements ?? []).isEmpty } ?? true }

    /// The shown answer meets the cell's expectation (true when it has none).
    public var meetsExpectation: Bool {
        guard let e = cell.expect else { return true }
        let v = shown
        guard e.outcomes.contains(v.outcome) else { return false }
        if let m = e.managed, v.managed != m { return false }
        if let id = e.identity, v.outcome == .switched, v.identity?.lowercased() != id.lowercased() { return false }
        return true
    }

    /// A failed cell fails the run.
    public var passed: Bool { agree && meetsExpectation }

    /// Org data arrived readable where the policy forbids it: the leak invariant, broken.
    public var leaked: Bool {
        guard orgData, let live, let arrival = live.arrival, arrival.readable else { return false }
        return predicted.outcome == .blocked || predicted.outcome == .filtered || predicted.outcome == .encrypted
    }
}
