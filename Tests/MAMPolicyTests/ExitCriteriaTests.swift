import MAMPolicy
import Testing

/// Seed 002's data-sharing exit criteria (Stage 5, multi-identity): Send = Receive = "Policy
/// managed apps"; "your app" is the multi-identity Mail with the managed and a personal account
/// signed in; the other managed app (Docs) has the managed account only; Notes has no SDK.
@Suite("Seed 002 data-sharing exit criteria")
struct ExitCriteriaTests {
    let lab = Lab(settings: .managedOnly)

    struct Cell: CustomTestStringConvertible, Sendable {
        var row: String
        var from: (app: String, identity: String?, alsoPersonal: Bool)
        var to: (app: String, identity: String?, alsoPersonal: Bool)
        var mode: TransferMode
        var expected: Outcome
        var receivedAs: String?
        var testDescription: String { row }
    }

    static let cells: [Cell] = [
        // Send table: Mail is the sender.
        Cell(row: "Managed identity send to unmanaged app: blocked",
             from: ("mail", Lab.adele, true), to: ("notes", nil, false), mode: .push, expected: .blocked),
        Cell(row: "Managed identity send to managed app: allowed",
             from: ("mail", Lab.adele, true), to: ("docs", Lab.adele, false), mode: .push, expected: .allowed),
        Cell(row: "Unmanaged identity send to managed app: blocked",
             from: ("mail", "personal", true), to: ("docs", Lab.adele, false), mode: .push, expected: .blocked),
        Cell(row: "Unmanaged identity send to unmanaged app: always allowed",
             from: ("mail", "personal", true), to: ("notes", nil, false), mode: .push, expected: .allowed),
        // Import table: Mail pulls.
        Cell(row: "Managed identity import from unmanaged app: blocked",
             from: ("notes", nil, false), to: ("mail", Lab.adele, true), mode: .import, expected: .blocked),
        Cell(row: "Managed identity import from managed app: allowed",
             from: ("docs", Lab.adele, false), to: ("mail", Lab.adele, true), mode: .import, expected: .allowed),
        Cell(row: "Unmanaged identity import from managed app: blocked",
             from: ("docs", Lab.adele, false), to: ("mail", "personal", true), mode: .import, expected: .blocked),
        Cell(row: "Unmanaged identity import from unmanaged app: always allowed",
             from: ("notes", nil, false), to: ("mail", "personal", true), mode: .import, expected: .allowed),
        // Passive receive table: the other app pushes to Mail.
        Cell(row: "Managed identity receive from unmanaged app: the managed account does not receive it",
             from: ("notes", nil, false), to: ("mail", Lab.adele, true), mode: .push, expected: .switched, receivedAs: "personal"),
        Cell(row: "Managed identity receive from managed app: allowed",
             from: ("docs", Lab.adele, false), to: ("mail", Lab.adele, true), mode: .push, expected: .allowed),
        Cell(row: "Unmanaged identity receive from managed app: the personal account does not receive it",
             from: ("docs", Lab.adele, false), to: ("mail", "personal", true), mode: .push, expected: .switched, receivedAs: Lab.adele),
        Cell(row: "Unmanaged identity receive from unmanaged app: always allowed",
             from: ("notes", nil, false), to: ("mail", "personal", true), mode: .push, expected: .allowed),
    ]

    @Test("table cell", arguments: cells)
    func cell(_ c: Cell) {
        let from = lab.party(c.from.app, c.from.identity, alsoPersonal: c.from.alsoPersonal)
        let to = lab.party(c.to.app, c.to.identity, alsoPersonal: c.to.alsoPersonal)
        let d = lab.engine.transfer(from: from, to: to, mode: c.mode)
        #expect(d.outcome == c.expected, "\(c.row): got \(d)")
        if let name = c.receivedAs {
            #expect(d.receivingIdentity == lab.engine.tenant.identity(named: name))
        }
    }

    @Test func managedReceiverWithoutPersonalAccountBlocksUnmanagedData() {
        // The same passive receive when Mail has only the managed account: nothing to switch to.
        let d = lab.engine.transfer(from: lab.party("notes"), to: lab.party("mail", Lab.adele), mode: .push)
        #expect(d.outcome == .blocked)
        #expect(d.rule == .receiveManagedBlocked)
        #expect(d.message == UserMessage.receiveManaged)
    }
}
