import Foundation
import Testing

/// A comment that sends the reader to a document is only as good as the document: every file a
/// comment in Sources/, Apps/, Tests/, Benchmarks/ or scripts/ cites (`docs/PROTOCOL.md`,
/// `Apps/Mail/README.md`, `SEMANTICS.md`) is in the repository. (The vendor's guide is cited by
/// seed number, never by a file: it is not part of the repository.)
@Suite("Every document a comment cites exists")
struct CitedDocumentsTests {
    static let root = ModuleMapTests.root
    static let folders = ["Sources", "Apps", "Tests", "Benchmarks", "scripts"]
    static let textSuffixes = [".swift", ".c", ".h", ".sh", ".py", ".md"]

    /// The comment text of a file: Markdown whole; in a script, lines that start with `#`; in
    /// code, what follows `//` (not a URL's or a string's) and the lines of a `/* */` block.
    static func comments(_ text: String, markdown: Bool, script: Bool = false) -> [(line: Int, text: String)] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if markdown { return lines.enumerated().map { ($0.offset + 1, $0.element) } }
        var out: [(Int, String)] = []
        for (i, line) in lines.enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if script ? trimmed.hasPrefix("#") : (trimmed.hasPrefix("*") || trimmed.hasPrefix("/*")) {
                out.append((i + 1, trimmed))
            } else if let r = line.range(of: #"(?<![:"\\])//"#, options: .regularExpression) {
                out.append((i + 1, String(line[r.upperBound...])))
            }
        }
        return out
    }

    /// Document names cited in a piece of text.
    static func citations(_ text: String) -> [String] {
        ModuleMapTests.allCaptures(#"(?<![\w/.*-])((?:[\w-]+/)*[\w-]+\.md)\b"#, in: text)
    }

    /// Every file of the repository by name, for citations that give the name alone.
    static let namesInRepository: Set<String> = {
        var names: Set<String> = []
        for top in ["docs", "Apps", "Benchmarks", "Policies", "clients", "Sources", "Tests", "scripts"] {
            let walk = FileManager.default.enumerator(atPath: root.appendingPathComponent(top).path)
            while let path = walk?.nextObject() as? String { names.insert((path as NSString).lastPathComponent) }
        }
        return names.union(try! FileManager.default.contentsOfDirectory(atPath: root.path))
    }()

    /// Whether a citation in `file` names a file of the repository: from the root, from the
    /// file's folder, or (a bare name) anywhere.
    static func resolves(_ cited: String, from file: String) -> Bool {
        let fm = FileManager.default
        if fm.fileExists(atPath: root.appendingPathComponent(cited).path) { return true }
        let folder = (file as NSString).deletingLastPathComponent
        if fm.fileExists(atPath: root.appendingPathComponent(folder).appendingPathComponent(cited).path) { return true }
        return !cited.contains("/") && namesInRepository.contains(cited)
    }

    @Test func everyCitedDocumentIsInTheRepository() throws {
        var checked = 0
        for top in Self.folders {
            let walk = FileManager.default.enumerator(atPath: Self.root.appendingPathComponent(top).path)
            while let path = walk?.nextObject() as? String {
                guard Self.textSuffixes.contains(where: path.hasSuffix) || !path.contains(".") else { continue }
                let file = top + "/" + path
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: Self.root.appendingPathComponent(file).path, isDirectory: &isFolder),
                      !isFolder.boolValue, let text = try? String(contentsOf: Self.root.appendingPathComponent(file), encoding: .utf8) else { continue }
                let script = file.hasSuffix(".sh") || file.hasSuffix(".py") || !path.contains(".")
                for (line, comment) in Self.comments(text, markdown: file.hasSuffix(".md"), script: script) {
                    for cited in Self.citations(comment) {
                        checked += 1
                        #expect(Self.resolves(cited, from: file), "\(file):\(line): cites \(cited), which is not in the repository")
                    }
                }
            }
        }
        #expect(checked > 50, "only \(checked) citations were found")
    }

    /// The reader itself: it finds what a comment cites, and a missing document fails.
    @Test func theCheckFindsACitationAndAMissingDocument() {
        let source = """
            let s = "docs/A.md" // see docs/PROTOCOL.md, "Frames"
            \u{2F}\u{2F}/ A value: it keeps why (STYLE.md).
            let u = "https://example.com/x.md"
            """
        let found = Self.comments(source, markdown: false).flatMap { Self.citations($0.text) }
        #expect(found == ["docs/PROTOCOL.md", "STYLE.md"])
        #expect(Self.resolves("docs/PROTOCOL.md", from: "Sources/MAMWire/Frame.swift"))
        #expect(Self.resolves("README.md", from: "Apps/Mail/main.swift"))
        #expect(!Self.resolves("STYLE.md", from: "Sources/MAMPolicy/Decisions/Decision.swift"))
        #expect(!Self.resolves("DESIGN.md", from: "Benchmarks/README.md"))
    }
}
