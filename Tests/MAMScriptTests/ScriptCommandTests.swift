import Testing
import MAMScript

@Suite struct ScriptCommandTests {
    @Test func bareWordsStayBare() throws {
        let c = ScriptCommand("open-url", ["https://contoso.com/a?b=c"])
        #expect(c.line == "open-url https://contoso.com/a?b=c")
        #expect(try ScriptCommand.parse(c.line) == c)
    }

    @Test func awkwardWordsAreQuotedAndComeBackByteForByte() throws {
        let words = ["", "two words", "quote \" and \\ backslash", "tab\tnew\nline", "héllo ☃", "\u{0}nul", "-"]
        let c = ScriptCommand("copy", words)
        let parsed = try ScriptCommand.parse(c.line)
        #expect(parsed.arguments == words)
        #expect(!c.line.contains("\n"))
    }

    @Test func randomWordsRoundTrip() throws {
        var state: UInt64 = 0x5EED
        func next() -> UInt64 { state &+= 0x9E3779B97F4A7C15; var z = state; z = (z ^ (z >> 30)) &* 0xBF58476D1CE4E5B9; return z ^ (z >> 27) }
        let alphabet: [Character] = ["a", " ", "\"", "\\", "\n", "é", "-", "{", "\u{7F}", "\u{1}", "😀"]
        for _ in 0..<2_000 {
            let words = (0..<Int(next() % 4)).map { _ in String((0..<Int(next() % 6)).map { _ in alphabet[Int(next() % UInt64(alphabet.count))] }) }
            let c = ScriptCommand("w", words)
            #expect(try ScriptCommand.parse(c.line) == c, "\(c.line)")
        }
    }

    @Test(arguments: [
        ("", 0, "empty line"),
        ("paste  x", 5, "one space"),
        (" paste", 0, "one space"),
        ("paste ", 5, "one space"),
        ("copy \"open", 5, "unterminated"),
        ("copy \"a\"b", 8, "space after"),
        ("copy a\\b", 6, "JSON string"),
        ("copy \"\\q\"", 5, "not a valid JSON string"),
    ])
    func badLinesSayWhere(line: String, offset: Int, reason: String) {
        #expect {
            _ = try ScriptCommand.parse(line)
        } throws: { error in
            guard let e = error as? ScriptSyntaxError else { return false }
            return e.offset == offset && e.reason.contains(reason)
        }
    }

    @Test func overlongLineIsRefused() {
        #expect(throws: ScriptSyntaxError.self) { try ScriptCommand.parse(String(repeating: "a", count: ScriptCommand.maximumLineBytes + 1)) }
    }

    @Test func outputLinesAreOneObjectEach() throws {
        final class Lines: @unchecked Sendable { var all: [String] = [] }
        let lines = Lines()
        let out = ScriptOutput { lines.all.append($0) }
        out.result(3, ScriptCommand("paste"), ["text": "a\nb", "decision": ["outcome": "allowed", "allowed": true]])
        out.event("url", ["url": "https://x/y", "sender": nil])
        #expect(lines.all.count == 2)
        #expect(!lines.all[0].contains("\n"))
        let first = try JSONValue.parse(Array(lines.all[0].utf8))
        #expect(first["id"] == 3 && first["command"] == "paste" && first["text"] == "a\nb")
        #expect(first["decision"]?["allowed"] == true)
        let second = try JSONValue.parse(Array(lines.all[1].utf8))
        #expect(second["event"] == "url" && second["sender"] == .null && second["url"]?.string == "https://x/y")
        #expect(lines.all[1].contains("https://x/y"))
    }
}
