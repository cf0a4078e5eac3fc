import Foundation

/// The phone the apps run on, as far as a policy's launch checks look at it (docs/SEMANTICS.md
/// §9): its OS release, model, whether it is jailbroken, its threat level, its own lock, and
/// since when it has been offline. Given in the tenant file's `device` object; the broker holds
/// it and `mamlaunch device set` changes it while apps run.
public struct DeviceProfile: Sendable, Hashable, Codable {
    /// The iOS release.
    public var os: Version
    /// The model identifier iOS reports (`iPhone14,5`), matched against a policy's allowed models.
    public var model: String
    public var jailbroken = false
    /// What the device's threat defence partner reports; `secured` when none is installed.
    public var threatLevel: ThreatLevel = .secured
    /// Face ID or Touch ID is set up.
    public var biometrics = false
    /// The device has a passcode of its own.
    public var passcode = true
    /// When the device last reached the service; nil: online now. Measured on the broker's clock.
    public var offlineSince: Date?

    /// A current iPhone, online, not jailbroken: what a profile starts from.
    public static let standard = DeviceProfile(os: Version("17.5")!, model: "iPhone15,2")

    public init(os: Version, model: String, jailbroken: Bool = false, threatLevel: ThreatLevel = .secured,
                biometrics: Bool = false, passcode: Bool = true, offlineSince: Date? = nil) {
        self.os = os
        self.model = model
        self.jailbroken = jailbroken
        self.threatLevel = threatLevel
        self.biometrics = biometrics
        self.passcode = passcode
        self.offlineSince = offlineSince
    }

    /// The profile in one line, as a report's header names it.
    public var summary: String {
        let offline = offlineSince.map { "offline since \(Self.text($0))" } ?? "online"
        return "iOS \(os) on \(model); \(jailbroken ? "jailbroken" : "not jailbroken"); threat level \(threatLevel.rawValue); "
            + "\(passcode ? "passcode set" : "no passcode"); \(biometrics ? "Face ID or Touch ID set up" : "no biometrics"); \(offline)"
    }

    /// Whole minutes offline at `now` (0 when online, or when `offlineSince` is later than now).
    public func minutesOffline(at now: Date) -> Int {
        guard let since = offlineSince else { return 0 }
        return max(0, Int(now.timeIntervalSince(since) / 60))
    }

    /// A time as the tenant file and `mamlaunch device set` write it (ISO 8601, UTC or an offset).
    public static func date(_ text: String) -> Date? {
        let f = ISO8601DateFormatter()
        if let d = f.date(from: text) { return d }
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.date(from: text)
    }

    public static func text(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }

    /// The profile's keys in the tenant file's `device` object and in `mamlaunch device set`.
    public static let keys = ["os", "model", "jailbroken", "threatLevel", "biometrics", "passcode", "offlineSince"]
}
