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
        let pattern = try NSRegularExpression(pattern: #"\]\(([^)#]+)#L(\d+)(?:-L(\d+))?\)"#)
        let matches = pattern.matches(in: text, range: NSRange(text.startIndex..., in: text))
        #expect(!matches.isEmpty, "\(document) cites no lines")
        for m in matches {
            let file = String(text[Range(m.range(at: 1), in: text)!])
            let first = Int(text[Range(m.range(at: 2), in: text)!])!
            let last = m.range(at: 3).location == NSNotFound ? first : Int(text[Range(m.range(at: 3), in: text)!])!
            // A link starting with "/" is from the repository's root, as GitHub reads it.
            let target = file.hasPrefix("/") ? Built.root + file
                : ((path as NSString).deletingLastPathComponent as NSString).appendingPathComponent(file)
            guard let source = try? String(contentsOfFile: target, encoding: .utf8) else {
                Issue.record("\(document): \(file) does not exist")
                continue
            }
            let lines = source.components(separatedBy: "\n")
            #expect(first <= last && last <= lines.count, "\(document): \(file)#L\(first)-L\(last) is past its \(lines.count) lines")
            if first <= lines.count {
                #expect(!lines[first - 1].trimmingCharacters(in: .whitespaces).isEmpty, "\(document): \(file)#L\(first) is a blank line")
            }
        }
    }
}
