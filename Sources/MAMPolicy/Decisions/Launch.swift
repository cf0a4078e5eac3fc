import Foundation

/// One launch check that failed: its rule, the action the policy takes for it, and what the
/// device or app is against what the policy asks.
public struct LaunchFinding: Sendable, Hashable {
    public var rule: Rule
    public var action: LaunchAction
    public var detail: String
    /// The engine's line that found it, as a Decision's.
    public var site: DecisionSite

    init(_ rule: Rule, _ action: LaunchAction, _ detail: String, filePath: StaticString = #filePath, line: UInt = #line) {
        self.rule = rule
        self.action = action
        self.detail = detail
        site = DecisionSite(filePath: filePath, line: line)
    }
}

/// What happens when an app opens under an account (docs/SEMANTICS.md §9): nothing (`action`
/// nil), or the strongest action among the checks that failed, every one of which is listed.
public struct LaunchVerdict: Sendable, Hashable {
    /// nil: the app opens with no word.
    public var action: LaunchAction?
    /// The deciding rule: the failing check with the strongest action (the first in §9's order
    /// among equals), else `launchAllowed` or `launchUnmanaged`.
    public var rule: Rule
    public var findings: [LaunchFinding]
    /// The engine's line that chose `rule`.
    public var site: DecisionSite

    init(_ action: LaunchAction?, _ rule: Rule, _ findings: [LaunchFinding], filePath: StaticString = #filePath, line: UInt = #line) {
        self.action = action
        self.rule = rule
        self.findings = findings
        site = DecisionSite(filePath: filePath, line: line)
    }

    /// The account's data opens (perhaps after a warning the user dismisses).
    public var opens: Bool { action == nil || action == .warn }
}

extension PolicyEngine {
    /// The launch checks of the policy that targets `bundleID` for `account` on `device` at `now`
    /// (the caller's clock: the broker's, or a test's). An account no policy targets, or none,
    /// is not checked. `appVersion` and `sdkVersion` are the app's (nil: not known, so the
    /// minimums on them are not checked).
    public func launchCheck(app bundleID: String, account: Account?, device: DeviceProfile, appVersion: Version? = nil,
                            sdkVersion: Version? = nil, now: Date) -> LaunchVerdict {
        guard let account, let policy = tenant.policy(app: bundleID, account: account) else {
            return LaunchVerdict(nil, .launchUnmanaged, [])
        }
        let findings = Self.launchFindings(policy.settings, device: device, appVersion: appVersion, sdkVersion: sdkVersion, now: now)
        guard let strongest = findings.max(by: { $0.action < $1.action }) else {
            return LaunchVerdict(nil, .launchAllowed, [])
        }
        let deciding = findings.first { $0.action == strongest.action }!
        var verdict = LaunchVerdict(deciding.action, deciding.rule, findings)
        verdict.site = deciding.site
        return verdict
    }

    /// Every check of §9 that `device` fails under `settings`, in §9's order.
    static func launchFindings(_ settings: PolicySettings, device: DeviceProfile, appVersion: Version?, sdkVersion: Version?,
                               now: Date) -> [LaunchFinding] {
        let l = settings.launch
        var out: [LaunchFinding] = []
        // The site is the caller's line, which names the rule.
        func minimums(_ m: LaunchRequirements.VersionMinimums, _ have: Version?, _ rule: Rule, _ what: String,
                      filePath: StaticString = #filePath, line: UInt = #line) {
            guard let have else { return }
            // The strongest minimum the version is below decides this check.
            for (minimum, action) in [(m.wipe, LaunchAction.wipe), (m.required, .block), (m.warning, .warn)] {
                if let minimum, have < minimum {
                    out.append(LaunchFinding(rule, action, "\(what) \(have) is older than \(minimum)", filePath: filePath, line: line))
                    return
                }
            }
        }
        minimums(l.os, device.os, .launchOSVersion, "iOS")
        minimums(l.app, appVersion, .launchAppVersion, "the app's version")
        minimums(l.sdk, sdkVersion, .launchSDKVersion, "the SDK release")
        if l.complianceRequired, device.jailbroken {
            out.append(LaunchFinding(.launchJailbroken, l.complianceAction, "the device is jailbroken"))
        }
        if !l.allowedModels.isEmpty, !l.allowedModels.contains(where: { device.model.lowercased().hasPrefix($0.lowercased()) }) {
            out.append(LaunchFinding(.launchModelNotAllowed, l.modelAction, "\(device.model) is not among \(l.allowedModels.joined(separator: ", "))"))
        }
        if l.maximumThreatLevel != .notConfigured, device.threatLevel > l.maximumThreatLevel {
            out.append(LaunchFinding(.launchThreatLevel, l.threatAction,
                                     "the threat level is \(device.threatLevel.rawValue), above \(l.maximumThreatLevel.rawValue)"))
        }
        let offline = device.minutesOffline(at: now)
        if offline > l.offlineWipeMinutes {
            out.append(LaunchFinding(.launchOfflineWipe, .wipe, "offline \(Self.duration(offline)), longer than \(Self.duration(l.offlineWipeMinutes))"))
        } else if offline > settings.accessRecheckOfflineMinutes {
            out.append(LaunchFinding(.launchOfflineAccess, .block,
                                     "offline \(Self.duration(offline)), longer than \(Self.duration(settings.accessRecheckOfflineMinutes))"))
        }
        return out
    }

    /// Minutes as days, hours and minutes (`12 h 1 min`, `90 d`).
    public static func duration(_ minutes: Int) -> String {
        let d = minutes / 1440, h = minutes % 1440 / 60, m = minutes % 60
        let parts = [(d, "d"), (h, "h"), (m, "min")].filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }
        return parts.isEmpty ? "0 min" : parts.joined(separator: " ")
    }
}
