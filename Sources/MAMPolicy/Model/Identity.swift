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
public enum Identity: Sendable, Hashable, CustomStringConvertible {
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
public enum EnrollmentStatus: Int, Sendable, CaseIterable {
    case newPoliciesReceived = 100, policiesHaveNotChanged = 101, wipeReceived = 102, noPolicyReceived = 103
    case unenrollmentSuccess = 104
    case accountNotLicensed = 200, authRequired = 203, nilAccount = 207, alreadyEnrolled = 208
    case appNotEnrolled = 213, notEnrolledAccount = 214, licensedNotTargeted = 225
    case singleManagedAccountMode = 227

    public var isSuccess: Bool { rawValue < 200 }
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
