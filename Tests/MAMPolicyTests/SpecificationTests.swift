import Foundation
import MAMPolicy
import Testing

/// A clone alone explains every rule it prints: docs/SEMANTICS.md has a section per rule id and
/// lists every rule with the source the engine gives it, and every link of the docs stays inside
/// the repository.
@Suite("The specification in the repository")
struct SpecificationTests {
    static let root = SamplePaths.root

    static func text(_ relative: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(relative), encoding: .utf8)
    }

    /// Sections of docs/SEMANTICS.md headed `### <id> …`, with their lines.
    static func sections() throws -> [String: [String]] {
        var out: [String: [String]] = [:]
        var current: String?
        for line in try text("docs/SEMANTICS.md").split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("### ") {
                current = line.dropFirst(4).split(separator: " ").first.map(String.init)
                if let current { out[current, default: []] = [] }
            } else if line.hasPrefix("## ") {
                current = nil
            } else if let c = current {
                out[c, default: []].append(String(line))
            }
        }
        return out
    }

    @Test func everyRuleIdHasASectionAndEverySectionIsARuleId() throws {
        let documented = Set(try Self.sections().keys)
        let ids = Set(Rule.allCases.map(\.id))
        #expect(ids.subtracting(documented).isEmpty, "rule ids without a section: \(ids.subtracting(documented).sorted())")
        #expect(documented.subtracting(ids).isEmpty, "sections that are no rule id: \(documented.subtracting(ids).sorted())")
    }

    @Test func everyRuleIsListedInItsSectionWithTheEnginesSource() throws {
        let sections = try Self.sections()
        var listed: [String: (section: String, source: String)] = [:]
        for (id, lines) in sections {
            for line in lines where line.hasPrefix("| `") {
                let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
                guard cells.count >= 3 else { continue }
                let name = cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
                listed[name] = (id, cells[2])
            }
        }
        for rule in Rule.allCases {
            let entry = listed[rule.rawValue]
            #expect(entry?.section == rule.id, "\(rule) belongs in §\(rule.id), found in \(entry?.section ?? "none")")
            #expect(entry?.source == rule.source.description, "\(rule): page says \(entry?.source ?? "nothing"), engine says \(rule.source)")
        }
        let unknown = Set(listed.keys).subtracting(Rule.allCases.map(\.rawValue))
        #expect(unknown.isEmpty, "rules on the page the engine does not have: \(unknown.sorted())")
    }

    @Test func aRulesTagFollowsItsSource() {
        for rule in Rule.allCases {
            switch rule.source {
            case .observed: #expect(rule.tag == .observed)
            case .chosen: #expect(rule.tag == .chosen)
            case .seed, .headers, .admin, .log: #expect(rule.tag == .doc)
            }
        }
        #expect(RuleSource.seed(2, "Exit criteria").description == "seed 002 §Exit criteria")
        #expect(RuleSource.seed(2, "Exit criteria").label == "[doc: seed 002 §Exit criteria]")
        #expect(RuleSource.chosen.label == "[chosen]")
    }

    /// README.md and every docs/*.md.
    static func documents() throws -> [String] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
        return ["README.md"] + docs
    }

    /// Markdown link targets `[text](target)`.
    static func links(in markdown: String) -> [String] {
        let regex = try! NSRegularExpression(pattern: #"\]\(([^)\s]+)(?:\s+"[^"]*")?\)"#)
        let ns = markdown as NSString
        return regex.matches(in: markdown, range: NSRange(location: 0, length: ns.length)).map { ns.substring(with: $0.range(at: 1)) }
    }

    @Test func everyRelativeLinkResolvesInsideTheRepository() throws {
        let base = Self.root.standardizedFileURL.path
        var checked = 0
        for doc in try Self.documents() {
            let markdown = try Self.text(doc)
            #expect(!markdown.contains("../shared"), "\(doc) points outside the repository")
            let folder = Self.root.appendingPathComponent(doc).deletingLastPathComponent()
            for link in Self.links(in: markdown) {
                if link.hasPrefix("http://") || link.hasPrefix("https://") || link.hasPrefix("mailto:") || link.hasPrefix("#") { continue }
                let path = String(link.split(separator: "#", maxSplits: 1)[0])
                // A link starting with "/" is from the repository's root, as GitHub reads it.
                let target = (path.hasPrefix("/") ? Self.root.appendingPathComponent(String(path.dropFirst()))
                    : folder.appendingPathComponent(path)).standardizedFileURL.path
                #expect(target == base || target.hasPrefix(base + "/"), "\(doc): \(link) leaves the repository")
                #expect(FileManager.default.fileExists(atPath: target), "\(doc): \(link) does not exist")
                checked += 1
            }
        }
        #expect(checked > 5, "the link scan found too few links to be working")
    }

    @Test func theLinkScanFindsLinksAndSkipsTitles() {
        #expect(Self.links(in: "see [a](docs/A.md) and [b](B.md \"title\") and [c](https://x.y)") == ["docs/A.md", "B.md", "https://x.y"])
    }
}
