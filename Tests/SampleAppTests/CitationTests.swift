import Foundation
import Testing

/// The READMEs and the integration guide point at lines of the samples (`[File.swift:12-20](File.swift#L12-L20)`):
/// every such link names a file that exists and lines it has, starting on a line with code.
@Suite("Sample apps: the guide's line references")
struct CitationTests {
    static let documents = ["Apps/Chat/README.md", "Apps/Mail/README.md", "Apps/Docs/README.md", "Apps/Edge/README.md",
                            "Apps/Dialer/README.md", "docs/INTEGRATION.md"]

    @Test(arguments: documents)
    func everyLineReferenceIsInItsFile(_ document: String) throws {
        let path = Built.root + "/" + document
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let matches = Self.link.matches(in: text, range: NSRange(text.startIndex..., in: text))
        #expect(!matches.isEmpty, "\(document) cites no lines")
        for m in matches {
            let (file, first, last, target) = Self.citation(m, in: text, of: path)
            guard let source = try? String(contentsOfFile: target, encoding: .utf8) else {
                Issue.record("\(document): \(file) does not exist")
                continue
            }
            let lines = source.components(separatedBy: "\n")
            #expect(first <= last && last <= lines.count, "\(document): \(file)#L\(first)-L\(last) is past its \(lines.count) lines")
            if first <= lines.count {
                #expect(!lines[first - 1].trimmingCharacters(in: .whitespaces).isEmpty, "\(document): \(file)#L\(first) is a blank line")
            }
            // The link's text names the same lines as its address ([Accounts.swift:9-21](Accounts.swift#L9-L21)).
            if let said = Self.linesInText(text, before: m.range) {
                #expect(said == first...last, "\(document): the text says lines \(said), the link goes to \(first)-\(last) of \(file)")
            }
        }
    }

    /// A link to lines: `](File.swift#L9-L21)`.
    static var link: NSRegularExpression { try! NSRegularExpression(pattern: #"\]\(([^)#]+)#L(\d+)(?:-L(\d+))?\)"#) }

    /// A `link` match in `text` of the document at `path`: the file as written, its lines, and
    /// its path (a link starting with "/" is from the repository's root, as GitHub reads it).
    static func citation(_ m: NSTextCheckingResult, in text: String, of path: String) -> (file: String, first: Int, last: Int, target: String) {
        let file = String(text[Range(m.range(at: 1), in: text)!])
        let first = Int(text[Range(m.range(at: 2), in: text)!])!
        let last = m.range(at: 3).location == NSNotFound ? first : Int(text[Range(m.range(at: 3), in: text)!])!
        let target = file.hasPrefix("/") ? Built.root + file : ((path as NSString).deletingLastPathComponent as NSString).appendingPathComponent(file)
        return (file, first, last, target)
    }

    /// Lines a link's text names (`File.swift:9-21` or `File.swift:12`), when it names any.
    static func linesInText(_ text: String, before closing: NSRange) -> ClosedRange<Int>? {
        let ns = text as NSString
        let open = ns.range(of: "[", options: .backwards, range: NSRange(location: 0, length: closing.location + 1))
        guard open.location != NSNotFound else { return nil }
        let label = ns.substring(with: NSRange(location: open.location + 1, length: closing.location - open.location - 1))
        guard let colon = label.lastIndex(of: ":") else { return nil }
        let numbers = label[label.index(after: colon)...].split(separator: "-").compactMap { Int($0) }
        guard let first = numbers.first, numbers.count <= 2 else { return nil }
        return first...(numbers.count == 2 ? numbers[1] : first)
    }

    /// A row of the guide names what its lines do, with code in backticks (`setUIIdentity`):
    /// some code the row names is in the lines it cites, so a citation left behind when its
    /// file changed fails here, not only when it runs past the end.
    @Test(arguments: documents)
    func aRowsCitedLinesHoldTheCodeItNames(_ document: String) throws {
        _ = try Self.checkRows(document)
    }

    /// The check above reaches something: the READMEs' tables name code in their rows.
    @Test func theGuidesRowsNameCode() throws {
        let rows = try Self.documents.map { try Self.checkRows($0) }.reduce(0, +)
        #expect(rows >= 10, "only \(rows) rows name code beside their citations")
    }

    /// Checks the rows of `document` that name code and cite lines; how many there were.
    static func checkRows(_ document: String) throws -> Int {
        let path = Built.root + "/" + document
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let code = try NSRegularExpression(pattern: #"`([A-Za-z_][A-Za-z0-9_.]*)(?:\([^`]*\))?`"#)
        var checked = 0
        for row in text.components(separatedBy: "\n") where row.hasPrefix("|") {
            let range = NSRange(row.startIndex..., in: row)
            let names = code.matches(in: row, range: range).map { String(row[Range($0.range(at: 1), in: row)!]) }
            let links = Self.link.matches(in: row, range: range)
            guard !names.isEmpty, !links.isEmpty else { continue }
            var cited = ""
            for m in links {
                let (_, first, last, target) = citation(m, in: row, of: path)
                let lines = ((try? String(contentsOfFile: target, encoding: .utf8)) ?? "").components(separatedBy: "\n")
                guard first >= 1, first <= last, last <= lines.count else { continue }
                cited += lines[(first - 1)..<last].joined(separator: "\n")
            }
            // `SampleSession.main` is found as `main` after `SampleSession`'s declaration; the last part is the code.
            let found = names.contains { cited.contains($0.split(separator: ".").last.map(String.init) ?? $0) }
            #expect(found, "\(document): none of \(names) is in the lines this row cites: \(row)")
            checked += 1
        }
        return checked
    }
}
