import Foundation

/// A change to a running device (`mamlaunch device set`, the launcher's `setDevice`): a JSON
/// object of the tenant file's `device` profile keys (DeviceProfile.keys) to change, where
/// `offlineFor` (whole minutes, 0 for online) stands for `offlineSince`, since only the broker
/// knows its own clock's time. The text comes from a control connection: it is checked as any
/// input is, and a change with a problem changes nothing.
public enum DeviceChange {
    /// The keys a change may carry.
    public static let keys = DeviceProfile.keys.filter { $0 != "offlineSince" } + ["offlineFor"]

    /// Longer than any grace period a policy can set (Graph's durations stop well short).
    public static let maximumOfflineMinutes = 10 * 365 * 1440

    /// Every problem found in a change.
    public struct Problems: Error, CustomStringConvertible {
        public var diagnostics: [Diagnostic]
        public var description: String { diagnostics.map(\.description).joined(separator: "; ") }
    }

    /// `base` with the change applied at `now`, or every problem found in it.
    public static func apply(_ text: String, to base: DeviceProfile, now: Date) -> Result<DeviceProfile, Problems> {
        var log = DiagnosticLog()
        let node: Node
        do { node = try JSONParser.parse(Data(text.utf8)) } catch {
            log.append(Diagnostic(.error, file: "device change", path: "$", position: error.position, message: error.message))
            return .failure(Problems(diagnostics: log.items))
        }
        let change = Located(node, path: "$", file: "device change")
        guard let pairs = change.object(&log) else { return .failure(Problems(diagnostics: log.items)) }
        for (key, value) in pairs where !keys.contains(key) {
            let hint = NearestName.nearest(to: key, in: keys).map { "; did you mean \"\($0)\"?" } ?? "; the keys are \(keys.joined(separator: ", "))"
            log.append(value.problem("unknown device key \"\(key)\"\(hint)"))
        }
        var profile = TenantFile.readProfile(change, base: base, &log)
        if let v = change.member("offlineFor"), let minutes = v.integer(&log, minimum: 0) {
            if minutes > maximumOfflineMinutes {
                log.append(v.problem("\(minutes) minutes is more than ten years; write at most \(maximumOfflineMinutes)"))
            } else {
                profile.offlineSince = minutes == 0 ? nil : now.addingTimeInterval(-Double(minutes) * 60)
            }
        }
        return log.hasErrors ? .failure(Problems(diagnostics: log.items.filter { $0.severity == .error })) : .success(profile)
    }
}
