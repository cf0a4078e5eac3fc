import Foundation
import Testing

extension TestBroker {
    /// The first audit record `matching`, waiting up to `timeout` seconds for it to be written;
    /// nil, and the test fails with the records there are, when none comes.
    public func auditRecord(within timeout: Double = 10, sourceLocation: SourceLocation = #_sourceLocation,
                            matching: ([String: Any]) -> Bool) -> [String: Any]? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        repeat {
            if let r = auditRecords.first(where: matching) { return r }
            usleep(20_000)
        } while Date() < deadline
        Issue.record("no such audit record within \(timeout) s; the audit has \(auditRecords)", sourceLocation: sourceLocation)
        return nil
    }
}
