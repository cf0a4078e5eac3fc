/// Every rule of SEMANTICS §4 the engine can answer with.
///
/// `id` is the paragraph of docs/SEMANTICS.md that states the rule, `source` where the rule
/// comes from (RuleSource.swift), `fields` the policy properties (Graph names) that decided,
/// and `side` whose policy they were read from.
///
/// A new rule: its case here and a line in each switch below, its source in RuleSource.swift
/// (that switch has no default, so a rule without a source does not compile), and a row in
/// its section of docs/SEMANTICS.md (SpecificationTests fails until the page lists it).
public enum Rule: String, Sendable, Hashable, CaseIterable {
    // 4.1 send
    case senderUnmanaged, sendAllApps, sendNone, sendNoneOpenInFiltered, sendToManagedTarget, sendImportIdentityMismatch
    case sendExemptScheme, sendOpenInFiltered, sendOpenInOSSharing, sendOpenInEncrypted, sendToUnmanagedBlocked
    // 4.2 receive
    case receiverUnmanaged, receiverUnmanagedSwitch, receiveAllApps, receiveAllAppsTagged
    case receiveFromManaged, receiveManagedBlocked, receiveNone, receivePassiveSwitchToPersonal, receiveImportBlocked
    // 4.3 pasteboard
    case pasteSameParty, pasteOrgAllApps, pasteOrgManagedTarget, pasteOrgNotManagedTarget, pasteOrgBlocked
    case pasteUnderCharacterLimit, pasteIntoUnmanaged, pasteInAllowed, pasteInFromManaged, pasteInBlocked
    // 4.4 URLs
    case urlManagedBrowser, urlDialerAny, urlDialerManaged, urlDialerNotManaged, urlDialerCustom, urlDialerBlocked
    case urlTwinWrapped, urlNoTwin, urlNotHandled, urlNotQueried
    // 4.5 open-in types
    case openInTypeNotDeclared, openInFilterNeedsTwin
    // 4.6 locations
    case saveOwnerUnmanaged, saveAllowedByPolicy, saveSendNone, saveLocationAllowed, saveLocationNotAllowed
    case saveWrongAccount, saveAccountDocument, saveOther
    case openReceiverUnmanaged, openReceiveAllApps, openReceiveNone, openIngestionAllowed, openLocationAllowed
    case openLocationNotAllowed, openWrongAccount, openAccountDocument, openOther
    // 1 identities an app asks to act under; 4.3 an empty pasteboard
    case identitySet, identityNoSDK, identityNotSignedIn, identitySecondManaged, pasteboardEmpty
    // 1 a view that shows several accounts at once
    case identityViewSet, identityViewSingleIdentity
    // 9 conditional launch
    case launchUnmanaged, launchAllowed, launchOSVersion, launchAppVersion, launchSDKVersion, launchJailbroken
    case launchModelNotAllowed, launchThreatLevel, launchOfflineAccess, launchOfflineWipe

