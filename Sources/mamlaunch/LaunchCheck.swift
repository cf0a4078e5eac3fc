import ArgumentParser
import Foundation
import MAMLauncher
import MAMPolicy
import MAMScript

extension Explain {
    /// `explain --launch-check`: the launch checks of --from's policy on the device.
    func runLaunchCheck() throws {
        let world = try World.load(tenant: tenantFile.tenant, policyOverride: policy, manifests: manifests, catalog: catalogFile.catalog,
                                   standIns: [from].compactMap { $0.map(Self.appName) })
        var notes = world.notes
        let party = try world.party(from!, notes: &notes)
        let now = Date()
        let profile = try device.apply(to: world.engine.tenant.device.profile, now: now)
        let app = try appVersion.map { v in
            guard let version = Version(v) else { throw ValidationError("--app-version \(v): not a version") }
            return version
        }
        guard let sdk = Version(sdkVersion) else { throw ValidationError("--sdk-version \(sdkVersion): not a version") }
        let verdict = world.engine.launchCheck(app: party.bundleID, account: party.identity.account, device: profile,
                                               appVersion: app, sdkVersion: party.integratesSDK ? sdk : nil, now: now)
        let report = LaunchCheckReport(verdict: verdict, app: party.bundleID, identity: party.identity.description, device: profile,
                                       now: now, notes: notes)
        print(json ? report.json() : report.text())
    }
}

/// What `explain --launch-check` prints.
struct LaunchCheckReport {
    /// The SDK release MAMKit mirrors (docs/MAMKIT.md): what an SDK app links.
    static let sdkRelease = "21.7.1"

    var verdict: LaunchVerdict
    var app: String
    var identity: String
    var device: DeviceProfile
    var now: Date
    var notes: [String]

    var outcome: String {
        switch verdict.action {
        case nil: "OPENS"
        case .warn: "OPENS AFTER A WARNING"
        case .block: "BLOCKED"
        case .wipe: "WIPED"
        }
    }

    func text() -> String {
        let r = verdict.rule
        let source = r.source.description == r.tag.rawValue ? "" : ": \(r.source)"
        var lines = ["\(app) as \(identity): \(outcome) at launch by \(r) (\(r.id), \(r.tag.rawValue)\(source))"]
        lines.append("  why: \(r.plainWords)")
        for f in verdict.findings {
            lines.append("  - \(f.action.rawValue): \(f.detail) (\(f.rule), set by \(f.rule.fields.joined(separator: ", ")))")
        }
        if verdict.action != nil, verdict.action != .warn || !r.message.isEmpty { lines.append("  the user sees: \(r.message)") }
        if verdict.action == .wipe { lines.append("  the account's files and keys are removed from the app") }
        lines.append("  device: iOS \(device.os), \(device.model)\(device.jailbroken ? ", jailbroken" : ""), threat level \(device.threatLevel.rawValue), "
                     + (device.offlineSince == nil ? "online" : "offline \(PolicyEngine.duration(device.minutesOffline(at: now)))"))
        return (lines + notes).joined(separator: "\n")
    }

    func json() -> String {
        let r = verdict.rule
        let findings: [JSONValue] = verdict.findings.map {
            ["rule": .string($0.rule.rawValue), "id": .string($0.rule.id), "action": .string($0.action.rawValue), "detail": .string($0.detail),
             "fields": .array($0.rule.fields.map { .string($0) })]
        }
        let object: JSONValue = [
            "app": .string(app), "identity": .string(identity), "opens": .bool(verdict.opens),
            "action": verdict.action.map { .string($0.rawValue) } ?? .null, "rule": .string(r.id), "ruleName": .string(r.rawValue),
            "tag": .string(r.tag.rawValue), "source": .string(r.source.description), "message": .string(r.message),
            "findings": .array(findings), "notes": .array(notes.map { .string($0) }),
        ]
        return object.json
    }
}
