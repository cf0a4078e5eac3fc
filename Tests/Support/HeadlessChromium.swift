import Foundation
import Testing

/// A page as headless Chromium (Debian `chromium`) renders it: its DOM, its widths at a window
/// size, a screenshot, and the page printed to PDF with the PDF's words and their boxes
/// (poppler's `pdftotext`). Chromium or poppler missing is a recorded failure, never a skip
/// (scripts/test installs both).
public struct HeadlessChromium {
    public static var executable: String? {
        ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The folder the page is in (`matrix.html`), with Chromium's profile.
    public let folder: String

    /// Writes `html` as `matrix.html` in a folder of its own, gone after `body`.
    public static func withPage(_ html: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: (HeadlessChromium) throws -> Void) throws {
        guard executable != nil else {
            Issue.record("chromium is not installed (apt-get install -y chromium; scripts/test installs it)", sourceLocation: sourceLocation)
            return
        }
        let dir = NSTemporaryDirectory() + "mamlab-html-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data(html.utf8).write(to: URL(fileURLWithPath: dir + "/matrix.html"))
        try body(HeadlessChromium(folder: dir))
    }

    public var page: String { folder + "/matrix.html" }

    /// Chromium on `arguments`, bounded; its output as bytes, whatever it is.
    @discardableResult
    public func run(_ arguments: [String]) throws -> Data {
        let child = try ChildProcess(Self.executable!, ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=\(folder)/profile"] + arguments,
                                     directory: folder, input: false)
        try child.waitForExit(timeout: 120)
        return child.standardOutput
    }

    /// The page's DOM after Chromium rendered it.
    public func dom(of file: String? = nil) throws -> String {
        String(decoding: try run(["--dump-dom", "file://\(file ?? page)"]), as: UTF8.self)
    }

    /// The rendered page's width at a window `width` px wide: the document's scroll width and the
    /// right edge of its widest element, measured by a script in a copy of the page (the page
    /// itself has none).
    public func widths(atWindowWidth width: Int) throws -> (scroll: Int, widest: Int) {
        let html = try String(contentsOfFile: page, encoding: .utf8)
        let probe = """
            <script>var w=0;document.querySelectorAll("body *").forEach(function(e){w=Math.max(w,e.getBoundingClientRect().right)});\
            document.body.insertAdjacentHTML("beforeend","<pre id=\\"measured\\">"+document.documentElement.scrollWidth+" "+Math.ceil(w)+"</pre>")</script>
            """
        let copy = folder + "/measured.html"
        try Data(html.replacingOccurrences(of: "</body>", with: probe + "</body>").utf8).write(to: URL(fileURLWithPath: copy))
        let dom = String(decoding: try run(["--window-size=\(width),900", "--dump-dom", "file://\(copy)"]), as: UTF8.self)
        guard let at = dom.range(of: "<pre id=\"measured\">"), let end = dom[at.upperBound...].firstIndex(of: "<") else {
            throw Failure("no measurement in the rendered page")
        }
        let numbers = dom[at.upperBound..<end].split(separator: " ").compactMap { Int($0) }
        guard numbers.count == 2 else { throw Failure("measurement '\(dom[at.upperBound..<end])'") }
        return (numbers[0], numbers[1])
    }

    /// The page printed to PDF (Chromium's default paper, no header or footer): its page count,
    /// page width in points, its text, and the right edge of every word, from pdftotext -bbox.
    public struct Printed {
        public var pages: Int
        public var pageWidth: Double
        public var text: String
        public var rightmostWord: Double
    }

    public func printed() throws -> Printed {
        let pdf = folder + "/matrix.pdf"
        try run(["--print-to-pdf=\(pdf)", "--no-pdf-header-footer", "file://\(page)"])
        guard FileManager.default.fileExists(atPath: "/usr/bin/pdftotext") else {
            throw Failure("pdftotext is not installed (apt-get install -y poppler-utils; scripts/test installs it)")
        }
        let text = try ChildProcess.run("/usr/bin/pdftotext", [pdf, "-"], timeout: 120).out
        let boxes = try ChildProcess.run("/usr/bin/pdftotext", ["-bbox", pdf, "-"], timeout: 120).out
        var pages = 0, width = 0.0, rightmost = 0.0
        for line in boxes.split(separator: "\n") {
            if line.contains("<page ") {
                pages += 1
                width = Self.attribute("width", in: line) ?? width
            } else if line.contains("<word ") {
                rightmost = max(rightmost, Self.attribute("xMax", in: line) ?? 0)
            }
        }
        return Printed(pages: pages, pageWidth: width, text: text, rightmostWord: rightmost)
    }

    static func attribute(_ name: String, in line: Substring) -> Double? {
        guard let at = line.range(of: name + "=\"") else { return nil }
        return Double(line[at.upperBound...].prefix { $0 != "\"" })
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        init(_ d: String) { description = d }
    }
}
