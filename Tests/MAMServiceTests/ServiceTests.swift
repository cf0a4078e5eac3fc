import MAMService
import Testing

@Suite("MAMService")
struct ServiceTests {
    @Test func theSeedsIntervals() {
        // Seed 000 FAQ: retried every 24 hours, checked in every 8.
        #expect(MAMService.enrollmentRetry == .seconds(86_400))
        #expect(MAMService.checkInInterval == .seconds(28_800))
    }
}
