/// Each rule and its source in words an admin reads (the matrix report, `explain`'s readers):
/// no internal names, no section numbers. docs/SEMANTICS.md §4 has the precise statement.
extension Rule {
    /// Why the decision came out as it did, as a sentence. The switch has no default: a new
    /// rule does not compile without its words.
    public var plainWords: String {
        switch self {
        // 4.1 send
        case .senderUnmanaged: return "The sending app is not acting for the organization, so no policy limits what it sends."
        case .sendAllApps: return "The sender's policy lets organization data go to any app."
        case .sendNone: return "The sender's policy lets organization data go to no app."
        case .sendNoneOpenInFiltered: return "The sender's policy lets organization data go to no app, so no app is offered to share it with."
        case .sendToManagedTarget: return "The sender's policy lets organization data go to policy-managed apps, and the receiving app is managed under the same account."
        case .sendImportIdentityMismatch: return "The importing app is not acting under the account that owns the data, so it may not pull it."
        case .sendExemptScheme: return "The policy exempts this link's scheme, so the link opens outside managed apps as it is."
        case .sendOpenInFiltered: return "The policy filters the share sheet: an app that is not managed is not offered."
        case .sendOpenInOSSharing: return "The policy allows sharing through the system to apps the device management manages, and this one is."
        case .sendOpenInEncrypted: return "The receiving app is not managed, so it gets the document encrypted and cannot read it."
        case .sendToUnmanagedBlocked: return "The sender's policy lets organization data go only to policy-managed apps, and the receiving app is not one under the data's account."
        // 4.2 receive
        case .receiverUnmanaged: return "The receiving app is not acting for the organization, so no policy limits what it takes in."
        case .receiverUnmanagedSwitch: return "The receiving app has the data's work account signed in, so it switches to that account to take the data."
        case .receiveAllApps: return "The receiver's policy accepts data from any app."
        case .receiveAllAppsTagged: return "The receiver's policy accepts data from any app and marks data without an owner as the organization's."
        case .receiveFromManaged: return "The receiver's policy accepts organization data from policy-managed apps, and this data is."
        case .receiveManagedBlocked: return "The receiver's policy accepts data only from policy-managed apps, and this data is not organization data from one."
        case .receiveNone: return "The receiver's policy accepts data from no app."
        case .receivePassiveSwitchToPersonal: return "The work account may not take this data, so the receiving app switches to its personal account to take it."
        case .receiveImportBlocked: return "The receiver's policy refuses this data, and an import is not turned into a switch to a personal account."
        // 4.3 pasteboard
        case .pasteboardEmpty: return "Nothing was copied, so the paste is empty."
        case .pasteSameParty: return "Copy and paste within one app and account is never restricted."
        case .pasteOrgAllApps: return "The source's policy lets organization data be pasted into any app."
        case .pasteOrgManagedTarget: return "The source's policy lets organization data be pasted into managed apps, and the target acts under the same work account."
        case .pasteOrgNotManagedTarget: return "The source's policy lets organization data be pasted only into managed apps, and the target is not acting under the work account."
        case .pasteOrgBlocked: return "The source's policy blocks pasting organization data into other apps."
        case .pasteUnderCharacterLimit: return "The text is within the policy's character limit, which may be pasted anywhere."
        case .pasteIntoUnmanaged: return "The target is not acting for the organization, so a paste of other data into it is not restricted."
        case .pasteInAllowed: return "The target's policy accepts pastes from any app."
        case .pasteInFromManaged: return "The target's policy accepts pastes from policy-managed apps, and the source is one."
        case .pasteInBlocked: return "The target's policy accepts pastes only from policy-managed apps, and the source is not one."
        // 4.4 URLs
        case .urlManagedBrowser: return "The policy opens web links in the managed browser, so the link is rewritten for it."
        case .urlDialerAny: return "The policy lets phone numbers open in any dialer."
        case .urlDialerManaged: return "The policy lets phone numbers open in policy-managed dialers, and this one is."
        case .urlDialerNotManaged: return "The policy lets phone numbers open only in policy-managed dialers, and this one is not."
        case .urlDialerCustom: return "The policy sends phone numbers to a chosen dialer app, so the link is rewritten for it."
        case .urlDialerBlocked: return "The policy lets phone numbers open in no dialer."
        case .urlTwinWrapped: return "The link goes to a managed app in its managed form, carrying the sender's work account."
        case .urlNoTwin: return "The policy sends links only to managed apps, and the target cannot take a managed link."
        case .urlNotHandled: return "No app on the device opens this link there."
        case .urlNotQueried: return "The app did not declare that it asks about the managed form of this link, so it may not open it."
        // 4.5 open-in types
        case .openInTypeNotDeclared: return "The target does not say it opens this kind of document, so it is not offered."
        case .openInFilterNeedsTwin: return "The share sheet is filtered and the target does not declare the managed form of this document type."
        // 4.6 locations: saving
        case .saveOwnerUnmanaged: return "The data is not the organization's, so it may be saved anywhere."
        case .saveAllowedByPolicy: return "The policy lets copies of organization data be saved anywhere."
        case .saveSendNone: return "The policy lets organization data go nowhere, so it may not be saved."
        case .saveLocationAllowed: return "The policy lists this storage location as allowed for organization data."
        case .saveLocationNotAllowed: return "The policy does not list this storage location as allowed for organization data."
        case .saveWrongAccount: return "The location belongs to another account than the work account, so organization data may not be saved there."
        case .saveAccountDocument: return "The document belongs to the work account, so its data may be saved into it."
        case .saveOther: return "The location is unknown, so organization data may not be saved there."
        // 4.6 locations: opening
        case .openReceiverUnmanaged: return "The app is not acting for the organization, so it may open data from anywhere."
        case .openReceiveAllApps: return "The policy accepts data from anywhere."
        case .openReceiveNone: return "The policy accepts data from nowhere."
        case .openIngestionAllowed: return "The policy lets data be opened into organization documents."
        case .openLocationAllowed: return "The policy lists this location as one data may be opened from."
        case .openLocationNotAllowed: return "The policy does not list this location as one data may be opened from."
        case .openWrongAccount: return "The location belongs to another account than the work account, so data may not be opened from it."
        case .openAccountDocument: return "The document belongs to the work account, so it may be opened."
        case .openOther: return "The location is unknown, so data may not be opened from it."
        // 1 identities
        case .identitySet: return "The app may act under this identity."
        case .identityNoSDK: return "The app does not include the app-protection SDK, so it cannot act under a work identity."
        case .identityNotSignedIn: return "The account is not signed in to the app, so the app cannot act under it."
        case .identitySecondManaged: return "Another work account is already managed in this app; an app is managed for one account at a time."
        case .identityViewSet: return "The view may show these accounts together; when one of them is a work account, the strictest policy applies to the whole view."
        // 9 conditional launch
        case .launchUnmanaged: return "No policy covers this account, so the app opens without launch checks."
        case .launchAllowed: return "The device meets every condition the policy sets for opening the app."
        case .launchOSVersion: return "The device runs an iOS release older than the policy's minimum."
        case .launchAppVersion: return "This version of the app is older than the policy's minimum."
        case .launchSDKVersion: return "The app was built with an SDK release older than the policy's minimum."
        case .launchJailbroken: return "The device is jailbroken, and the policy requires one that is not."
        case .launchModelNotAllowed: return "The policy allows only certain device models, and this one is not among them."
        case .launchThreatLevel: return "The device's threat level is higher than the policy accepts."
        case .launchOfflineAccess: return "The device has been offline too long; work data opens again once it is back online."
        case .launchOfflineWipe: return "The device has been offline so long that the policy removes the work data from the app."
        case .identityViewSingleIdentity: return "The app shows one account at a time, so a view cannot show several."
        }
    }
}

extension RuleSource {
    /// Where the rule comes from, in words: a small note beside `Rule.plainWords`.
    public var plainNote: String {
        switch self {
        case let .seed(_, section): return "from the vendor's SDK developer guide, “\(section)”"
        case .headers: return "from the SDK's public headers"
        case .admin: return "from the vendor's documentation of the policy setting"
        case .log: return "from the vendor's app-protection log reference"
        case .observed: return "as observed by the SDK's users; not documented"
        case .chosen: return "MAMLab's own choice where the vendor's documents are silent"
        }
    }
}
