import MAMPolicy
import MAMWire

/// `IntuneMAMEnrollmentManager`: enrollment through the tenant's MAM service (the broker carries
/// it out). Each call answers with the delegate's first callback; later ones (a restart, a
/// check-in) reach the delegate and `MAMApp.events`.
public struct EnrollmentManager: Sendable {
    let kit: Kit

    public func setDelegate(_ delegate: (any EnrollmentDelegate)?) { kit.state.withLock { $0.enrollmentDelegate = delegate } }

    /// `registerAndEnrollAccountId`.
    public func registerAndEnroll(_ account: String) async throws -> EnrollmentNotice {
        let notice = try answer(await kit.connection.request(.enroll(account: account)), "enroll")
        if notice.leavesAccountRegistered { kit.registered.add(account) }
        return await refreshed(notice)
    }

    /// `registeredAccountIds`: the accounts registered with the SDK on this device, enrolled or
    /// waiting for their retry (seed 000 §Enrollment: a failed enrollment is retried every 24
    /// hours), in the order they were registered.
    public var registeredAccounts: [String] { kit.registered.all }

    /// `loginAndEnrollAccount(nil)`: the device's MDM user, else the app must sign one in (203).
    public func loginAndEnroll() async throws -> EnrollmentNotice {
        let notice = try answer(await kit.connection.request(.loginAndEnroll), "loginAndEnroll")
        if notice.leavesAccountRegistered { kit.registered.add(notice.account) }
        return await refreshed(notice)
    }

    /// `deRegisterAndUnenrollAccountId(_:withWipe:)`. With a wipe, the wipe comes first (and
    /// the policy delegate's `wipeData`), then the unenrollment's notice.
    public func deregisterAndUnenroll(_ account: String, wipe: Bool) async throws -> EnrollmentNotice? {
        let replies = try await kit.connection.request(.unenroll(account: account, wipe: wipe))
        kit.registered.remove([account, kit.resolve(account).account.map { $0.upn ?? $0.name } ?? account])
        if case .wipeRequest? = replies.first?.frame.message {
            _ = try? await kit.refreshPolicy()
            return nil
        }
        return try await refreshed(answer(replies, "unenroll"))
    }

    /// The answer, once the app's policy objects say what it changed: a call that returns has
    /// the new snapshot (after an unenrollment no policy object says managed any more).
    func refreshed(_ notice: EnrollmentNotice) async -> EnrollmentNotice {
        _ = try? await kit.refreshPolicy()
        return notice
    }

    /// `allowedAccounts`: the accounts the admin lets sign in on this device, nil when there is
    /// no restriction (seed 000 §Implement Allowed Accounts). Asked of the broker each time; a change
    /// arrives as `MAMEvent.allowedAccountsChanged`.
    public func allowedAccounts() async throws -> [String]? {
        let replies = try await kit.connection.request(.allowedAccountsRequest)
        guard case let .allowedAccounts(restricted, accounts)? = replies.first?.frame.message else {
            throw MAMKitError(.unexpectedReply, "allowedAccountsRequest")
        }
        return restricted ? accounts : nil
    }

    /// `enrolledAccountId`: nil when not enrolled.
    public var enrolledAccount: String? { kit.snapshot?.enrolled.map { $0.upn ?? $0.name } }

    func answer(_ replies: [Incoming], _ what: String) throws -> EnrollmentNotice {
        guard case let .enrollmentNotice(kind, account, status)? = replies.first?.frame.message else {
            throw MAMKitError(.unexpectedReply, what)
        }
        return EnrollmentNotice(kind: EnrollmentNotice.Kind(rawValue: Int(kind)) ?? .enrollment, account: account, code: Int(status))
    }
}

/// `IntuneMAMComplianceManager`: App Protection conditional access.
public struct ComplianceManager: Sendable {
    let kit: Kit

    public enum TokenOutcome: Sendable, Equatable {
        case granted
        /// MSAL's protection-policy-required error, with the home account id to remediate.
        case protectionPolicyRequired(homeAccountID: String?)
        case refused
    }

    public enum Acceptance: Int, Sendable { case started = 0, queued, dropped, refused }

    public func setDelegate(_ delegate: (any ComplianceDelegate)?) { kit.state.withLock { $0.complianceDelegate = delegate } }

    /// The token request an app makes through MSAL (emulated by the broker's token endpoint).
    public func acquireToken(for account: String) async throws -> (outcome: TokenOutcome, detail: String) {
        let replies = try await kit.connection.request(.acquireToken(account: account))
        guard case let .token(outcome, home, detail)? = replies.first?.frame.message else { throw MAMKitError(.unexpectedReply, "acquireToken") }
        switch outcome {
        case 0: return (.granted, detail)
        case 1: return (.protectionPolicyRequired(homeAccountID: home), detail)
        default: return (.refused, detail)
        }
    }

    /// `remediateComplianceForAccountId(_:silent:)`: the result comes to the delegate.
    public func remediateCompliance(for account: String, silent: Bool) async throws -> (acceptance: Acceptance, detail: String) {
        let replies = try await kit.connection.request(.remediateCompliance(account: account, silent: silent))
        guard case let .remediationAccepted(outcome, detail)? = replies.first?.frame.message else {
            throw MAMKitError(.unexpectedReply, "remediateCompliance")
        }
        return (Acceptance(rawValue: Int(outcome)) ?? .refused, detail)
    }

    /// `remediationInProgressForAccountId`.
    public func remediationInProgress(for account: String) async throws -> Bool {
        let replies = try await kit.connection.request(.remediationInProgress(account: account))
        guard case let .remediationProgress(state, _)? = replies.first?.frame.message else {
            throw MAMKitError(.unexpectedReply, "remediationInProgress")
        }
        return state != 0
    }
}
