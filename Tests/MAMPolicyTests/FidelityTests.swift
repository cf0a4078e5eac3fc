import MAMPolicy
import Testing

/// Statements of the seeds and references that an audit found the engine disagreeing with, one
/// row per statement, each naming its source.
@Suite("Fidelity: clipboard length and the import channel")
struct FidelityTests {
    // docs/SEMANTICS.md §4.3 [chosen, to match iOS's NSString.length]: the character limit
    // counts UTF-16 code units, so a character outside the Basic Multilingual Plane counts 2.
    struct LengthRow: Sendable, CustomTestStringConvertible {
        var text: String
        var limit: Int
        var expected: Outcome
        var testDescription: String { "\(text.debugDescription) (\(text.utf16.count) UTF-16 units) against limit \(limit)" }
    }

    static let lengthRows: [LengthRow] = [
        LengthRow(text: "ab😀", limit: 4, expected: .allowed),     // 4 units: at the limit
        LengthRow(text: "abc😀", limit: 4, expected: .blocked),    // 5 units, 4 scalars: one past
        LengthRow(text: "😀😀", limit: 4, expected: .allowed),     // 4 units, 2 scalars
        LengthRow(text: "😀😀a", limit: 4, expected: .blocked),    // 5 units, 3 scalars
        LengthRow(text: "👩‍💻", limit: 5, expected: .allowed),       // a ZWJ sequence: 5 units, 1 grapheme
        LengthRow(text: "👩‍💻", limit: 4, expected: .blocked),
        LengthRow(text: "abcd", limit: 4, expected: .allowed),
        LengthRow(text: "abcde", limit: 4, expected: .blocked),
    ]

    @Test(arguments: lengthRows)
    func characterLimitCountsUTF16CodeUnits(_ row: LengthRow) {
        let lab = Lab(settings: .with { $0.clipboard = .blocked; $0.clipboardExceptionLength = row.limit })
        let d = lab.engine.paste(PasteboardItem(source: lab.party("mail", Lab.adele), text: row.text), into: lab.party("notes"))
        #expect(d.outcome == row.expected, "\(d)")
        #expect(d.rule == (row.expected == .allowed ? .pasteUnderCharacterLimit : .pasteOrgBlocked))
    }

    // seed 002 §Exit criteria, "Unmanaged identity import from managed app": blocked. The
    // admin reference's encrypted delivery is for a document the sender hands over (Open-in,
    // share), not for one an unmanaged app pulls. Both channels, one engine answer each.
    struct ImportRow: Sendable, CustomTestStringConvertible {
        var statement: String
        var importer: String
        var importerIdentity: String?
        var expected: Outcome
        var testDescription: String { statement }
    }

    static let importRows: [ImportRow] = [
        ImportRow(statement: "seed 002 §Exit criteria: unmanaged app imports a managed document → blocked",
                  importer: "notes", importerIdentity: nil, expected: .blocked),
        ImportRow(statement: "seed 002 §Exit criteria: unmanaged identity imports from managed app → blocked",
                  importer: "mail", importerIdentity: "personal", expected: .blocked),
        ImportRow(statement: "seed 002 §Exit criteria: managed identity imports from managed app → allowed",
                  importer: "mail", importerIdentity: Lab.adele, expected: .allowed),
    ]

    @Test(arguments: importRows)
    func anImportedDocumentGetsTheImportAnswer(_ row: ImportRow) {
        for filter in [false, true] {
            let lab = Lab(settings: .with { $0.send = .managedApps; $0.receive = .managedApps; $0.filterOpenInToOnlyManagedApps = filter })
            let importer = lab.party(row.importer, row.importerIdentity, alsoPersonal: row.importer == "mail")
            let document = lab.engine.openIn(type: "com.adobe.pdf", from: lab.party("docs", Lab.adele), to: importer, mode: .import)
            let data = lab.engine.transfer(from: lab.party("docs", Lab.adele), to: importer, mode: .import)
            #expect(document.outcome == row.expected, "open-in import, filter \(filter): \(document)")
            #expect(data.outcome == row.expected, "data import: \(data)")
            #expect(document.rule == data.rule, "one rule for both kinds: \(document.rule) vs \(data.rule)")
        }
    }

    // admin, "Policy managed apps": a document pushed to an unmanaged app through Open-in
    // still arrives, encrypted. The push is unchanged by the import fix.
    @Test func aPushedDocumentToAnUnmanagedAppStillArrivesEncrypted() {
        let lab = Lab(settings: .managedOnly)
        let d = lab.engine.openIn(type: "com.adobe.pdf", from: lab.party("mail", Lab.adele), to: lab.party("notes"))
        #expect(d.outcome == .encrypted && d.rule == .sendOpenInEncrypted && d.source == .admin)
    }
}
