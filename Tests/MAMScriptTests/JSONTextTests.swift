import Foundation
import Testing
import MAMScript

/// JSONValue's own writer and reader (JSONText): the same bytes JSONEncoder wrote, the same
/// values JSONDecoder read, and hostile lines refused with where.
@Suite struct JSONTextTests {
    /// What JSONEncoder writes with the options the lines always had.
    static func foundation(_ v: JSONValue) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(v)) ?? Data("null".utf8), as: UTF8.self)
    }

    static let samples: [JSONValue] = [
        // A decision and a document event, as the apps write them.
        ["id": 12, "command": "share", "decision": ["outcome": "blocked", "allowed": false, "rule": "4.1.4", "message": "Your organization only allows…",
                                                    "detail": "", "tag": "doc", "ruleName": "sendToUnmanagedBlocked", "decidedAt": "Sources/MAMPolicy/Decisions/Transfer.swift:88"]],
        ["event": "document", "type": "com.adobe.pdf", "name": "c1-q3.pdf", "owner": nil, "encrypted": true, "readable": false,
         "sha256": "ab", "identity": "", "via": "openIn", "size": 1234],
        ["isManaged": true, "isPINRequired": false, "isPrintingAllowed": true, "isBackupAllowed": false, "isAppSharingAllowed": true,
         "areSiriIntentsAllowed": false, "saveTo": ["oneDriveForBusiness": true, "localDrive": false, "box": true]],
        // Keys differing in case only where it decides the order; empty, nested, odd text.
        ["Zeta": 1, "alpha": 2, "beta": 3, "Alpha": 4, "a": 5, "A": 6, "_x": 7, "x_": 8, "": 9, "a-b": 10, "aB": 11, "ab": 12],
        ["text": "quote \" backslash \\ slash / tab\t newline\n return\r \u{8}\u{c} nul \u{0} unit \u{1f} del \u{7f} é ☃ 😀 \u{2028}"],
        [.number(1.5), .number(-0.25), .number(1e-7), 123456789012, -3, 0, .number(9.5e15), true, false, nil, [], [:], [[["deep"]]]],
        // Keys beyond ASCII, which Foundation orders by its own rules: handed to it.
        ["a10": 1, "a9": 2, "é": 3, "e": 4],
    ]

    @Test func writesTheBytesJSONEncoderWrote() {
        for v in Self.samples {
            #expect(v.json == Self.foundation(v))
        }
        #expect(JSONValue.number(.nan).json == "null")
    }

    @Test func readsWhatJSONDecoderRead() throws {
        for v in Self.samples {
            let text = Self.foundation(v)
            #expect(try JSONValue.parse(Array(text.utf8)) == v, "\(text)")
            #expect(try JSONValue.parse(Array(text.utf8)) == (try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))))
        }
        #expect(try JSONValue.parse(Array(#" { "a" : [ 1 , "\u00e9\ud83d\ude00\/" ] } "#.utf8)) == ["a": [1, "é😀/"]])
    }

    @Test("a number reads as Double's own parser reads its text; a repeated key keeps its last value")
    func numbersAndRepeatedKeys() throws {
        for text in ["0", "-0", "7", "-12", "123456789012345", "-999999999999999", "1234567890123456", "9007199254740993",
                     "1.5", "-2e3", "1E2", "0.000001"] {
            #expect(try JSONValue.parse(Array(text.utf8)) == .number(Double(text)!), "\(text)")
        }
        #expect(try JSONValue.parse(Array(#"{"a":1,"b":2,"a":3}"#.utf8)) == ["a": 3, "b": 2])
        #expect(try JSONValue.parse(Array(#"{}"#.utf8)) == [:])
    }

    @Test func refusesBrokenAndHostileLinesSayingWhere() {
        let bad: [(String, Int)] = [
            ("{\"a\":1", 6), ("[1,]", 3), ("01", 0), ("\"tab\there\"", 4), ("\"\\ud800\"", 7), ("{\"a\" 1}", 5),
            ("tru", 0), ("1 2", 2), ("\"\\q\"", 2), ("1e999", 0), ("", 0),
        ]
        for (text, offset) in bad {
            #expect(throws: (any Error).self, "\(text)") { try JSONValue.parse(Array(text.utf8)) }
            do { _ = try JSONValue.parse(Array(text.utf8)) } catch {
                #expect("\(error)".hasPrefix("byte \(offset):"), "\(text): \(error)")
            }
        }
        // An app's line nested a million deep is refused, not followed down the stack.
        let deep = String(repeating: "[", count: 1_000_000) + String(repeating: "]", count: 1_000_000)
        #expect(throws: (any Error).self) { try JSONValue.parse(Array(deep.utf8)) }
        let invalid: [UInt8] = [0x22, 0xFF, 0x22]
        #expect(throws: (any Error).self) { try JSONValue.parse(invalid) }
    }
}
