import ArgumentParser
import Foundation
import MAMPolicy

/// The phone a launch check runs on: the tenant file's `device` profile (docs/POLICIES.md),
/// each flag given changing one of its fields. Shared by the commands that check a launch.
struct DeviceOptions: ParsableArguments {
    @Option(name: .customLong("os"), help: ArgumentHelp("The device's iOS release.", valueName: "VERSION"))
    var os: String?

    @Option(help: ArgumentHelp("The device's model identifier, as iOS reports it.", valueName: "MODEL"))
    var model: String?

    @Flag(inversion: .prefixedNo, help: "The device is jailbroken.")
    var jailbroken: Bool?

    @Option(help: ArgumentHelp("What the device's threat defence partner reports.", valueName: "secured|low|medium|high"))
    var threatLevel: String?

    @Flag(inversion: .prefixedNo, help: "Face ID or Touch ID is set up on the device.")
    var biometrics: Bool?

    @Flag(inversion: .prefixedNo, help: "The device has a passcode of its own.")
    var passcode: Bool?

    @Option(help: ArgumentHelp("How long the device has been offline: 12h1m, 90d, 45m, or ISO 8601 (PT12H1M); 0 is online.", valueName: "DURATION"))
    var offline: String?

    /// The flags given, as a device change's keys (DeviceChange): what `device set` sends. Call
    /// after `apply` has checked them.
    func change() throws -> [String: Any] {
        var out: [String: Any] = [:]
        if let os { out["os"] = os }
        if let model { out["model"] = model }
        if let jailbroken { out["jailbroken"] = jailbroken }
        if let threatLevel { out["threatLevel"] = threatLevel }
        if let biometrics { out["biometrics"] = biometrics }
        if let passcode { out["passcode"] = passcode }
        if let offline {
            guard let minutes = Self.minutes(offline) else { throw ValidationError("--offline \(offline): not a duration; expected 12h1m, 90d, 45m or ISO 8601 such as PT12H1M") }
            out["offlineFor"] = minutes
        }
        return out
    }

    /// The tenant's profile with the flags applied; `now` is when the check runs (an offline
    /// duration counts back from it).
    func apply(to base: DeviceProfile, now: Date) throws -> DeviceProfile {
        var p = base
        if let os {
            guard let v = Version(os) else { throw ValidationError("--os \(os): not a version; expected numbers joined by dots, such as 17.5 or 12.4.4") }
            p.os = v
        }
        if let model {
            guard !model.isEmpty, model.utf8.count <= 64 else { throw ValidationError("--model: 1 to 64 characters, such as iPhone15,2") }
            p.model = model
        }
        if let jailbroken { p.jailbroken = jailbroken }
        if let biometrics { p.biometrics = biometrics }
        if let passcode { p.passcode = passcode }
        if let threatLevel {
            guard let t = ThreatLevel(rawValue: threatLevel), t != .notConfigured else {
                throw ValidationError("--threat-level \(threatLevel): expected secured, low, medium or high")
            }
            p.threatLevel = t
        }
        if let offline {
            guard let minutes = Self.minutes(offline) else {
                throw ValidationError("--offline \(offline): not a duration; expected 12h1m, 90d, 45m or ISO 8601 such as PT12H1M")
            }
            p.offlineSince = minutes == 0 ? nil : now.addingTimeInterval(-Double(minutes) * 60)
        }
        return p
    }

    /// `12h1m`, `90d`, `2d3h`, `45m`, `0` or ISO 8601 (`PT12H1M`, `P90D`) in whole minutes.
    static func minutes(_ text: String) -> Int? {
        var rest = Substring(text.lowercased())
        if rest == "0" { return 0 }
        if rest.hasPrefix("p") {
            rest = rest.dropFirst()
            rest.removeAll { $0 == "t" }
        }
        var total = 0, number = "", sawUnit = false
        while let c = rest.first {
            rest = rest.dropFirst()
            if c.isASCII, c.isNumber { number.append(c); continue }
            var unit = String(c)
            if c == "m", rest.hasPrefix("in") { rest = rest.dropFirst(2); unit = "m" }
            guard !number.isEmpty, number.count <= 7, let n = Int(number) else { return nil }
            switch unit {
            case "d": total += n * 1440
            case "h": total += n * 60
            case "m": total += n
            default: return nil
            }
            number = ""
            sawUnit = true
        }
        return number.isEmpty && sawUnit ? total : nil
    }
}