    public var id: String {
        switch self {
        case .senderUnmanaged: return "4.1.1"
        case .sendAllApps: return "4.1.2"
        case .sendNone, .sendNoneOpenInFiltered: return "4.1.3"
        case .sendToManagedTarget, .sendImportIdentityMismatch, .sendExemptScheme, .sendOpenInFiltered,
             .sendOpenInOSSharing, .sendOpenInEncrypted, .sendToUnmanagedBlocked: return "4.1.4"
        case .receiverUnmanaged, .receiverUnmanagedSwitch: return "4.2.1"
        case .receiveAllApps, .receiveAllAppsTagged: return "4.2.2"
        case .receiveFromManaged, .receiveManagedBlocked: return "4.2.3"
        case .receiveNone: return "4.2.4"
        case .receivePassiveSwitchToPersonal, .receiveImportBlocked: return "4.2.5"
        case .pasteSameParty: return "4.3.1"
        case .pasteOrgAllApps, .pasteOrgManagedTarget, .pasteOrgNotManagedTarget, .pasteOrgBlocked,
             .pasteUnderCharacterLimit: return "4.3.2"
        case .pasteIntoUnmanaged, .pasteInAllowed, .pasteInFromManaged, .pasteInBlocked: return "4.3.3"
        case .urlManagedBrowser, .urlDialerAny, .urlDialerManaged, .urlDialerNotManaged, .urlDialerCustom,
             .urlDialerBlocked, .urlTwinWrapped, .urlNoTwin, .urlNotHandled, .urlNotQueried: return "4.4"
        case .openInTypeNotDeclared, .openInFilterNeedsTwin: return "4.5"
        case .saveOwnerUnmanaged, .saveAllowedByPolicy, .saveSendNone, .saveLocationAllowed, .saveLocationNotAllowed,
             .saveWrongAccount, .saveAccountDocument, .saveOther: return "4.6.save"
        case .openReceiverUnmanaged, .openReceiveAllApps, .openReceiveNone, .openIngestionAllowed, .openLocationAllowed,
             .openLocationNotAllowed, .openWrongAccount, .openAccountDocument, .openOther: return "4.6.open"
        case .identitySet, .identityNoSDK, .identityNotSignedIn, .identitySecondManaged: return "1.identity"
        case .pasteboardEmpty: return "4.3.0"
        case .identityViewSet, .identityViewSingleIdentity: return "1.view"
        case .launchUnmanaged, .launchAllowed: return "9.0"
        case .launchOSVersion: return "9.1"
        case .launchAppVersion: return "9.2"
        case .launchSDKVersion: return "9.3"
        case .launchJailbroken: return "9.4"
        case .launchModelNotAllowed: return "9.5"
        case .launchThreatLevel: return "9.6"
        case .launchOfflineAccess, .launchOfflineWipe: return "9.7"
        }
    }

    /// `doc`, `observed` or `chosen`, from the rule's source (RuleSource.swift).
    public var tag: Tag { source.tag }

    public var side: PolicySide {
        switch self {
        case .senderUnmanaged, .sendAllApps, .sendNone, .sendNoneOpenInFiltered, .sendToManagedTarget, .sendImportIdentityMismatch,
             .sendExemptScheme, .sendOpenInFiltered, .sendOpenInOSSharing, .sendOpenInEncrypted, .sendToUnmanagedBlocked,
             .pasteOrgAllApps, .pasteOrgManagedTarget, .pasteOrgNotManagedTarget, .pasteOrgBlocked, .pasteUnderCharacterLimit,
             .urlManagedBrowser, .urlDialerAny, .urlDialerManaged, .urlDialerNotManaged, .urlDialerCustom, .urlDialerBlocked,
             .urlTwinWrapped, .urlNoTwin, .urlNotQueried, .openInFilterNeedsTwin:
            return .sender
        case .receiverUnmanaged, .receiverUnmanagedSwitch, .receiveAllApps, .receiveAllAppsTagged, .receiveFromManaged,
             .receiveManagedBlocked, .receiveNone, .receivePassiveSwitchToPersonal, .receiveImportBlocked,
             .pasteIntoUnmanaged, .pasteInAllowed, .pasteInFromManaged, .pasteInBlocked,
             .openReceiverUnmanaged, .openReceiveAllApps, .openReceiveNone, .openIngestionAllowed, .openLocationAllowed,
             .openLocationNotAllowed, .openWrongAccount, .openAccountDocument, .openOther:
            return .receiver
        case .saveOwnerUnmanaged, .saveAllowedByPolicy, .saveSendNone, .saveLocationAllowed, .saveLocationNotAllowed,
             .saveWrongAccount, .saveAccountDocument, .saveOther:
            return .owner
        case .pasteSameParty, .urlNotHandled, .openInTypeNotDeclared, .identitySet, .identityNoSDK, .identityNotSignedIn,
             .identitySecondManaged, .pasteboardEmpty, .identityViewSet, .identityViewSingleIdentity, .launchUnmanaged:
            return .none
        case .launchAllowed, .launchOSVersion, .launchAppVersion, .launchSDKVersion, .launchJailbroken, .launchModelNotAllowed,
             .launchThreatLevel, .launchOfflineAccess, .launchOfflineWipe:
            return .owner
        }
    }

