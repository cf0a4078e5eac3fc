import Foundation
import MAMPolicy
import Testing

/// A reader's time grows with its input, not with the input's square: the broker reads the
/// tenant file on its loop, at start and at every reload, and an author's file may be large.
@Suite("Large inputs are read in time that grows with them")
struct LargeInputTests {
    @Test func anObjectOfFiftyThousandKeysIsReadInSeconds() throws {
        let text = "{" + (0..<50_000).map { "\"k\($0)\": 0" }.joined(separator: ", ") + "}"
        var node: Node?
        let took = try ContinuousClock().measure { node = try JSONParser.parse(Data(text.utf8)) }
        #expect(took < .seconds(10), "\(took)")
        #expect(node?["k49999"] == Node(.integer(0)))
    }

    @Test func aDuplicateKeyIsStillFoundWhereItIs() {
        do {
            _ = try JSONParser.parse(Data(#"{"a": 1, "b": 2, "a": 3}"#.utf8))
            Issue.record("a duplicate key was taken")
        } catch {
            #expect(error.position == SourcePosition(line: 1, column: 18, offset: 17) && error.message == "duplicate key \"a\"", "\(error)")
        }
    }

    @Test func anUnknownKeyOfTwoHundredThousandCharactersIsWarnedAboutInSeconds() throws {
        let policy = ##"{"@odata.type": "#microsoft.graph.iosManagedAppProtection", ""## + String(repeating: "x", count: 200_000) + #"": 1}"#
        var loaded: [PolicyFile.Loaded] = []
        let took = try ContinuousClock().measure { loaded = try PolicyFile.load(Data(policy.utf8), file: "long.json") }
        #expect(took < .seconds(10), "\(took)")
        // No suggestion: a name that long is no typo of a property.
        #expect(loaded.first?.warnings.map(\.message).contains { $0.hasPrefix("unknown key") && !$0.contains("did you mean") } == true)
    }
}
