import MAMPolicy

/// App Protection conditional access (seed 003): whether the directory grants an app a token
/// for an account, and what a compliance remediation for the account ends in.
///
/// Pure: the tenant and its `conditionalAccess` section in, decisions out. What the broker knows
/// about the app (does it carry the SDK, which managed account has it enrolled) comes in as
/// `AppComplianceFacts`; the queue of remediations and its clock are `ComplianceManager`'s.
public struct ConditionalAccess: Sendable {
    public var tenant: Tenant
    public var settings: ConditionalAccessSettings

    public init(tenant: Tenant, settings: ConditionalAccessSettings) {
        self.tenant = tenant
        self.settings = settings
    }

    /// The account an app names, by UPN or object id; one the tenant does not know stays unknown.
    public func account(named name: String) -> Account {
        tenant.knownAccount(named: name) ?? Account(unknown: name)
    }

    /// The CA policy that requires app protection of this account, if any (enforced before report-only).
    public func policy(for account: Account) -> ConditionalAccessPolicy? {
        account.userIndex.flatMap { settings.policy(for: $0, in: tenant) }
    }

    /// Whether the app has its app protection policy applied for the account: it carries the
    /// SDK, a MAM policy targets the account for it, and the account is the app's enrolled
    /// managed account [seed 003 §Stage 6, first paragraph; §Exit criteria, "MAM-CA noncompliance"].
    public func compliance(of facts: AppComplianceFacts, for account: Account) -> ComplianceCheck {
        guard facts.integratesSDK else {
            return ComplianceCheck(false, .noSDK, "\(facts.bundleID) does not integrate the SDK, so no app protection policy can apply in it")
        }
        guard let policy = tenant.policy(app: facts.bundleID, account: account) else {
            return ComplianceCheck(false, .noAppProtectionPolicy, "no app protection policy targets \(account) for \(facts.bundleID)")
        }
        if facts.enrolledAccount == account {
            return ComplianceCheck(true, .appProtected, "\(account) is enrolled in \(facts.bundleID) under \"\(policy.displayName)\"")
        }
        if let other = facts.enrolledAccount {
            return ComplianceCheck(false, .otherAccountEnrolled,
                                   "\(other) is the managed account enrolled in \(facts.bundleID); an app holds one managed account")
        }
        return ComplianceCheck(false, .notEnrolled,
                               "\"\(policy.displayName)\" targets \(account) for \(facts.bundleID), but the account is not enrolled in the app yet")
    }

    /// The token endpoint: an access token for the account, or "protection policy required"
    /// with the account's home account id until the app is compliant [seed 003 §New APIs].
    public func token(for account: Account, app facts: AppComplianceFacts) -> TokenDecision {
        func decide(_ o: TokenDecision.Outcome, _ r: ConditionalAccessReason, _ detail: String, _ p: ConditionalAccessPolicy? = nil) -> TokenDecision {
            TokenDecision(outcome: o, app: facts.bundleID, account: account,
                          homeAccountId: o == .protectionPolicyRequired ? settings.homeAccountId(for: account) : nil,
                          policy: p?.displayName, reason: r, detail: detail)
        }
        guard account.userIndex != nil else {
            return decide(.granted, .notATenantUser, "\(account) is not a user of \(tenant.name); its conditional access does not apply")
        }
        guard let policy = policy(for: account) else {
            return decide(.granted, .notTargeted, "no conditional access policy requires app protection of \(account)")
        }
        let check = compliance(of: facts, for: account)
        if policy.state == .enabledForReportingButNotEnforced {
            let would = check.compliant ? "would grant" : "would require app protection: \(check.detail)"
            return decide(.granted, .reportOnly, "\"\(policy.displayName)\" is report-only; it \(would)", policy)
        }
        guard facts.declaresProtApp else {
            return decide(.refused, .capabilityMissing,
                          "\"\(policy.displayName)\" requires app protection of \(account) and \(facts.bundleID) did not declare the protapp client capability", policy)
        }
        if check.compliant { return decide(.granted, check.reason, check.detail, policy) }
        return decide(.protectionPolicyRequired, check.reason, "\"\(policy.displayName)\" requires app protection: \(check.detail)", policy)
    }

    /// What a remediation for the account ends in, when it finishes with these facts.
    ///
    /// A remediation does what registering and enrolling the account does [seed 003 §New APIs],
    /// so an account a MAM policy targets and that no other managed account stands in the way of
    /// ends `compliant` and `enrolls` it. A status the tenant forces for the account wins [chosen].
    public func remediationOutcome(for account: Account, silent: Bool, app facts: AppComplianceFacts) -> RemediationOutcome {
        var status: ComplianceStatus
        var reason: ConditionalAccessReason
        var detail: String
        var enrolls = false
        if account.userIndex == nil {
            (status, reason, detail) = (.notCompliant, .notATenantUser, "\(account) is not a user of \(tenant.name)")
        } else {
            let check = compliance(of: facts, for: account)
            detail = check.detail
            reason = check.reason == .notEnrolled ? .enrolledByRemediation : check.reason
            switch check.reason {
            case .appProtected: status = .compliant
            case .notEnrolled:
                status = .compliant
                enrolls = true
                detail += "; the remediation enrolls it, as register-and-enroll would"
            default: status = .notCompliant
            }
        }
        let naturalReason = reason
        if let user = account.userIndex, let forced = settings.forced[user], let s = forced.status(silent: silent) {
            detail = "the tenant forces \(silent ? "silent" : "interactive") remediations of \(account) to end \(s.name) (\(forced.origin)); left alone: \(detail)"
            if s != .compliant { enrolls = false }
            (status, reason) = (s, .forced)
        }
        let text = ComplianceText.text(status, account: account, reason: naturalReason, tenant: tenant.name)
        return RemediationOutcome(status: status, title: text.title, message: text.message, reason: reason, detail: detail, enrolls: enrolls)
    }
}