    /// The Graph properties that decided.
    public var fields: [String] {
        let send = "allowedOutboundDataTransferDestinations", receive = "allowedInboundDataTransferSources"
        let clip = "allowedOutboundClipboardSharingLevel"
        switch self {
        case .sendAllApps, .sendNone, .sendNoneOpenInFiltered, .sendToManagedTarget, .sendImportIdentityMismatch, .sendToUnmanagedBlocked,
             .urlTwinWrapped, .urlNoTwin, .urlNotQueried:
            return [send]
        case .sendExemptScheme: return [send, "exemptedAppProtocols"]
        case .sendOpenInFiltered, .openInFilterNeedsTwin: return [send, "filterOpenInToOnlyManagedApps"]
        case .sendOpenInOSSharing: return [send, "disableProtectionOfManagedOutboundOpenInData"]
        case .sendOpenInEncrypted: return [send, "filterOpenInToOnlyManagedApps", "disableProtectionOfManagedOutboundOpenInData"]
        case .receiveAllApps, .receiveFromManaged, .receiveManagedBlocked, .receiveNone, .receivePassiveSwitchToPersonal,
             .receiveImportBlocked, .openReceiveAllApps, .openReceiveNone:
            return [receive]
        case .receiveAllAppsTagged: return [receive, "protectInboundDataFromUnknownSources"]
        case .pasteOrgAllApps, .pasteOrgManagedTarget, .pasteOrgNotManagedTarget, .pasteOrgBlocked,
             .pasteInAllowed, .pasteInFromManaged, .pasteInBlocked:
            return [clip]
        case .pasteUnderCharacterLimit: return [clip, "allowedOutboundClipboardSharingExceptionLength"]
        case .urlManagedBrowser: return ["managedBrowserToOpenLinksRequired", "managedBrowser", "customBrowserProtocol"]
        case .urlDialerAny, .urlDialerManaged, .urlDialerNotManaged, .urlDialerBlocked: return ["dialerRestrictionLevel"]
        case .urlDialerCustom: return ["dialerRestrictionLevel", "customDialerAppProtocol"]
        case .saveAllowedByPolicy, .saveSendNone: return [send, "saveAsBlocked"]
        case .saveLocationAllowed, .saveLocationNotAllowed, .saveWrongAccount, .saveAccountDocument, .saveOther:
            return ["saveAsBlocked", "allowedDataStorageLocations"]
        case .openIngestionAllowed: return [receive, "blockDataIngestionIntoOrganizationDocuments"]
        case .openLocationAllowed, .openLocationNotAllowed, .openWrongAccount, .openAccountDocument, .openOther:
            return ["blockDataIngestionIntoOrganizationDocuments", "allowedDataIngestionLocations"]
        case .senderUnmanaged, .receiverUnmanaged, .receiverUnmanagedSwitch, .pasteSameParty, .pasteIntoUnmanaged,
             .urlNotHandled, .openInTypeNotDeclared, .saveOwnerUnmanaged, .openReceiverUnmanaged, .identitySet, .identityNoSDK,
             .identityNotSignedIn, .identitySecondManaged, .pasteboardEmpty, .identityViewSet, .identityViewSingleIdentity,
             .launchUnmanaged, .launchAllowed:
            return []
        case .launchOSVersion: return ["minimumWarningOsVersion", "minimumRequiredOsVersion", "minimumWipeOsVersion"]
        case .launchAppVersion: return ["minimumWarningAppVersion", "minimumRequiredAppVersion", "minimumWipeAppVersion"]
        case .launchSDKVersion: return ["minimumWarningSdkVersion", "minimumRequiredSdkVersion", "minimumWipeSdkVersion"]
        case .launchJailbroken: return ["deviceComplianceRequired", "appActionIfDeviceComplianceRequired"]
        case .launchModelNotAllowed: return ["allowedIosDeviceModels", "appActionIfIosDeviceModelNotAllowed"]
        case .launchThreatLevel: return ["maximumAllowedDeviceThreatLevel", "mobileThreatDefenseRemediationAction"]
        case .launchOfflineAccess: return ["periodOfflineBeforeAccessCheck"]
        case .launchOfflineWipe: return ["periodOfflineBeforeWipeIsEnforced"]
        }
    }

