import Foundation
import MAMPolicy

/// Makes a share or action extension's activation rule accept the SDK's prefixed types
/// (seed 000, "Update existing Share and Action extensions").
public enum ActivationRuleEditor {
    static let clause = #"(ANY\s+)?([A-Za-z_$][\w$.]*)\s+UTI-CONFORMS-TO\s+"([^"]*)""#

    /// The predicate with a `UTI-CONFORMS-TO` clause for each missing twin, added after the last
    /// clause with the same left-hand side; nil when nothing is missing or there is no clause.
    public static func extend(_ predicate: String) -> String? {
        let regex = try! NSRegularExpression(pattern: clause)
        let ns = predicate as NSString
        let matches = regex.matches(in: predicate, range: NSRange(location: 0, length: ns.length))
        guard let last = matches.last else { return nil }
        let types = matches.map { ns.substring(with: $0.range(at: 3)) }
        let present = Set(types.map { $0.lowercased() })
        var missing: [String] = []
        for t in types where !ContentType.isTwin(t) {
            let twin = ContentType.twin(of: t)
            if !present.contains(twin.lowercased()) && !missing.contains(twin) { missing.append(twin) }
        }
        guard !missing.isEmpty else { return nil }
        let any = last.range(at: 1).location != NSNotFound ? "ANY " : ""
        let lhs = ns.substring(with: last.range(at: 2))
        // A rule written one clause a line gets one clause a line, at the same indentation.
        let lineStart = ns.range(of: "\n", options: .backwards, range: NSRange(location: 0, length: last.range.location))
        let before = lineStart.location == NSNotFound ? "" : ns.substring(with: NSRange(
            location: lineStart.location + 1, length: last.range.location - lineStart.location - 1))
        let separator = !before.isEmpty && before.allSatisfy({ $0 == " " || $0 == "\t" }) ? " ||\n" + before : " || "
        let added = missing.map { "\(separator)\(any)\(lhs) UTI-CONFORMS-TO \"\($0)\"" }.joined()
        let end = last.range.location + last.range.length
        return ns.substring(to: end) + added + ns.substring(from: end)
    }

    /// What each key of the dictionary form accepts [chosen where Apple's documentation names
    /// no type: files as `public.data`, web pages as the JavaScript-preprocessing result].
    static let dictionaryTypes: [(key: String, type: String)] = [
        ("NSExtensionActivationSupportsAttachmentsWithMaxCount", "public.item"),
        ("NSExtensionActivationSupportsFileWithMaxCount", "public.data"),
        ("NSExtensionActivationSupportsImageWithMaxCount", "public.image"),
        ("NSExtensionActivationSupportsMovieWithMaxCount", "public.movie"),
        ("NSExtensionActivationSupportsText", "public.text"),
        ("NSExtensionActivationSupportsWebURLWithMaxCount", "public.url"),
        ("NSExtensionActivationSupportsWebPageWithMaxCount", "com.apple.property-list"),
    ]
    static let ignoredKeys: Set<String> = [
        "NSExtensionActivationSupportsAttachmentsWithMinCount", "NSExtensionActivationDictionaryVersion",
        "NSExtensionActivationUsesStrictMatching",
    ]

    /// An equivalent predicate for the dictionary form, already accepting the twins, and the
    /// keys it did not understand.
    public static func predicate(fromDictionary rule: Node) -> (predicate: String, unknownKeys: [String]) {
        let pairs = rule.pairs ?? []
        var clauses: [String] = []
        var minimum = 1
        if case let .integer(m)? = rule["NSExtensionActivationSupportsAttachmentsWithMinCount"]?.value, m > 0 { minimum = m }
        for (key, type) in dictionaryTypes {
            guard let value = rule[key]?.value else { continue }
            let maximum: Int?
            switch value {
            case let .integer(n) where n > 0: maximum = n
            case .bool(true): maximum = nil
            default: continue
            }
            let accepts = [type, ContentType.twin(of: type)]
                .map { "ANY $attachment.registeredTypeIdentifiers UTI-CONFORMS-TO \"\($0)\"" }
                .joined(separator: " || ")
            let count = maximum.map { "BETWEEN {\(min(minimum, $0)), \($0)}" } ?? ">= \(minimum)"
            clauses.append("SUBQUERY(extensionItems, $extensionItem, SUBQUERY($extensionItem.attachments, $attachment, \(accepts)).@count \(count)).@count >= 1")
        }
        let known = Set(dictionaryTypes.map(\.key)).union(ignoredKeys)
        let unknown = pairs.map(\.key).filter { !known.contains($0) }
        return (clauses.isEmpty ? "FALSEPREDICATE" : clauses.joined(separator: " OR "), unknown)
    }
}
