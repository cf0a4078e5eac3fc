import Foundation
import MAMPolicy
import Testing

/// `mamlaunch device set`'s change, as the broker reads it: hostile text from a control
/// connection, applied whole or not at all.
@Suite("A change to the running device")
struct DeviceChangeTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func eachKeyChangesItsFieldAndTheOthersStay() throws {
        var base = DeviceProfile.standard
        base.biometrics = true
        let changed = try DeviceChange.apply(#"{"os": "12.4.5", "jailbroken": true, "threatLevel": "high", "offlineFor": 721}"#, to: base, now: now).get()
        #expect(changed.os == Version("12.4.5") && changed.jailbroken && changed.threatLevel == .high)
        #expect(changed.model == base.model && changed.biometrics && changed.passcode)
        #expect(changed.minutesOffline(at: now) == 721)
        // Online again: offlineFor 0.
        #expect(try DeviceChange.apply(#"{"offlineFor": 0}"#, to: changed, now: now).get().offlineSince == nil)
        // Nothing asked, nothing changed.
        #expect(try DeviceChange.apply("{}", to: changed, now: now).get() == changed)
    }

    @Test(arguments: [
        (#"{"jailbroke": true}"#, #"unknown device key "jailbroke"; did you mean "jailbroken"?"#),
        (#"{"os": "twelve"}"#, #""twelve" is not an OS version"#),
        (#"{"offlineFor": -5}"#, "expected an integer ≥ 0"),
        (#"{"offlineFor": 99999999}"#, "more than ten years"),
        (#"{"threatLevel": "notConfigured"}"#, "secured, low, medium or high"),
        (#"{"offlineSince": "2026-01-01T00:00:00Z"}"#, #"unknown device key "offlineSince""#),
        (#"["os"]"#, "expected an object"),
        (#"{"os": "17.0""#, "1:"),
    ])
    func aBadChangeIsRefusedWholeAndSaysWhere(_ text: String, _ expected: String) {
        switch DeviceChange.apply(text, to: .standard, now: now) {
        case .success: Issue.record("\(text) was taken")
        case let .failure(problems): #expect(problems.description.contains(expected), "\(problems)")
        }
    }
}
