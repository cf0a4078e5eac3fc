/// Where a rule comes from: the most specific source that states it, or `observed` / `chosen`
/// when no vendor text does (docs/SEMANTICS.md, "Sources").
///
/// `explain` prints it beside the tag so that a reader can tell a documented behaviour from
/// MAMLab's own call, and look the rule up in docs/SEMANTICS.md.
public enum RuleSource: Sendable, Hashable, CustomStringConvertible {
    /// A developer-guide edition among the seeds (`seed(2, "Exit criteria")` is seed 002's
    /// section "Exit criteria").
    case seed(Int, String)
    /// The SDK's public headers (release 21.7.1).
    case headers
    /// The vendor's admin reference for iOS app-protection settings and Graph's `iosManagedAppProtection`.
    case admin
    /// The vendor's app-protection log reference (the on-device debug keys).
    case log
    /// Reported by users or maintainers of the SDK, not documented.
    case observed
    /// MAMLab's own rule where the sources are silent.
    case chosen

    public var tag: Tag {
        switch self {
        case .observed: return .observed
        case .chosen: return .chosen
        case .seed, .headers, .admin, .log: return .doc
        }
    }

    /// `seed 002 §Exit criteria`, `headers`, `admin`, `log`, `observed` or `chosen`.
    public var description: String {
        switch self {
        case let .seed(number, section):
            let digits = String(number)
            return "seed \(String(repeating: "0", count: max(0, 3 - digits.count)))\(digits) §\(section)"
        case .headers: return "headers"
        case .admin: return "admin"
        case .log: return "log"
        case .observed: return "observed"
        case .chosen: return "chosen"
        }
    }

    /// `[doc: admin]`, `[observed]`, `[chosen]`: how `explain` shows tag and source together.
    public var label: String {
        tag == .doc ? "[doc: \(self)]" : "[\(self)]"
    }
}

extension Rule {
    /// The source of each rule. A new rule gets its line here (the switch has no default on
    /// purpose: a rule without a source does not compile) and a row in docs/SEMANTICS.md.
    public var source: RuleSource {
        // The seeds' section names, written once.
        let identities = RuleSource.seed(2, "Identity overview")
        let exitCriteria = RuleSource.seed(2, "Exit criteria")
        let switchIdentities = RuleSource.seed(2, "Switch identities")
        switch self {
        // 4.1 send
        case .senderUnmanaged: return identities
        case .sendAllApps, .sendNone: return .admin
        case .sendNoneOpenInFiltered: return .seed(0, "'Copy To' actions")
        case .sendToManagedTarget, .sendImportIdentityMismatch, .sendToUnmanagedBlocked: return exitCriteria
        // The exemption list is an admin setting; that an exempt URL opens unwrapped is observed.
        case .sendExemptScheme: return .admin
        case .sendOpenInFiltered, .sendOpenInOSSharing, .sendOpenInEncrypted: return .admin
        // 4.2 receive
        case .receiverUnmanaged: return identities
        case .receiverUnmanagedSwitch, .receivePassiveSwitchToPersonal: return switchIdentities
        case .receiveAllApps, .receiveAllAppsTagged, .receiveNone: return .admin
        case .receiveFromManaged, .receiveManagedBlocked, .receiveImportBlocked: return exitCriteria
        // 4.3 pasteboard
        case .pasteSameParty, .pasteOrgAllApps, .pasteOrgManagedTarget, .pasteOrgBlocked, .pasteUnderCharacterLimit,
             .pasteInAllowed:
            return .admin
        case .pasteOrgNotManagedTarget: return .observed
        case .pasteIntoUnmanaged: return identities
        case .pasteInFromManaged, .pasteInBlocked: return .chosen
        // 4.4 URLs
        case .urlManagedBrowser, .urlDialerAny, .urlDialerManaged, .urlDialerNotManaged, .urlDialerCustom,
             .urlDialerBlocked:
            return .admin
        case .urlTwinWrapped, .urlNotHandled: return .chosen
        case .urlNoTwin: return .seed(4, "Build the SDK into your mobile app")
        case .urlNotQueried: return .seed(1, "Build the SDK into your mobile app")
        // 4.5 open-in types
        case .openInTypeNotDeclared: return .seed(0, "'Copy To' actions")
        case .openInFilterNeedsTwin: return .seed(4, "Build the SDK into your mobile app")
        // 4.6 locations
        case .saveOwnerUnmanaged, .openReceiverUnmanaged: return identities
        case .saveAllowedByPolicy, .saveSendNone, .saveLocationAllowed, .saveLocationNotAllowed: return .admin
        case .saveWrongAccount, .openWrongAccount: return .seed(0, "Unknown or unlisted locations")
        case .saveOther, .openOther: return .seed(0, "Unknown or unlisted locations")
        case .saveAccountDocument, .openAccountDocument: return .chosen
        case .openReceiveAllApps, .openReceiveNone, .openIngestionAllowed, .openLocationAllowed, .openLocationNotAllowed:
            return .admin
        // 1 identities an app asks to act under; 4.3 an empty pasteboard
        case .identitySet, .identityNoSDK, .identityNotSignedIn, .pasteboardEmpty: return .chosen
        case .identitySecondManaged: return .headers
        case .identityViewSet: return .seed(2, "Exit criteria")
        case .identityViewSingleIdentity: return .chosen
        // The admin reference names each conditional launch setting and its actions; how the
        // checks combine (the strongest failing action wins) is MAMLab's call.
        case .launchOSVersion, .launchAppVersion, .launchSDKVersion, .launchJailbroken, .launchModelNotAllowed,
             .launchThreatLevel, .launchOfflineAccess, .launchOfflineWipe:
            return .admin
        case .launchUnmanaged, .launchAllowed: return .chosen
        }
    }
}
