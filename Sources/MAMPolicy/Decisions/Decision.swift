/// What happened to the data (docs/SEMANTICS.md §4).
public enum Outcome: String, Sendable, Hashable, CaseIterable, Codable {
    case allowed
    case blocked
    /// Delivered, but unreadable to the receiver.
    case encrypted
    /// The target is not offered.
    case filtered
    /// Delivered after an identity switch; `Decision.receivingIdentity` names the identity.
    case switched
    /// The URL was changed (managed browser, custom dialer); `Decision.url` holds the new one.
    case rewritten

    /// Whether the data reaches the target at all.
    public var delivers: Bool { self != .blocked && self != .filtered }
}

/// What kind of source a rule has: the vendor documents it (`doc`), users report it
/// (`observed`), or MAMLab chose it (`chosen`). `RuleSource` names the source itself.
public enum Tag: String, Sendable, Hashable {
    case doc, observed, chosen
}

/// The text a blocked user sees (docs/SEMANTICS.md §6).
public enum UserMessage {
    public static let sendNone = "Your organization does not allow you to transfer its data to other apps."
    public static let sendManaged = "Your organization only allows you to transfer its data to other managed apps."
    public static let receiveNone = "Your organization does not allow you to open any transferred data in this app."
    public static let receiveManaged = "Your organization only allows you to open work or school data in this app."
    public static let paste = "Your organization's data cannot be pasted here."
    public static let sharingTitle = "Sharing not allowed"
    public static let sharing = "Your organization does not allow this sharing."
    public static let noHandler = "No app on this device can open this link."
    /// [chosen] The share sheet offers no app that declares the document's type; the link's
    /// words would name the wrong thing.
    public static let noDocumentHandler = "No app on this device can open this type of document."
    /// [chosen] The SDK reports a refused switch as a result code, not a text; this is MAMLab's.
    public static let identityRefused = "This account cannot be used in this app."
    /// [chosen] What the launch checks tell the user; the SDK's own screens are not in the seeds.
    public static let launchVersion = "Your organization requires a newer version to open work data in this app."
    public static let launchDevice = "Your organization does not allow work data in this app on this device."
    public static let launchOffline = "Connect to the internet so your organization can check your access to work data."
    public static let launchWiped = "Your organization has removed its data from this app."
}

/// Which party's policy a rule reads.
public enum PolicySide: String, Sendable, Hashable {
    case none, sender, receiver, owner
}

/// Where in the engine a decision was made: the source line that chose its rule, as the
/// compiler saw it (`#filePath`, `#line`). The compiler fills it in, so the engine stays pure (no
/// stack walk, no I/O), and a decision pays no allocation for it.
public struct DecisionSite: Sendable, Hashable, CustomStringConvertible {
    public let filePath: StaticString
    public let line: UInt

    public init(filePath: StaticString, line: UInt) {
        self.filePath = filePath
        self.line = line
    }

    /// The file from the repository's root (`Sources/MAMPolicy/Decisions/Transfer.swift`): the
    /// build machine's folders say nothing to a reader and stay out of every audit line.
    public var file: String {
        // Every answered decision asks (its audit record and its reply): no array for the marker.
        let marker: StaticString = "/Sources/"
        return filePath.withUTF8Buffer { path in
            marker.withUTF8Buffer { marker in
                var start = path.count - marker.count
                while start >= 0 && !path[start..<start + marker.count].elementsEqual(marker) { start -= 1 }
                return String(decoding: path[(start >= 0 ? start + 1 : 0)...], as: UTF8.self)
            }
        }
    }

    /// `Sources/MAMPolicy/Decisions/Transfer.swift:58`: what `explain`, the wire and the audit show.
    public var description: String { "\(file):\(line)" }

    public static func == (a: DecisionSite, b: DecisionSite) -> Bool {
        a.line == b.line && a.filePath.withUTF8Buffer { x in b.filePath.withUTF8Buffer { y in x.elementsEqual(y) } }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(line)
        filePath.withUTF8Buffer { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}

/// One decision: an outcome and the rule that produced it, with what the rule changed.
///
/// A value, never a bare `Bool`: it keeps why.
public struct Decision: Sendable, Hashable, CustomStringConvertible {
    public var outcome: Outcome
    public var rule: Rule
    /// Where the engine chose `rule`: the line a reader opens to see why.
    public var site: DecisionSite
    /// For `switched`: the identity that took the data. For an inbound item tagged with the
    /// MDM user (§4.2.2): its new owner.
    public var receivingIdentity: Identity?
    /// For URL opens: the URL as delivered (rewritten, or wrapped for a managed target).
    public var url: String?
    /// For open-in: the content type the item travels as.
    public var deliveredType: String?
    /// For a blocked paste: the text delivered instead [observed].
    public var replacementText: String?
    /// For a two-step transfer: the sender's decision that let it through.
    public var senderRule: Rule?

    public init(_ outcome: Outcome, _ rule: Rule, filePath: StaticString = #filePath, line: UInt = #line) {
        self.outcome = outcome
        self.rule = rule
        self.site = DecisionSite(filePath: filePath, line: line)
    }

    public var allowed: Bool { outcome.delivers }
    public var tag: Tag { rule.tag }
    public var source: RuleSource { rule.source }
    public var ruleID: String { rule.id }
    /// The user-facing text; empty when the user sees nothing.
    public var message: String { outcome.delivers ? "" : rule.message }

    public var description: String { "\(outcome.rawValue) (\(rule.id) \(rule.source.label))" }
}
