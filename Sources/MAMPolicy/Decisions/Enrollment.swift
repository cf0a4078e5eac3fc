/// Who holds an app's one managed account when several accounts sign in (docs/SEMANTICS.md §1,
/// "Accounts in an app").
extension PolicyEngine {
    /// The managed account enrolled in `app` once `accounts` have signed in, in order.
    ///
    /// Only one managed account per app: the device's `enrollments` entry for the app, else
    /// the first signed-in account a policy targets for it. Another targeted account signing in
    /// as well is refused as the SDK refuses it [seed 002 §Exit criteria, "Log in multiple
    /// managed"; headers: `SingleManagedAccountMode`, 227]. Accounts no policy targets are
    /// unmanaged and may sign in freely.
    public func enrollment(of app: AppManifest, signedIn accounts: [Account]) -> Result<Account?, AccountRefusal> {
        guard app.integratesSDK else { return .success(nil) }
        let deviceEntry = tenant.device.enrollments[app.bundleID.lowercased()]
        let managed = accounts.filter { tenant.policy(app: app.bundleID, account: $0) != nil }
        // With a device entry, accounts signed in beside someone else's enrollment are
        // unmanaged there; only a signed-in enrolled account makes a second one a conflict.
        if let e = deviceEntry, !managed.contains(e) { return .success(e) }
        var slot = AppAccounts(managed: deviceEntry)
        for a in managed {
            let status = slot.enroll(a)
            if status == .singleManagedAccountMode, let enrolled = slot.managed {
                return .failure(AccountRefusal(app: app.bundleID, enrolled: enrolled, refused: a, status: status))
            }
        }
        return .success(slot.managed)
    }
}

/// A second managed account refused by an app (`SingleManagedAccountMode`, 227).
public struct AccountRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    public var app: String
    /// The managed account the app has enrolled.
    public var enrolled: Account
    /// The account refused.
    public var refused: Account
    public var status: EnrollmentStatus

    public var description: String {
        "\(app): \(refused) cannot sign in as a second managed account: \(enrolled) is already enrolled "
            + "(SingleManagedAccountMode, \(status.rawValue)); an app holds one managed account [seed 002 §Exit criteria]"
    }
}
