/// How data moves between two apps.
public enum TransferMode: String, Sendable, Hashable, CaseIterable {
    /// The sender hands the data over; the receiver takes it passively (seed 002 "send" and
    /// "passive receive").
    case push
    /// The receiver pulls the data while it runs (seed 002 "import").
    case `import`
}

/// What is being sent, for the sender's rules that differ by kind (URLs have their own path,
/// `openURL`, because of twins, exemptions, the managed browser and the dialer).
public enum SendKind: Sendable, Hashable {
    case data
    case openIn
}

extension PolicyEngine {
    /// The sender's check (SEMANTICS §4.1), decided on the sender's policy.
    public func send(from sender: Party, to target: Party, mode: TransferMode, kind: SendKind = .data) -> Decision {
        guard let ref = sender.activeRef, let account = sender.enrolled else {
            return Decision(.allowed, .senderUnmanaged)
        }
        switch ref.value.settings.send {
        case .allApps:
            return Decision(.allowed, .sendAllApps)
        case .none:
            // seed 000 §'Copy To' actions: once the policy forbids sharing to unmanaged apps the
            // share sheet's Copy-to actions are gone, and None forbids every app, so no app is
            // offered (SEMANTICS 4.1.3 says why this is not the admin text's encrypted copy).
            if kind == .openIn && mode == .push { return Decision(.filtered, .sendNoneOpenInFiltered) }
            return Decision(.blocked, .sendNone)
        case .managedApps:
            switch mode {
            case .push where target.isPolicyManaged(under: account):
                if target.acts(as: account) { return Decision(.allowed, .sendToManagedTarget) }
                var d = Decision(.switched, .sendToManagedTarget)
                d.receivingIdentity = .account(account)
                return d
            case .import where target.isActing(under: account):
                return Decision(.allowed, .sendToManagedTarget)
            case .import where target.isPolicyManaged(under: account):
                return Decision(.blocked, .sendImportIdentityMismatch)
            default:
                break
            }
            // Filtering, OS sharing and encrypted delivery describe a document the sender hands
            // over through the share sheet [admin]. An active import pulls the data into an app
            // that is not managed under the account, which seed 002's exit criteria block
            // whatever the kind ("Unmanaged identity import from managed app").
            switch (kind, mode) {
            case (.openIn, .push):
                if ref.value.settings.filterOpenInToOnlyManagedApps { return Decision(.filtered, .sendOpenInFiltered) }
                if ref.value.settings.disableProtectionOfManagedOutboundOpenInData && tenant.device.mdmEnrolled && target.isMDMManaged {
                    return Decision(.allowed, .sendOpenInOSSharing)
                }
                return Decision(.encrypted, .sendOpenInEncrypted)
            default:
                return Decision(.blocked, .sendToUnmanagedBlocked)
            }
        }
    }

    /// The receiver's check (SEMANTICS §4.2), decided on the receiver's policy once the sender's
    /// check passed. `owner` is the managed account of the data, nil for personal data.
    public func receive(by receiver: Party, owner: Account?, fromManagedSender: Bool, mode: TransferMode) -> Decision {
        guard let ref = receiver.activeRef else {
            // Org data reaching a personal identity of an app that has the data's account
            // enrolled makes the app switch to that account [doc].
            if let owner, receiver.isPolicyManaged(under: owner), !receiver.acts(as: owner) {
                var d = Decision(.switched, .receiverUnmanagedSwitch)
                d.receivingIdentity = .account(owner)
                return d
            }
            return Decision(.allowed, .receiverUnmanaged)
        }
        switch ref.value.settings.receive {
        case .allApps:
            if owner == nil, ref.value.settings.protectInboundDataFromUnknownSources, tenant.device.mdmEnrolled,
               let mdmUser = tenant.device.mdmUser {
                var d = Decision(.allowed, .receiveAllAppsTagged)
                d.receivingIdentity = .account(mdmUser)
                return d
            }
            return Decision(.allowed, .receiveAllApps)
        case .managedApps:
            if owner != nil && fromManagedSender { return Decision(.allowed, .receiveFromManaged) }
            return refused(receiver, mode: mode, rule: .receiveManagedBlocked)
        case .none:
            return refused(receiver, mode: mode, rule: .receiveNone)
        }
    }

    /// §4.2.5: what a refusal turns into.
    /// The refusal's site is the caller's, where `rule` was chosen.
    private func refused(_ receiver: Party, mode: TransferMode, rule: Rule, filePath: StaticString = #filePath, line: UInt = #line) -> Decision {
        if mode == .import { return Decision(.blocked, .receiveImportBlocked) }
        if receiver.isMultiIdentity && receiver.personalAccountSignedIn {
            var d = Decision(.switched, .receivePassiveSwitchToPersonal)
            d.receivingIdentity = .personal
            return d
        }
        return Decision(.blocked, rule, filePath: filePath, line: line)
    }

    /// A whole transfer: the sender's check, then the receiver's (seed 002's send, import and
    /// passive-receive tables are this function with `.push`, `.import` and `.push`).
    public func transfer(from sender: Party, to receiver: Party, mode: TransferMode, kind: SendKind = .data) -> Decision {
        let out = send(from: sender, to: receiver, mode: mode, kind: kind)
        guard out.outcome.delivers else { return out }
        // An item that arrives encrypted is not readable, so the receiver has nothing to decide.
        if out.outcome == .encrypted { return out }
        // The receiver is judged as it stands when the data arrives; a personal identity of an
        // app with the data's account enrolled switches by §4.2.1.
        var final = receive(by: receiver, owner: sender.dataAccount, fromManagedSender: sender.isManaged, mode: mode)
        // An unmanaged receiver has nothing to say; the sender's rule is the one that decided.
        if final.rule == .receiverUnmanaged { return out }
        final.senderRule = out.rule
        if final.outcome == .allowed && out.outcome == .switched {
            final.outcome = .switched
            final.receivingIdentity = out.receivingIdentity
        }
        return final
    }
}
