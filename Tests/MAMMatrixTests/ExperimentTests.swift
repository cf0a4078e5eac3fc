import Foundation
import MAMMatrix
import MAMPolicy
import MAMScript
import Testing

@Suite("Experiments: loader, schema, built-ins")
struct ExperimentTests {
    let schema = try! SchemaChecker(file: Fixture.root.appendingPathComponent("docs/experiment.schema.json").path)

    @Test("every built-in, written out, conforms to docs/experiment.schema.json and loads back the same", arguments: BuiltIn.names)
    func builtInConforms(_ name: String) throws {
        let e = BuiltIn.experiment(named: name)!
        #expect(schema.check(e.json) == [])
        let again = try Fixture.load(e.json.json)
        #expect(again == e)
    }

    @Test func examplesConformAndLoad() throws {
        let folder = Fixture.root.appendingPathComponent("docs/examples")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }
        #expect(!files.isEmpty)
        for f in files {
            let data = try Data(contentsOf: folder.appendingPathComponent(f))
            #expect(schema.check(try JSONValue.parse(data)) == [], "\(f)")
            _ = try ExperimentFile.load(data, file: f, knownApp: Fixture.knownApp)
        }
    }

    @Test func theSchemaCheckerRejectsWhatTheLoaderRejects() throws {
        // The checker can fail: an unknown key and a wrong channel.
        let bad: JSONValue = ["parties": [["name": "A", "app": "Mail", "colour": "red"]], "channels": ["teleport"]]
        let problems = schema.check(bad)
        #expect(problems.contains { $0.contains("unexpected key colour") })
        #expect(problems.contains { $0.contains("teleport") })
    }

    @Test func errorsNameFileKeyPathAndReason() {
        let json = """
            {"name": "x", "parties": [{"name": "A", "app": "Mail", "accounts": ["adele@contoso.com"], "identity": "ben@contoso.com"},
                                      {"name": "B", "app": "Nope"}],
             "channels": ["paste", "save-to moon", "open-from sharePoint"],
             "cells": [{"channel": "paste", "source": "A", "target": "C", "expect": {"outcome": "maybe"}}],
             "colour": 1}
            """
        do {
            _ = try Fixture.load(json, file: "exp.json")
            Issue.record("loaded an invalid experiment")
        } catch {
            let text = error.description
            #expect(text.contains("exp.json:1:"))
            #expect(text.contains("$.parties[0].identity: the identity \"ben@contoso.com\" is not signed in"))
            #expect(text.contains("$.parties[1].app: unknown app \"Nope\""))
            #expect(text.contains("$.channels[1]: unknown save location \"moon\""))
            #expect(text.contains("$.channels[2]: sharePoint belongs to an account"))
            #expect(text.contains("$.cells[0].target: no party named \"C\""))
            #expect(text.contains("$.cells[0].expect.outcome: unknown value \"maybe\""))
            #expect(text.contains("$.colour: unknown key \"colour\""))
        }
    }

    // seed 000 §Unknown or unlisted locations: `other` may name the service's account; the
    // local drive never takes one.
    @Test func otherMayNameAnAccountAndTheLocalDriveMayNot() throws {
        let ok = """
            {"name": "x", "parties": [{"name": "A", "app": "Mail", "accounts": ["adele@contoso.com"]}],
             "channels": ["save-to other:adele@contoso.com", "open-from other:dana@dropbox.example"]}
            """
        #expect(throws: Never.self) { _ = try Fixture.load(ok, file: "ok.json") }
        let bad = """
            {"name": "x", "parties": [{"name": "A", "app": "Mail", "accounts": ["adele@contoso.com"]}],
             "channels": ["save-to localDrive:adele@contoso.com"]}
            """
        do {
            _ = try Fixture.load(bad, file: "bad.json")
            Issue.record("loaded an account for the local drive")
        } catch {
            #expect(error.description.contains("$.channels[0]: localDrive takes no account"), "\(error.description)")
        }
    }

    @Test func defaultPlanPairsAppsAndAccountsOfOneAppAndSkipsAccountsAPartyLacks() {
        let cells = Plan.cells(BuiltIn.default, bundleID: Fixture.bundleID, handles: Fixture.handles)
        #expect(cells.count == 1107)
        // Mail's two accounts are tried against each other, on every channel but open-url; a
        // party is never its own target.
        let sameApp = cells.filter { c in c.target.map { Fixture.bundleID($0.app) == Fixture.bundleID(c.source.app) } ?? false }
        #expect(Set(sameApp.map { "\($0.source.name)→\($0.target!.name)" }) == ["Mail (adele)→Mail (personal)", "Mail (personal)→Mail (adele)"])
        #expect(Set(sameApp.map(\.channel.channel)) == [.openIn, .import, .paste, .openFrom])
        #expect(!cells.contains { $0.target?.name == $0.source.name })
        // Notes has no account: it never saves to adele's OneDrive.
        #expect(!cells.contains { $0.source.name == "Notes" && $0.channel.location?.contains("adele") == true })
        #expect(Set(cells.map(\.id)).count == cells.count)
    }

    @Test("a written cell that repeats a generated one is that cell, with its expectation: no doubled square")
    func aWrittenCellRepeatingAGeneratedOneIsNotDoubled() throws {
        let json = """
            {"parties": [{"name": "Mail", "app": "Mail", "accounts": ["adele@contoso.com"]}, {"name": "Notes", "app": "Notes"}],
             "channels": ["paste"], "policies": ["tenant"],
             "cells": [{"label": "org text to Notes", "channel": "paste", "source": "Mail", "target": "Notes", "expect": {"outcome": "blocked"}}]}
            """
        let e = try ExperimentFile.load(Data(json.utf8), file: "x.json", knownApp: Fixture.knownApp)
        let cells = Plan.cells(e, bundleID: Fixture.bundleID, handles: Fixture.handles)
        #expect(cells.count == 2)
        let toNotes = cells.filter { $0.source.name == "Mail" && $0.target?.name == "Notes" }
        #expect(toNotes.count == 1)
        #expect(toNotes.first?.label == "org text to Notes" && toNotes.first?.expect?.outcomes == [.blocked])
    }
}
