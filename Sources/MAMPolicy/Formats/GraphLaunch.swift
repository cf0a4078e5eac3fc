/// The conditional launch properties of Graph's `iosManagedAppProtection` (LaunchRequirements),
/// read and written beside the data-protection ones. Graph writes an unset minimum or model list
/// as null, and null is read as not set.
extension GraphPolicy {
    static func versionFields() -> [(String, WritableKeyPath<LaunchRequirements, Version?>)] {
        [("minimumWarningOsVersion", \.os.warning), ("minimumRequiredOsVersion", \.os.required), ("minimumWipeOsVersion", \.os.wipe),
         ("minimumWarningAppVersion", \.app.warning), ("minimumRequiredAppVersion", \.app.required), ("minimumWipeAppVersion", \.app.wipe),
         ("minimumWarningSdkVersion", \.sdk.warning), ("minimumRequiredSdkVersion", \.sdk.required), ("minimumWipeSdkVersion", \.sdk.wipe)]
    }

    static func actionFields() -> [(String, WritableKeyPath<LaunchRequirements, LaunchAction>)] {
        [("appActionIfDeviceComplianceRequired", \.complianceAction),
         ("mobileThreatDefenseRemediationAction", \.threatAction),
         ("appActionIfIosDeviceModelNotAllowed", \.modelAction)]
    }

    /// Every property this file gives meaning to.
    static var launchProperties: [String] {
        versionFields().map(\.0) + actionFields().map(\.0)
            + ["deviceComplianceRequired", "maximumAllowedDeviceThreatLevel", "allowedIosDeviceModels", "periodOfflineBeforeWipeIsEnforced"]
    }

    /// Reads `key` into `launch` when it is a launch property; false when it is not one.
    static func readLaunch(_ key: String, _ value: Located, into launch: inout LaunchRequirements, _ log: inout DiagnosticLog) -> Bool {
        let isNull: Bool = { if case .null = value.node.value { return true }; return false }()
        if let (_, path) = versionFields().first(where: { $0.0 == key }) {
            guard !isNull else { launch[keyPath: path] = nil; return true }
            guard let text = value.string(&log) else { return true }
            guard let v = Version(text) else {
                log.append(value.problem("\"\(text)\" is not a version; expected numbers joined by dots, such as 12.4.6"))
                return true
            }
            launch[keyPath: path] = v
            return true
        }
        if let (_, path) = actionFields().first(where: { $0.0 == key }) {
            if !isNull, let a = value.enumeration(LaunchAction.self, &log) { launch[keyPath: path] = a }
            return true
        }
        switch key {
        case "deviceComplianceRequired":
            if !isNull, let b = value.bool(&log) { launch.complianceRequired = b }
        case "maximumAllowedDeviceThreatLevel":
            if !isNull, let t = value.enumeration(ThreatLevel.self, &log) { launch.maximumThreatLevel = t }
        case "allowedIosDeviceModels":
            guard !isNull, let text = value.string(&log) else { launch.allowedModels = []; return true }
            launch.allowedModels = text.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        case "periodOfflineBeforeWipeIsEnforced":
            if !isNull, let m = minutes(value, &log) { launch.offlineWipeMinutes = m }
        default:
            return false
        }
        return true
    }

    /// The launch properties of a policy as Graph writes them.
    static func writeLaunch(_ l: LaunchRequirements) -> [(key: String, value: Node)] {
        var pairs: [(key: String, value: Node)] = versionFields().map { key, path in
            (key, Node(l[keyPath: path].map { .string($0.text) } ?? .null))
        }
        pairs += actionFields().map { key, path in (key, Node(.string(l[keyPath: path].rawValue))) }
        pairs += [
            ("deviceComplianceRequired", Node(.bool(l.complianceRequired))),
            ("maximumAllowedDeviceThreatLevel", Node(.string(l.maximumThreatLevel.rawValue))),
            ("allowedIosDeviceModels", Node(l.allowedModels.isEmpty ? .null : .string(l.allowedModels.joined(separator: ";")))),
            ("periodOfflineBeforeWipeIsEnforced", Node(.string("PT\(l.offlineWipeMinutes)M"))),
        ]
        return pairs
    }
}
