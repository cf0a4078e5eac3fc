import Foundation
@testable import MAMKit
import Testing

/// The registered accounts' list: an enrollment notice handled across an await (its policy
/// refreshed) must not register again an account the app unenrolled meanwhile. Under load the
/// launch's enrollment notice was read after the app's own unenrollment, and a relaunched app
/// listed the account it had unenrolled.
@Suite struct RegisteredListTests {
    @Test("an account removed after the mark is not added back; one removed before it, or another account, is")
    func aRemovalAfterTheMarkWins() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mamkit-registered-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let list = RegisteredAccounts(directory: dir)
        #expect(list.add("adele@contoso.com"))
        let mark = list.mark
        list.remove(["Adele@Contoso.com"])
        #expect(!list.add("adele@contoso.com", unlessRemovedSince: mark), "unenrolled while the notice was handled")
        #expect(list.all.isEmpty)
        #expect(list.add("ben@contoso.com", unlessRemovedSince: mark), "another account's removal says nothing of this one")
        #expect(list.add("adele@contoso.com", unlessRemovedSince: list.mark), "a notice read after the removal registers")
        #expect(RegisteredAccounts(directory: dir).all == ["ben@contoso.com", "adele@contoso.com"], "the list on disk")
    }
}
