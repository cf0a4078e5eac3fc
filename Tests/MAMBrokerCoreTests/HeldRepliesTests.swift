@testable import MAMBroker
import MAMBrokerCore
import MAMWire
import Testing

/// The bookkeeping of replies that wait for state writes: a reply goes once its write and every
/// earlier one are done, a connection's replies keep their order, and other connections wait
/// for nothing.
@Suite("Replies held for state writes")
struct HeldRepliesTests {
    static func ids(_ released: [(SessionID, HeldReplies.Item)]) -> [String] {
        released.map { session, item in
            switch item {
            case let .frame(f, _): return "\(session.raw):\(f.id)"
            case .close: return "\(session.raw):close"
            }
        }
    }

    @Test func aReplyWaitsForItsWriteAndEveryEarlierOne() {
        var held = HeldReplies()
        let (a, b, c) = (SessionID(1), SessionID(2), SessionID(3))
        let first = held.issue(), second = held.issue(), third = held.issue()
        #expect(held.mustWait(c, turnWrite: nil) == nil, "a connection with nothing held waits for nothing")
        held.hold(.frame(Frame(id: 1, .paste), descriptor: nil), for: a, until: first)
        held.hold(.frame(Frame(id: 2, .paste), descriptor: nil), for: b, until: third)
        // A's next reply, from a later turn that wrote nothing, still waits behind its first.
        #expect(held.mustWait(a, turnWrite: nil) == first)
        held.hold(.frame(Frame(id: 3, .paste), descriptor: nil), for: a, until: first)
        held.hold(.close(reason: "bye"), for: a, until: first)
        // Writes finish out of order (the coalesced enrollments before an earlier key's destruction).
        #expect(held.finish([third]).isEmpty)
        #expect(held.finish([second]).isEmpty)
        #expect(Self.ids(held.finish([first])) == ["1:1", "2:2", "1:3", "1:close"])
        #expect(held.isEmpty)
        #expect(held.mustWait(a, turnWrite: nil) == nil && held.mustWait(b, turnWrite: nil) == nil)
    }

    @Test func onlyTheWritesDoneReleaseTheirReplies() {
        var held = HeldReplies()
        let (a, b) = (SessionID(1), SessionID(2))
        let first = held.issue()
        held.hold(.frame(Frame(id: 1, .paste), descriptor: nil), for: a, until: first)
        let second = held.issue()
        held.hold(.frame(Frame(id: 2, .paste), descriptor: nil), for: b, until: second)
        #expect(Self.ids(held.finish([first])) == ["1:1"])
        #expect(held.mustWait(b, turnWrite: nil) == second)
        #expect(Self.ids(held.finish([second])) == ["2:2"])
    }
}