/// What the broker knows about an app when conditional access asks.
public struct AppComplianceFacts: Sendable, Hashable {
    public var bundleID: String
    public var integratesSDK: Bool
    /// The managed account enrolled in the app (the enrollment state's), nil when none.
    public var enrolledAccount: Account?
    /// The app asks for tokens with the `protapp` client capability, without which a CA-targeted
    /// sign-in fails [seed 003 §MSAL/ADAL].
    public var declaresProtApp: Bool

    public init(bundleID: String, integratesSDK: Bool = true, enrolledAccount: Account? = nil, declaresProtApp: Bool = true) {
        self.bundleID = bundleID
        self.integratesSDK = integratesSDK
        self.enrolledAccount = enrolledAccount
        self.declaresProtApp = declaresProtApp
    }
}

/// Whether an app is compliant for an account, and why.
public struct ComplianceCheck: Sendable, Hashable {
    public var compliant: Bool
    public var reason: ConditionalAccessReason
    public var detail: String
    init(_ compliant: Bool, _ reason: ConditionalAccessReason, _ detail: String) {
        self.compliant = compliant
        self.reason = reason
        self.detail = detail
    }
}

/// Why conditional access decided as it did; the id is what the audit log records.
public enum ConditionalAccessReason: String, Sendable, Hashable, CaseIterable {
    case notATenantUser = "ca.unknownAccount"
    case notTargeted = "ca.notTargeted"
    case reportOnly = "ca.reportOnly"
    case capabilityMissing = "ca.noProtAppCapability"
    case noSDK = "ca.noSDK"
    case noAppProtectionPolicy = "ca.noAppProtectionPolicy"
    case otherAccountEnrolled = "ca.otherAccountEnrolled"
    case notEnrolled = "ca.notEnrolled"
    case appProtected = "ca.appProtected"
    /// The remediation enrolled the account and the policy applies.
    case enrolledByRemediation = "ca.remediation.enrolled"
    /// The tenant's `forceRemediation` decided the status.
    case forced = "ca.remediation.forced"
    case started = "ca.remediation.started"
    case queued = "ca.remediation.queued"
    case duplicate = "ca.remediation.duplicate"
    case queueFull = "ca.remediation.queueFull"
    case invalidAccountId = "ca.remediation.invalidAccountId"
    /// The app ended with the remediation unfinished; nobody is told.
    case appEnded = "ca.remediation.appEnded"

    public var id: String { rawValue }

    /// Where the rule comes from: the vendor's documents, or MAMLab's choice where they are silent.
    public var tag: Tag {
        switch self {
        case .capabilityMissing, .noAppProtectionPolicy, .notTargeted, .notEnrolled, .appProtected, .enrolledByRemediation,
             .duplicate, .queued, .started, .noSDK:
            return .doc
        case .notATenantUser, .reportOnly, .otherAccountEnrolled, .forced, .queueFull, .invalidAccountId, .appEnded:
            return .chosen
        }
    }
}

/// The token endpoint's answer for (app, account).
public struct TokenDecision: Sendable, Hashable, CustomStringConvertible {
    public enum Outcome: String, Sendable, Hashable, CaseIterable {
        case granted
        /// MSAL's `ERROR_SERVER_PROTECTION_POLICY_REQUIRED`: remediate, then ask again.
        case protectionPolicyRequired
        /// The sign-in fails outright (no `protapp` capability declared).
        case refused
    }

    public var outcome: Outcome
    public var app: String
    public var account: Account
    /// `<oid>.<tenantId>`, with `protectionPolicyRequired` only; its first half is the accountId to remediate.
    public var homeAccountId: String?
    /// The display name of the CA policy that decided, when one did.
    public var policy: String?
    public var reason: ConditionalAccessReason
    public var detail: String

    public var description: String { "\(outcome.rawValue) (\(reason.id) [\(reason.tag.rawValue)]): \(detail)" }
}

/// How one remediation ends: the SDK delegate's status, title and message, and why.
public struct RemediationOutcome: Sendable, Hashable {
    public var status: ComplianceStatus
    public var title: String
    public var message: String
    public var reason: ConditionalAccessReason
    public var detail: String
    /// The broker enrolls the account in the app as its managed account (what register-and-enroll does).
    public var enrolls: Bool
}