    /// What the user sees when this rule stops the data.
    public var message: String {
        switch self {
        case .sendNone, .sendNoneOpenInFiltered: return UserMessage.sendNone
        case .sendImportIdentityMismatch, .sendToUnmanagedBlocked, .sendOpenInFiltered, .sendOpenInEncrypted,
             .urlNoTwin, .urlDialerNotManaged, .urlNotQueried, .openInFilterNeedsTwin:
            return UserMessage.sendManaged
        case .urlDialerBlocked: return UserMessage.sendNone
        case .receiveNone: return UserMessage.receiveNone
        case .receiveManagedBlocked, .receiveImportBlocked: return UserMessage.receiveManaged
        case .pasteOrgNotManagedTarget, .pasteOrgBlocked, .pasteInBlocked: return UserMessage.paste
        case .saveSendNone, .saveLocationNotAllowed, .saveWrongAccount, .saveOther, .openReceiveNone,
             .openLocationNotAllowed, .openWrongAccount, .openOther:
            return "\(UserMessage.sharingTitle): \(UserMessage.sharing)"
        case .urlNotHandled: return UserMessage.noHandler
        case .openInTypeNotDeclared: return UserMessage.noDocumentHandler
        case .identityNoSDK, .identityNotSignedIn, .identitySecondManaged, .identityViewSingleIdentity: return UserMessage.identityRefused
        case .launchOSVersion, .launchAppVersion, .launchSDKVersion: return UserMessage.launchVersion
        case .launchJailbroken, .launchModelNotAllowed, .launchThreatLevel: return UserMessage.launchDevice
        case .launchOfflineAccess: return UserMessage.launchOffline
        case .launchOfflineWipe: return UserMessage.launchWiped
        default: return ""
        }
    }

