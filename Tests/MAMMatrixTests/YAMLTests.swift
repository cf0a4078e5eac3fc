import Foundation
import MAMMatrix
import MAMPolicy
import Testing

@Suite("Experiment files in YAML")
struct YAMLTests {
    @Test func yamlAndJSONLoadTheSameExperiment() throws {
        let yaml = """
            --- # a comment
            name: pair
            parties:
              - name: Mail (adele)
                app: Mail
                accounts: [adele@contoso.com, "personal"]
                identity: adele@contoso.com
              - name: 'Notes # not a comment'
                app: Notes
            channels:
            - open-in
            - save-to sharePoint:adele@contoso.com
            payload:
              text: "tab\\there"
            cells:
              - channel: paste
                source: Mail (adele)
                target: 'Notes # not a comment'
                expect:
                  outcome: [blocked, encrypted]
                  managed: false
            """
        let json = """
            {"name": "pair", "parties": [{"name": "Mail (adele)", "app": "Mail", "accounts": ["adele@contoso.com", "personal"], "identity": "adele@contoso.com"},
                                         {"name": "Notes # not a comment", "app": "Notes"}],
             "channels": ["open-in", "save-to sharePoint:adele@contoso.com"], "payload": {"text": "tab\\there"},
             "cells": [{"channel": "paste", "source": "Mail (adele)", "target": "Notes # not a comment", "expect": {"outcome": ["blocked", "encrypted"], "managed": false}}]}
            """
        let a = try Fixture.load(yaml, file: "pair.yaml")
        let b = try Fixture.load(json, file: "pair.json")
        #expect(a == b)
        #expect(a.payload.text == "tab\there")
    }

    @Test func problemsNameTheLine() {
        func message(_ yaml: String) -> String {
            do { _ = try Fixture.load(yaml, file: "e.yaml"); return "" } catch { return error.description }
        }
        #expect(message("name: x\nparties:\n  - name: A\n    app: Nope\n").contains("e.yaml:4:10: error: $.parties[0].app: unknown app \"Nope\""))
        #expect(message("parties:\n  - name: A\n    app: Mail\n    x: {a: 1}\n").contains("e.yaml:4:8: error: { starts YAML this reader does not take"))
        #expect(message("parties:\n\t- name: A\n").contains("e.yaml:2:1: error: a tab in the indentation"))
        #expect(message("name: a\nname: b\n").contains("e.yaml:2:1: error: a second \"name\""))
        #expect(message("parties:\n  - name: A\n   app: Mail\n").contains("e.yaml:3:4: error: unexpected indentation"))
    }

    @Test func theYAMLExampleConforms() throws {
        let file = Fixture.root.appendingPathComponent("docs/examples/exit-criteria-send.yaml")
        let e = try ExperimentFile.load(try Data(contentsOf: file), file: file.lastPathComponent, knownApp: Fixture.knownApp)
        let schema = try SchemaChecker(file: Fixture.root.appendingPathComponent("docs/experiment.schema.json").path)
        #expect(schema.check(e.json) == [])
        #expect(e.cells.count == 4)
    }
}

/// A deep document is refused with its line, not read until the stack runs out (3,000 nested
/// mappings ended the process; a line of brackets took time as its square, then the stack).
@Suite("YAML nesting has a bound")
struct YAMLDepthTests {
    func message(_ yaml: String) -> String {
        do { _ = try Fixture.load(yaml, file: "deep.yaml"); return "" } catch { return error.description }
    }

    @Test func nestedMappingsAndSequencesStopAtTheBound() {
        let mappings = (0..<300).map { String(repeating: " ", count: $0) + "a:" }.joined(separator: "\n")
        #expect(message(mappings).contains("deep.yaml:257:257: error: nesting deeper than 256 levels"))
        // `- a:` under `a:` at the same indentation: a sequence, then a mapping, each level.
        let sequences = "a:\n" + (0..<300).map { String(repeating: " ", count: 2 * $0) + "- a:" }.joined(separator: "\n")
        #expect(message(sequences).contains("nesting deeper than 256 levels"))
    }

    @Test func aLineOfBracketsStopsAtTheBound() {
        let clock = ContinuousClock()
        var said = ""
        let took = clock.measure { said = message("name: " + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)) }
        #expect(said.contains("deep.yaml:1:23: error: lists nested deeper than 16 levels"))
        #expect(took < .seconds(10), "\(took)")
    }
}

@Suite("YAML is read in time that grows with the file")
struct YAMLSizeTests {
    @Test func aMappingOfFiftyThousandKeysIsReadInSeconds() {
        let yaml = "name: wide\n" + (0..<50_000).map { "k\($0): 0" }.joined(separator: "\n") + "\nname: again\n"
        var said = ""
        let took = ContinuousClock().measure {
            do { _ = try Fixture.load(yaml, file: "wide.yaml") } catch { said = "\(error)" }
        }
        #expect(took < .seconds(10), "\(took)")
        #expect(said.contains("wide.yaml:50002:1: error: a second \"name\""))
    }
}
