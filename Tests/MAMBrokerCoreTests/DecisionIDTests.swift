import Dispatch
import Foundation
@testable import MAMBroker
import Testing

/// Decision ids come from blocks reserved in the state database, the next one reserved ahead on
/// the persistence queue: never reused, also after a restart, and always rising.
@Suite("Decision ids are reserved ahead")
struct DecisionIDTests {
    @Test func idsRiseAcrossBlocksReservedAheadAndAfterARestart() throws {
        let folder = "/tmp/mamlab-ids-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let queue = DispatchQueue(label: "test.state")
        var ids: [UInt64] = []
        do {
            let store = try StateStore(path: folder + "/state.sqlite")
            store.reserveAhead = queue
            // Three blocks and more; now and then the queue is let finish, now and then not.
            for i in 0..<(3 * Int(StateStore.block) + 100) {
                ids.append(try store.nextDecisionID())
                if i % 1500 == 0 { queue.sync {} }
            }
            queue.sync {}
        }
        #expect(zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 }, "ids rise")
        let store = try StateStore(path: folder + "/state.sqlite")
        let after = try store.nextDecisionID()
        #expect(after > ids.last!, "a restarted store starts past every id handed out: \(after) after \(ids.last!)")
    }
}