    /// One line on why, for `explain`.
    public var summary: String {
        switch self {
        case .senderUnmanaged: return "the sender is not a managed party, so its policy is unrestricted"
        case .sendAllApps: return "the sender's policy lets org data go to any app"
        case .sendNone: return "the sender's policy lets org data go to no other app"
        case .sendNoneOpenInFiltered: return "the sender's policy lets org data go to no other app, so the share sheet offers no app to copy the document to"
        case .sendToManagedTarget: return "the target is policy-managed under the data's account"
        case .sendImportIdentityMismatch: return "an active import needs the importing app to run under the data's managed account"
        case .sendExemptScheme: return "the URL scheme is exempt from the sender's policy and opens unwrapped"
        case .sendOpenInFiltered: return "Open-In/Share filtering hides targets that are not managed"
        case .sendOpenInOSSharing: return "OS sharing to an MDM-managed app on an MDM-enrolled device sends the document in clear"
        case .sendOpenInEncrypted: return "the document reaches the unmanaged target encrypted"
        case .sendToUnmanagedBlocked: return "the target is not policy-managed under the data's account"
        case .receiverUnmanaged: return "the receiver is not a managed party, so its policy is unrestricted"
        case .receiverUnmanagedSwitch: return "org data arriving at an app with its account enrolled, shown as another identity or none, switches the app to that account"
        case .receiveAllApps: return "the receiver's policy accepts data from any app"
        case .receiveAllAppsTagged: return "data with no owner is tagged with the device's MDM user and becomes org data"
        case .receiveFromManaged: return "org data from a policy-managed sender is accepted"
        case .receiveManagedBlocked: return "the receiver accepts only org data from policy-managed apps"
        case .receiveNone: return "the receiver's policy accepts data from no app"
        case .receivePassiveSwitchToPersonal: return "refused under the managed account; the app switches to its personal account and takes the data as personal"
        case .receiveImportBlocked: return "an active import under the managed identity does not switch identity"
        case .pasteSameParty: return "same app, same identity"
        case .pasteOrgAllApps: return "the source's clipboard level lets org data be pasted into any app"
        case .pasteOrgManagedTarget: return "the paste target is policy-managed under the same account"
        case .pasteOrgNotManagedTarget: return "the paste target is not policy-managed under the same account"
        case .pasteOrgBlocked: return "the source's clipboard level blocks pasting org data elsewhere"
        case .pasteUnderCharacterLimit: return "the text is within the character limit that pastes anywhere"
        case .pasteIntoUnmanaged: return "the data is not org data and the target is not managed"
        case .pasteInAllowed: return "the target's clipboard level accepts pastes from other apps"
        case .pasteInFromManaged: return "the target's clipboard level accepts pastes from policy-managed parties"
        case .pasteInBlocked: return "the target's clipboard level refuses pastes from this source"
        case .urlManagedBrowser: return "web links must open in the managed browser"
        case .urlDialerAny: return "phone numbers may go to any dialer"
        case .urlDialerManaged: return "phone numbers may go to managed dialers, and the target is one"
        case .urlDialerNotManaged: return "phone numbers may go to managed dialers only"
        case .urlDialerCustom: return "phone numbers go to the policy's dialer app"
        case .urlDialerBlocked: return "phone numbers may not leave the app"
        case .urlTwinWrapped: return "the URL travels as its -intunemam twin with the sender's identity"
        case .urlNoTwin: return "only SDK apps register -intunemam twins; the target cannot receive org URLs"
        case .urlNotHandled: return "the target does not register the URL's scheme"
        case .urlNotQueried: return "the scheme's -intunemam twin is not in LSApplicationQueriesSchemes"
        case .openInTypeNotDeclared: return "the target declares neither the type nor its com.microsoft.intune.mam. twin"
        case .openInFilterNeedsTwin: return "under filtering only apps declaring the com.microsoft.intune.mam. twin are offered"
        case .saveOwnerUnmanaged: return "the data's owner is not managed"
        case .saveAllowedByPolicy: return "the policy does not restrict saving copies"
        case .saveSendNone: return "the policy lets org data go nowhere"
        case .saveLocationAllowed: return "the location is among the allowed storage locations"
        case .saveLocationNotAllowed: return "the location is not among the allowed storage locations"
        case .saveWrongAccount: return "the location's account is not the managed account"
        case .saveAccountDocument: return "a document of the managed account stays with it"
        case .saveOther: return "unknown locations are never allowed"
        case .openReceiverUnmanaged: return "the receiving party is not managed"
        case .openReceiveAllApps: return "the receiver accepts data from any app"
        case .openReceiveNone: return "the receiver accepts data from nowhere"
        case .openIngestionAllowed: return "opening data into org documents is not restricted"
        case .openLocationAllowed: return "the location is among the allowed ingestion locations"
        case .openLocationNotAllowed: return "the location is not among the allowed ingestion locations"
        case .openWrongAccount: return "the location's account is not the managed account"
        case .openAccountDocument: return "a document of the managed account may be opened"
        case .openOther: return "an unknown location is never an ingestion location"
        case .identitySet: return "the app acts under an identity it has signed in (or personal)"
        case .identityNoSDK: return "an app without the SDK has no identity to set; it stays unmanaged"
        case .identityNotSignedIn: return "the app has not signed this account in"
        case .identitySecondManaged: return "another managed account is enrolled in this app; one managed account per app (227)"
        case .pasteboardEmpty: return "the pasteboard holds nothing, so an empty text is pasted"
        case .identityViewSet: return "a view shows several accounts the app has signed in; with one of them managed, it acts under the lock-down policy"
        case .identityViewSingleIdentity: return "only a multi-identity app shows several accounts in one view"
        case .launchUnmanaged: return "no policy targets the account, so nothing is checked at launch"
        case .launchAllowed: return "the device passes every launch check of the account's policy"
        case .launchOSVersion: return "the device's iOS is older than a minimum the policy sets"
        case .launchAppVersion: return "the app is older than a minimum the policy sets"
        case .launchSDKVersion: return "the app links an SDK older than a minimum the policy sets"
        case .launchJailbroken: return "the policy requires a device that is not jailbroken"
        case .launchModelNotAllowed: return "the device's model is not among the policy's allowed models"
        case .launchThreatLevel: return "the device's threat level is above the policy's maximum"
        case .launchOfflineAccess: return "the device has been offline longer than the policy allows before it checks access again"
        case .launchOfflineWipe: return "the device has been offline longer than the policy allows before it wipes the account's data"
        }
    }
}
