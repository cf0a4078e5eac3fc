import MAMPolicy

/// The title and message the compliance delegate carries with every status (the SDK always
/// gives both, for the app to show when the status is not `compliant`). MAMLab's own words.
public enum ComplianceText {
    public static func text(_ status: ComplianceStatus, account: Account, reason: ConditionalAccessReason, tenant: String)
        -> (title: String, message: String)
    {
        let who = account.upn ?? account.name
        switch status {
        case .compliant:
            return ("Access confirmed", "This app now protects \(who)'s work data, and the account can reach it.")
        case .notCompliant:
            switch reason {
            case .noSDK:
                return ("Access blocked", "This app cannot apply your organization's protection policy, so \(who) cannot use it for work data.")
            case .noAppProtectionPolicy:
                return ("Access blocked",
                        "Your organization requires a protection policy for \(who) in this app, and none is assigned. Ask your IT administrator.")
            case .otherAccountEnrolled:
                return ("Access blocked", "Another work account is already protected in this app; \(who) cannot be added beside it.")
            case .notATenantUser:
                return ("Access blocked", "\(who) is not an account of \(tenant).")
            default:
                return ("Access blocked", "Your organization's protection policy could not be applied for \(who) in this app.")
            }
        case .serviceFailure:
            return ("Service unavailable", "The protection service could not check this app for \(who). Try again later.")
        case .networkFailure:
            return ("No connection", "The protection service could not be reached. Try again when you are online.")
        case .interactionRequired:
            return ("Sign-in required", "Sign in as \(who) to finish protecting this app.")
        case .userCancelled:
            return ("Sign-in cancelled", "The sign-in was cancelled, so this app cannot reach \(who)'s work data.")
        }
    }
}
