import MAMScript

/// One line of the broker's decision log, decoded (docs/PROTOCOL.md lists the keys). The live
/// matrix judges a cell by what arrived and checks the broker's own record of the decision
/// against it field by field, never by searching the line's text.
public struct BrokerRecord: Sendable, Hashable {
    /// A side of a decision as the broker established it: an app (or `location:<name>`), the
    /// identity it acted under, and whether that made it managed.
    public struct Party: Sendable, Hashable {
        public var app: String
        public var identity: String
        public var managed: Bool

        public init(app: String, identity: String, managed: Bool) {
            self.app = app
            self.identity = identity
            self.managed = managed
        }

        /// Not an app: a storage location.
        public var isLocation: Bool { app.hasPrefix("location:") }
    }

    public var id: UInt64
    public var channel: String
    public var source: Party
    public var target: Party?
    public var outcome: String
    /// The section of docs/SEMANTICS.md.
    public var rule: String
    /// The deciding rule; nil where no engine rule decided.
    public var ruleName: String?
    public var tag: String
    public var detail: String?
    public var revision: Int

    public init(id: UInt64 = 0, channel: String, source: Party, target: Party?, outcome: String, rule: String,
                ruleName: String? = nil, tag: String = "", detail: String? = nil, revision: Int = 0) {
        self.id = id
        self.channel = channel
        self.source = source
        self.target = target
        self.outcome = outcome
        self.rule = rule
        self.ruleName = ruleName
        self.tag = tag
        self.detail = detail
        self.revision = revision
    }

    /// A line that is not a record: what is wrong, and in which key.
    public struct Malformed: Error, CustomStringConvertible {
        public var description: String
    }

    /// Decodes one line of `audit.jsonl`. Every key the broker always writes must be there
    /// with its type; a key it writes only sometimes may be absent, never of another type.
    public init(line: some Collection<UInt8>) throws(Malformed) {
        let value: JSONValue
        do { value = try JSONValue.parse(line) } catch { throw Malformed(description: "not JSON: \(error)") }
        func text(_ key: String, in object: JSONValue? = nil) throws(Malformed) -> String {
            guard let s = (object ?? value)[key]?.string else { throw Malformed(description: "\(key): a string is missing") }
            return s
        }
        func optionalText(_ key: String) throws(Malformed) -> String? {
            guard let v = value[key] else { return nil }
            guard let s = v.string else { throw Malformed(description: "\(key): not a string") }
            return s
        }
        func count(_ key: String) throws(Malformed) -> Double {
            guard let n = value[key]?.number, n >= 0, n == n.rounded(.towardZero), n < 1e18 else {
                throw Malformed(description: "\(key): a whole number is missing")
            }
            return n
        }
        func party(_ key: String) throws(Malformed) -> Party? {
            guard let p = value[key] else { return nil }
            guard let managed = p["managed"]?.bool else { throw Malformed(description: "\(key).managed: a boolean is missing") }
            return Party(app: try text("app", in: p), identity: try text("identity", in: p), managed: managed)
        }
        guard let source = try party("source") else { throw Malformed(description: "source: missing") }
        self.init(id: UInt64(try count("id")), channel: try text("channel"), source: source, target: try party("target"),
                  outcome: try text("outcome"), rule: try text("rule"), ruleName: try optionalText("ruleName"),
                  tag: try text("tag"), detail: try optionalText("detail"), revision: Int(try count("revision")))
    }

    /// Whether one of `apps` (lowercased bundle ids) is a side of the record.
    public func names(_ apps: Set<String>) -> Bool {
        apps.contains(source.app.lowercased()) || target.map { apps.contains($0.app.lowercased()) } ?? false
    }
}
