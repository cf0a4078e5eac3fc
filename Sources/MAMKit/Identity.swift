import MAMPolicy

/// The scoped ("thread") identity of the SDK's Swift context manager: an account for the
/// duration of a closure, sync or async, throwing or not (SEMANTICS §1).
///
/// It is a task-local value: child tasks made inside the scope (`async let`, task groups,
/// `Task {}`) inherit it when they are created; `Task.detached` does not. Outside any scope
/// it is nil, and the UI identity, then the process identity, applies.
public enum IdentityScope {
    @TaskLocal static var account: String?
    /// Inside a URL handler: the account of the app that sent the URL.
    @TaskLocal static var activitySender: String?

    /// The account of the innermost scope (`getScopedAccountId`); nil outside any.
    public static var scopedAccount: String? { account }

    /// Runs `body` with `account` as the scoped identity (`""` personal; nil = no scoped identity).
    public static func withAccount<T>(_ account: String?, _ body: () throws -> T) rethrows -> T {
        try $account.withValue(account, operation: body)
    }

    /// The same for an async body; awaits inside it keep the identity.
    public static func withAccount<T>(_ account: String?, isolation: isolated (any Actor)? = #isolation,
                                      _ body: () async throws -> T) async rethrows -> T {
        try await $account.withValue(account, operation: body)
    }
}

/// The result of a UI identity switch (`IntuneMAMSwitchIdentityResult`).
public enum SwitchIdentityResult: Int, Sendable, CaseIterable {
    case success = 0
    case cancelled = 1
    case notAllowed = 2
    case failed = 3

    /// The scripted mode's spelling.
    public var name: String { "\(self)" }
}

/// Why the kit asks the app to switch identity (`IntuneMAMIdentitySwitchReason`).
public enum IdentitySwitchReason: Int, Sendable {
    case openURL = 0
    case cancelConditionalLaunch = 1
    case documentImport = 2
}

/// What conditional launch asks of the user when a managed identity comes on screen.
public struct ConditionalLaunchRequirements: Sendable, Hashable {
    /// The app PIN (`isPINRequired`).
    public var pin: Bool
    /// Minutes of inactivity before the checks run again.
    public var recheckMinutes: Int
}

/// A window or scene of the app, as the app names it (the SDK's `UIWindow` or `UIScene`
/// argument): each has its own UI identity.
public struct UIWindowID: Hashable, Sendable, CustomStringConvertible {
    public var name: String
    public init(_ name: String) { self.name = name }
    public var description: String { name }
}
