/// One app-protection policy of a tenant: its settings and whom it targets.
public struct Policy: Sendable, Hashable, Codable {
    /// The Graph `id` when present, else the display name.
    public var id: String
    public var displayName: String
    public var settings: PolicySettings
    /// Bundle ids of the targeted apps, lower-cased (bundle ids compare case-insensitively on iOS).
    public var targetedApps: [String]
    public var includedGroups: [String]
    public var excludedGroups: [String]
    /// An `allLicensedUsersAssignmentTarget` assignment.
    public var allUsers: Bool
    /// Where the policy was read from.
    public var origin: Origin
    /// The file the settings came from when it is not where the policy is listed (a `$ref`).
    public var settingsFile: String?
    /// Where each targeted app was named, parallel to `targetedApps`.
    public var appOrigins: [Origin]
    /// Graph `appGroupType` when it names a group rather than the listed apps, and where; its
    /// members are in `targetedApps` once resolved against an app catalog (`resolveAppGroup`).
    public var appGroup: AppGroup?
    public var appGroupOrigin: Origin?

    public init(id: String, displayName: String, settings: PolicySettings = PolicySettings(),
                targetedApps: [String] = [], includedGroups: [String] = [], excludedGroups: [String] = [],
                allUsers: Bool = false, origin: Origin = Origin(file: "", path: "")) {
        self.id = id
        self.displayName = displayName
        self.settings = settings
        self.targetedApps = targetedApps.map { $0.lowercased() }
        self.includedGroups = includedGroups
        self.excludedGroups = excludedGroups
        self.allUsers = allUsers
        self.origin = origin
        self.appOrigins = []
    }

    /// Targets the members of its app group (besides the apps it lists), as `members` names
    /// them; returns the members it added. A policy without a group is left as it is.
    public mutating func resolveAppGroup(_ members: (AppGroup) -> [String]) -> [String] {
        guard let group = appGroup, let origin = appGroupOrigin else { return [] }
        let listed = Set(targetedApps)
        let added = members(group).map { $0.lowercased() }.filter { !listed.contains($0) }
        targetedApps += added
        appOrigins += added.map { _ in origin }
        return added
    }

    /// Whether the policy is assigned to a user in these groups.
    public func isAssigned(toGroups groups: [String]) -> Bool {
        let lowered = Set(groups.map { $0.lowercased() })
        if excludedGroups.contains(where: { lowered.contains($0.lowercased()) }) { return false }
        return allUsers || includedGroups.contains(where: { lowered.contains($0.lowercased()) })
    }
}

/// Where something was read from: file, JSON path or key path, and position when known.
public struct Origin: Sendable, Hashable, Codable, CustomStringConvertible {
    public var file: String
    public var path: String
    public var position: SourcePosition?

    public init(file: String, path: String, position: SourcePosition? = nil) {
        self.file = file
        self.path = path
        self.position = position
    }

    public init(_ located: Located) {
        self.init(file: located.file, path: located.path, position: located.node.position)
    }

    public func problem(_ severity: Diagnostic.Severity, _ message: String) -> Diagnostic {
        Diagnostic(severity, file: file, path: path, position: position, message: message)
    }

    public func problem(_ message: String) -> Diagnostic { problem(.error, message) }

    public var description: String {
        var s = file
        if let p = position { s += ":\(p.line):\(p.column)" }
        return path.isEmpty ? s : "\(s) \(path)"
    }
}

/// Graph's `targetedManagedAppGroupType`: which apps a policy targets. `selectedPublicApps` is
/// the policy's `apps` list; the others name a group the service expands, which MAMLab expands
/// through its app catalog (docs/CATALOG.md): its core Microsoft apps, every Microsoft app, or
/// every app with the SDK.
public enum AppGroup: String, Sendable, Hashable, Codable, CaseIterable {
    case selectedPublicApps, allCoreMicrosoftApps, allMicrosoftApps, allApps
}
