import MAMBrokerCore
import MAMPolicy
import MAMWire
import Testing

/// The wire's outcome byte and the engine's outcome are one table: a new outcome added to one
/// and not the other, or the two in another order, fails here.
@Suite("The wire's outcomes are the engine's")
struct WireOutcomeTests {
    @Test func eachOutcomeTravelsAsItsOwnByteAndName() {
        #expect(WireOutcome.allCases.map(\.name) == Outcome.allCases.map(\.rawValue))
        for o in Outcome.allCases { #expect(BrokerCore.wireOutcome(o).name == o.rawValue) }
        #expect(DecisionRecord.outcomes == 0...UInt8(Outcome.allCases.count - 1))
        #expect(WireOutcome.name(of: 9) == "outcome 9")
    }
}
