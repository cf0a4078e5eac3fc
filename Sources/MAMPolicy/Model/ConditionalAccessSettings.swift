/// How a compliance remediation ended: the SDK's `IntuneMAMComplianceStatus`, with its raw values
/// [headers]. Every status but `compliant` leaves the account without an access token [seed 003
/// §New APIs].
public enum ComplianceStatus: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case compliant = 0
    /// The app cannot reach a compliant state; the app shows the title and message.
    case notCompliant = 1
    /// The service failed; try again later.
    case serviceFailure = 2
    /// The service could not be reached; try again when online.
    case networkFailure = 3
    /// A silent remediation needs the user; the app asks again with `silent = false`.
    case interactionRequired = 4
    /// The user dismissed the sign-in.
    case userCancelled = 5

    /// The name written in files and on the wire (the SDK's name without its prefix, first letter lower-cased).
    public var name: String {
        switch self {
        case .compliant: return "compliant"
        case .notCompliant: return "notCompliant"
        case .serviceFailure: return "serviceFailure"
        case .networkFailure: return "networkFailure"
        case .interactionRequired: return "interactionRequired"
        case .userCancelled: return "userCancelled"
        }
    }

    public init?(name: String) {
        guard let s = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = s
    }

    public var description: String { "\(name) (\(rawValue))" }
}

/// One conditional-access policy of the tenant, in the shape of Graph's `conditionalAccessPolicy`
/// reduced to what App Protection CA needs [seed 003 §Exit criteria: name, enabled, assigned to
/// users or groups, all cloud apps, grant "Require app protection policy"].
public struct ConditionalAccessPolicy: Sendable, Hashable {
    /// Graph's `conditionalAccessPolicyState`.
    public enum State: String, Sendable, Hashable, CaseIterable {
        case enabled, disabled
        /// Report-only: evaluated and recorded, never enforced.
        case enabledForReportingButNotEnforced
    }

    public var id: String?
    public var displayName: String
    public var state: State
    /// `includeUsers: ["All"]`.
    public var includesAllUsers = false
    /// Tenant user indices.
    public var includedUsers: Set<Int> = []
    public var excludedUsers: Set<Int> = []
    /// Lower-cased group names.
    public var includedGroups: Set<String> = []
    public var excludedGroups: Set<String> = []
    /// The grant control `compliantApplication` ("Require app protection policy"). A policy
    /// without it does not concern App Protection CA and is kept only to be listed.
    public var requiresAppProtection: Bool
    public var origin: Origin

    public init(id: String? = nil, displayName: String, state: State = .enabled, requiresAppProtection: Bool = true,
                origin: Origin = Origin(file: "", path: "")) {
        self.id = id
        self.displayName = displayName
        self.state = state
        self.requiresAppProtection = requiresAppProtection
        self.origin = origin
    }

    /// Whether the policy's users include this tenant user: included by name, by group or as
    /// everyone, and excluded by neither (an exclusion wins, as in Graph).
    public func assigns(user index: Int, groups: [String]) -> Bool {
        let lowered = Set(groups.map { $0.lowercased() })
        if excludedUsers.contains(index) || !excludedGroups.isDisjoint(with: lowered) { return false }
        return includesAllUsers || includedUsers.contains(index) || !includedGroups.isDisjoint(with: lowered)
    }
}

/// What a test forces a remediation for one account to end in, silent and interactive apart.
public struct ForcedRemediation: Sendable, Hashable {
    public var silent: ComplianceStatus?
    public var interactive: ComplianceStatus?
    public var origin: Origin

    public init(silent: ComplianceStatus? = nil, interactive: ComplianceStatus? = nil, origin: Origin = Origin(file: "", path: "")) {
        self.silent = silent
        self.interactive = interactive
        self.origin = origin
    }

    public func status(silent isSilent: Bool) -> ComplianceStatus? { isSilent ? silent : interactive }
}

/// The tenant's `conditionalAccess` section (docs/POLICIES.md): the directory's tenant id, the
/// conditional-access policies, and the outcomes a test forces.
public struct ConditionalAccessSettings: Sendable, Hashable {
    /// The Entra tenant id (a GUID); the second half of a home account id `<oid>.<tenantId>`.
    public var tenantId: String?
    public var policies: [ConditionalAccessPolicy]
    /// Tenant user index → the forced outcome of that account's remediations [chosen: for tests].
    public var forced: [Int: ForcedRemediation]

    public init(tenantId: String? = nil, policies: [ConditionalAccessPolicy] = [], forced: [Int: ForcedRemediation] = [:]) {
        self.tenantId = tenantId
        self.policies = policies
        self.forced = forced
    }

    /// A tenant with no section: no policy, so every token is granted.
    public static let none = ConditionalAccessSettings()

    /// The first enforced (`enabled`) app-protection policy that assigns the user, else the first
    /// report-only one; nil when none does.
    public func policy(for user: Int, in tenant: Tenant) -> ConditionalAccessPolicy? {
        guard tenant.users.indices.contains(user) else { return nil }
        let groups = tenant.users[user].groups
        let applying = policies.filter { $0.requiresAppProtection && $0.state != .disabled && $0.assigns(user: user, groups: groups) }
        return applying.first { $0.state == .enabled } ?? applying.first
    }

    /// `<oid>.<tenantId>`, the form MSAL reports a protection-policy error with [seed 003 §New APIs].
    public func homeAccountId(for account: Account) -> String? {
        guard let oid = account.oid, let tenantId else { return nil }
        return "\(oid).\(tenantId)"
    }
}
