/// A work or school account: a UPN or an Entra object id (OID).
///
/// Accounts compare case-insensitively, and the UPN and the OID of one tenant user are the same
/// account [doc]. An account the tenant does not know compares by its lower-cased name.
public struct Account: Sendable, Hashable, CustomStringConvertible {
    /// The names, kept behind one reference so that copying an account is cheap.
    @usableFromInline
    final class Names: Sendable {
        let upn: String?
        let oid: String?
        let name: String
        @usableFromInline let key: String
        init(upn: String?, oid: String?, name: String, key: String) {
            self.upn = upn
            self.oid = oid
            self.name = name
            self.key = key
        }
    }

    /// Index of the user in the tenant's user list, when the tenant knows the account.
    public let userIndex: Int?
    @usableFromInline let names: Names

    /// An account of a tenant user.
    public init(userIndex: Int, upn: String, oid: String?) {
        self.userIndex = userIndex
        self.names = Names(upn: upn, oid: oid, name: upn, key: "#\(userIndex)")
    }

    /// An account the tenant does not know.
    public init(unknown name: String) {
        self.userIndex = nil
        let isUPN = name.contains("@")
        self.names = Names(upn: isUPN ? name : nil, oid: isUPN ? nil : name, name: name, key: name.lowercased())
    }

    public var upn: String? { names.upn }
    public var oid: String? { names.oid }
    /// What the account was called where it came from.
    public var name: String { names.name }

    @inlinable
    public static func == (a: Account, b: Account) -> Bool {
        if let x = a.userIndex, let y = b.userIndex { return x == y }
        if a.userIndex != nil || b.userIndex != nil { return false }
        return a.names === b.names || a.names.key == b.names.key
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(names.key) }

    public var description: String { name }
}

/// The identity data is handled under: an account, or the personal ("no user") identity.
///
/// The SDK's `""` is `.personal`; its `nil` (fall back to the next level) is a `nil`
/// `Identity?` [doc].
public enum Identity: Sendable, Hashable, Codable, CustomStringConvertible {
    case personal
    case account(Account)

    public var account: Account? {
        if case let .account(a) = self { return a }
        return nil
    }

    public var description: String {
        switch self {
        case .personal: return "personal"
        case let .account(a): return a.name
        }
    }

    // A designed JSON shape (docs/PROTOCOL.md, "The policy snapshot"), not the synthesized
    // `{"account":{"_0":{…}}}`: `{"kind":"personal"}` or `{"kind":"account","account":{…}}`.
    enum CodingKeys: String, CodingKey { case kind, account }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        switch try c.decode(String.self, forKey: .kind) {
        case "personal": self = .personal
        case "account": self = .account(try c.decode(Account.self, forKey: .account))
        case let other:
            throw DecodingError.dataCorruptedError(forKey: .kind, in: c, debugDescription: "identity kind \(other): personal or account")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .personal: try c.encode("personal", forKey: .kind)
        case let .account(a):
            try c.encode("account", forKey: .kind)
            try c.encode(a, forKey: .account)
        }
    }
}

/// The identities an app has set at each level, and the rule that picks the effective one.
public struct IdentityContext: Sendable, Hashable {
    /// Set for the current thread or task; `nil` falls back [doc].
    public var thread: Identity?
    /// The identity of the UI on screen; used for UI work (paste, share, open URL) [doc].
    public var ui: Identity?
    /// The process-wide identity; a single-identity app has its enrolled account here [doc].
    public var process: Identity?

    public init(thread: Identity? = nil, ui: Identity? = nil, process: Identity? = nil) {
        self.thread = thread
        self.ui = ui
        self.process = process
    }

    /// Thread identity, else the UI identity for UI work, else the process identity; when
    /// nothing is set the app is unmanaged [doc, SEMANTICS §1].
    public func effective(forUIWork: Bool) -> Identity {
        if let t = thread { return t }
        if forUIWork, let u = ui { return u }
        return process ?? .personal
    }
}

