extension PolicyEngine {
    /// `isSaveToAllowedForLocation(location, account)` on the data owner's policy (SEMANTICS §4.6).
    /// `account` is the account of the location; nil for locations that take none.
    public func saveTo(_ location: SaveLocation, account: Account?, owner: Party) -> Decision {
        guard let ref = owner.activeRef, let managed = owner.enrolled else {
            return Decision(.allowed, .saveOwnerUnmanaged)
        }
        if ref.value.settings.send == .allApps || !ref.value.settings.saveAsBlocked { return Decision(.allowed, .saveAllowedByPolicy) }
        if ref.value.settings.send == .none { return Decision(.blocked, .saveSendNone) }
        switch location {
        case .other:
            return Decision(.blocked, .saveOther)
        case .accountDocument:
            // [chosen] a document of the managed account may be saved back to it.
            return account == managed ? Decision(.allowed, .saveAccountDocument) : Decision(.blocked, .saveWrongAccount)
        default:
            guard ref.value.settings.allowedSaveLocations.contains(location) else { return Decision(.blocked, .saveLocationNotAllowed) }
            // A nil account is not the managed account [doc].
            if location.takesAccount && account != managed { return Decision(.blocked, .saveWrongAccount) }
            return Decision(.allowed, .saveLocationAllowed)
        }
    }

    /// `isOpenFromAllowedForLocation(location, account)` on the receiving party's policy (SEMANTICS §4.6).
    public func openFrom(_ location: OpenLocation, account: Account?, receiver: Party) -> Decision {
        guard let ref = receiver.activeRef, let managed = receiver.enrolled else {
            return Decision(.allowed, .openReceiverUnmanaged)
        }
        switch ref.value.settings.receive {
        case .allApps: return Decision(.allowed, .openReceiveAllApps)
        case .none: return Decision(.blocked, .openReceiveNone)
        case .managedApps: break
        }
        if !ref.value.settings.blockDataIngestionIntoOrganizationDocuments { return Decision(.allowed, .openIngestionAllowed) }
        switch location {
        case .other:
            return Decision(.blocked, .openOther)
        case .accountDocument:
            return account == managed ? Decision(.allowed, .openAccountDocument) : Decision(.blocked, .openWrongAccount)
        case .oneDriveForBusiness, .sharePoint, .camera, .localStorage, .photos:
            // seed 000 §Supported open locations: local storage is one of the locations the admin
            // selects; only the debug form's bit 8 can select it (Graph's list cannot).
            guard ref.value.settings.allowedIngestionLocations.contains(location) else { return Decision(.blocked, .openLocationNotAllowed) }
            if location.takesAccount && account != managed { return Decision(.blocked, .openWrongAccount) }
            return Decision(.allowed, .openLocationAllowed)
        }
    }
}
