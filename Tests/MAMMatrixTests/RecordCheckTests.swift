import MAMMatrix
import MAMPolicy
import MAMScript
import Testing

/// The broker's record of a cell's decision, decoded from its log line and held field by field
/// against what the app was told and the prediction's parties.
@Suite("The broker's record of a cell")
struct RecordCheckTests {
    static let mail = "com.contoso.mail", docs = "com.contoso.docs"

    static func line(channel: String = "paste", outcome: String = "allowed", rule: String = "4.3.3", ruleName: String = "pasteInAllowed",
                     source: String = mail, sourceManaged: Bool = true, target: String = docs, targetManaged: Bool = true) -> String {
        #"{"channel":"\#(channel)","decidedAt":"Sources/MAMPolicy/Decisions/Pasteboard.swift:56","id":63,"outcome":"\#(outcome)","request":12,"revision":1,"rule":"\#(rule)","ruleName":"\#(ruleName)","session":2,"size":28,"source":{"app":"\#(source)","identity":"adele@contoso.com","managed":\#(sourceManaged)},"tag":"doc","target":{"app":"\#(target)","identity":"adele@contoso.com","managed":\#(targetManaged)},"time":"2026-11-29T03:59:27.456Z","type":"public.utf8-plain-text"}"#
    }

    static func record(_ line: String) throws -> BrokerRecord { try BrokerRecord(line: Array(line.utf8)) }

    static func result(_ channel: ChannelSpec = ChannelSpec(.paste), orgData: Bool = true, targetManaged: Bool? = true) -> CellResult {
        let cell = Cell(id: 1, policy: "p", channel: channel, source: PartySpec(name: "Mail", app: "Mail"), target: PartySpec(name: "Docs", app: "Docs"))
        return CellResult(cell: cell, predicted: Verdict(outcome: .allowed, rule: "4.3.3"), orgData: orgData, targetManaged: targetManaged)
    }

    static let told: JSONValue = ["outcome": "allowed", "rule": "4.3.3", "ruleName": "pasteInAllowed"]

    @Test func aLineDecodesIntoEveryField() throws {
        let r = try Self.record(Self.line())
        #expect(r.id == 63 && r.channel == "paste" && r.outcome == "allowed" && r.rule == "4.3.3" && r.ruleName == "pasteInAllowed")
        #expect(r.source == BrokerRecord.Party(app: Self.mail, identity: "adele@contoso.com", managed: true))
        #expect(r.target?.app == Self.docs && r.revision == 1 && r.tag == "doc")
    }

    @Test(arguments: [
        (#"{"channel":"paste"}"#, "source"),
        (#"{"channel":"paste","id":1,"outcome":"allowed","revision":1,"rule":"4","tag":"doc","source":{"app":"a","identity":"","managed":"yes"}}"#, "source.managed"),
        (#"{"channel":"paste","id":-1,"outcome":"allowed","revision":1,"rule":"4","tag":"doc","source":{"app":"a","identity":"","managed":true}}"#, "id"),
        (#"{"channel":"paste","id":1,"outcome":"allowed","revision":1,"rule":"4","ruleName":7,"tag":"doc","source":{"app":"a","identity":"","managed":true}}"#, "ruleName"),
        ("not json", "not JSON"),
    ])
    func aLineThatIsNotARecordSaysWhichKey(line: String, key: String) {
        #expect { try Self.record(line) } throws: { "\($0)".contains(key) }
    }

    @Test func aRecordThatMatchesHasNothingToSay() throws {
        let problems = RecordCheck.disagreements(Self.result(), told: Self.told, source: Self.mail, target: Self.docs, records: [try Self.record(Self.line())])
        #expect(problems.isEmpty)
    }

    @Test func eachFieldThatDiffersIsNamed() throws {
        let wrong = try Self.record(Self.line(outcome: "blocked", rule: "4.3.1", ruleName: "pasteOrgNotManagedTarget", sourceManaged: false, targetManaged: false))
        let problems = RecordCheck.disagreements(Self.result(), told: Self.told, source: Self.mail, target: Self.docs, records: [wrong])
        #expect(problems == [
            "outcome: the broker's record says blocked, the app was told allowed",
            "rule: the broker's record says 4.3.1, the app was told 4.3.3",
            "ruleName: the broker's record says pasteOrgNotManagedTarget, the app was told pasteInAllowed",
            "source managed: the broker's record says false, the prediction has true",
            "target managed: the broker's record says false, the prediction has true",
        ])
        var failed = Self.result()
        failed.live = Verdict(outcome: .allowed, rule: "4.3.3")
        #expect(failed.passed)
        failed.live?.recordDisagreements = problems
        #expect(!failed.passed, "a record that disagrees fails the cell")
    }

    @Test func aDecisionWithNoRecordFailsAndTheCellsOfOtherAppsAreNotItsRecord() throws {
        let other = try Self.record(Self.line(source: "com.contoso.notes"))
        #expect(RecordCheck.disagreements(Self.result(), told: Self.told, source: Self.mail, target: Self.docs, records: [other])
            == ["the broker wrote no paste record of the decision the app was told (allowed)"])
        #expect(RecordCheck.disagreements(Self.result(), told: nil, source: Self.mail, target: Self.docs, records: []).isEmpty,
                "no decision told: nothing to hold the record against")
    }

    @Test func aDocumentTheBrokerSentElsewhereIsNamed() throws {
        let elsewhere = try Self.record(Self.line(channel: "open-in", target: "com.contoso.notes"))
        let problems = RecordCheck.disagreements(Self.result(ChannelSpec(.openIn)), told: Self.told, source: Self.mail, target: Self.docs, records: [elsewhere])
        #expect(problems == ["target: the broker's record says com.contoso.notes, the cell's target is com.contoso.docs"])
    }

    /// An open from a location whose save was refused opened nothing: the save's record decided.
    @Test func anOpenFromARefusedSaveIsJudgedByTheSavesRecord() throws {
        let save = try Self.record(Self.line(channel: "save-to", outcome: "blocked", rule: "4.6.save", ruleName: "saveLocationNotAllowed",
                                             target: "location:dropbox", targetManaged: false))
        let told: JSONValue = ["outcome": "blocked", "rule": "4.6.save", "ruleName": "saveLocationNotAllowed"]
        let cell = Self.result(ChannelSpec(.openFrom, location: "dropbox"))
        #expect(RecordCheck.record(for: .openFrom, source: Self.mail, target: Self.docs, in: [save]) == save)
        #expect(RecordCheck.disagreements(cell, told: told, source: Self.mail, target: Self.docs, records: [save]).isEmpty)
    }
}