/// Outcome codes of enrollment and identity switches [doc, SEMANTICS §7].
/// Every code of the SDK's `IntuneMAMEnrollmentStatusCode`, with its raw value [doc: headers].
public enum EnrollmentStatus: Int, Sendable, CaseIterable {
    case newPoliciesReceived = 100, policiesHaveNotChanged = 101, wipeReceived = 102, noPolicyReceived = 103
    case unenrollmentSuccess = 104
    case accountNotLicensed = 200, internalError = 201, mamServiceDisabled = 202, authRequired = 203
    case locationServiceFailure = 204, enrollmentEndPointNetworkFailure = 205, parsingFailure = 206
    case nilAccount = 207, alreadyEnrolled = 208, notEmmAccount = 209, mdmEnrolledDifferentUser = 210
    case notDeviceAccount = 211, policyEndPointNetworkFailure = 212, appNotEnrolled = 213, notEnrolledAccount = 214
    case failedToClearMamData = 215, timeout = 216, adalInternalError = 217, switchExistingAccount = 218
    case loginCanceled = 219, policyRecordGone = 220, reEnrollForUnenrolledUser = 221, tenantMigration = 222
    case unsupportedAPI = 223, adalMethodUnsupported = 224, licensedNotTargeted = 225, deviceBlockedEnrollment = 226
    case singleManagedAccountMode = 227

    public var isSuccess: Bool { rawValue < 200 }

    /// What the code means, in a line (MAMLab's words for the SDK's list).
    public var meaning: String {
        switch self {
        case .newPoliciesReceived: return "enrolled, and a new policy was received"
        case .policiesHaveNotChanged: return "checked in; the policy has not changed"
        case .wipeReceived: return "a selective wipe of the account was received"
        case .noPolicyReceived: return "checked in; no policy targets the app for this account"
        case .unenrollmentSuccess: return "unenrolled"
        case .accountNotLicensed: return "the account has no MAM license in the tenant"
        case .internalError: return "the service failed internally"
        case .mamServiceDisabled: return "the MAM service is disabled (obsolete)"
        case .authRequired: return "the account must sign in again"
        case .locationServiceFailure: return "the service's location could not be found"
        case .enrollmentEndPointNetworkFailure: return "the enrollment endpoint could not be reached"
        case .parsingFailure: return "the service's answer could not be read"
        case .nilAccount: return "no account was given"
        case .alreadyEnrolled: return "the account is already enrolled in this app"
        case .notEmmAccount: return "the account is not one the MAM service manages; remove it"
        case .mdmEnrolledDifferentUser: return "the device is MDM-enrolled with another user; remove the account"
        case .notDeviceAccount: return "the account is not the device's account; remove it"
        case .policyEndPointNetworkFailure: return "the policy endpoint could not be reached"
        case .appNotEnrolled: return "the app is not enrolled"
        case .notEnrolledAccount: return "the account is not the one enrolled in this app"
        case .failedToClearMamData: return "the app's MAM data could not be cleared"
        case .timeout: return "the request timed out"
        case .adalInternalError: return "the sign-in library failed internally"
        case .switchExistingAccount: return "switch to the account already signed in"
        case .loginCanceled: return "the user cancelled the sign-in"
        case .policyRecordGone: return "the policy record is gone from the service"
        case .reEnrollForUnenrolledUser: return "the account must enroll again"
        case .tenantMigration: return "the tenant is being migrated"
        case .unsupportedAPI: return "this call is not supported here (an extension)"
        case .adalMethodUnsupported: return "the sign-in method is not supported"
        case .licensedNotTargeted: return "licensed, but no policy targets the app for this account: it stays unmanaged"
        case .deviceBlockedEnrollment: return "the device is blocked from enrolling"
        case .singleManagedAccountMode: return "another managed account is already enrolled in this app"
        }
    }
}

/// The accounts registered in one app. Only one managed account per app [doc].
public struct AppAccounts: Sendable, Hashable {
    public private(set) var managed: Account?

    public init(managed: Account? = nil) { self.managed = managed }

    /// Enrolls an account, refusing a second managed account (227) [doc].
    public mutating func enroll(_ account: Account?) -> EnrollmentStatus {
        guard let account else { return .nilAccount }
        if let m = managed {
            return m == account ? .alreadyEnrolled : .singleManagedAccountMode
        }
        managed = account
        return .newPoliciesReceived
    }

    public mutating func unenroll(_ account: Account) -> EnrollmentStatus {
        guard managed == account else { return .notEnrolledAccount }
        managed = nil
        return .unenrollmentSuccess
    }
}
