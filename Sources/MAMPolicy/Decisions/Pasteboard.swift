/// An item on the pasteboard, tagged when it was copied (SEMANTICS §4.3).
public struct PasteboardItem: Sendable, Hashable {
    /// The party that copied it.
    public var source: Party
    /// Length in UTF-16 code units, as iOS counts a string (`NSString.length`): an emoji
    /// outside the Basic Multilingual Plane counts 2 [chosen, docs/SEMANTICS.md §4.3].
    public var length: Int

    public init(source: Party, text: String) {
        self.source = source
        self.length = text.utf16.count
    }

    public init(source: Party, length: Int) {
        self.source = source
        self.length = length
    }

    /// Org data iff the copier was a managed party.
    public var owner: Account? { source.dataAccount }
}

extension PolicyEngine {
    /// Whether `item` may be pasted into `target`. A blocked paste carries the replacement text.
    public func paste(_ item: PasteboardItem, into target: Party) -> Decision {
        var d = pasteRule(item, into: target)
        if !d.outcome.delivers { d.replacementText = UserMessage.paste }
        return d
    }

    private func pasteRule(_ item: PasteboardItem, into target: Party) -> Decision {
        let source = item.source
        if source.identity == target.identity && (source.appRef === target.appRef || source.bundleID == target.bundleID) {
            return Decision(.allowed, .pasteSameParty)
        }
        if let ref = source.activeRef, let owner = source.enrolled {
            // Whatever the level, a short enough text pastes anywhere [doc].
            if ref.value.settings.clipboard != .allApps && item.length <= ref.value.settings.clipboardExceptionLength {
                return Decision(.allowed, .pasteUnderCharacterLimit)
            }
            switch ref.value.settings.clipboard {
            case .allApps:
                return Decision(.allowed, .pasteOrgAllApps)
            case .managedApps, .managedAppsWithPasteIn:
                // A personal identity inside a managed app is not a managed target [observed].
                return target.isActing(under: owner)
                    ? Decision(.allowed, .pasteOrgManagedTarget)
                    : Decision(.blocked, .pasteOrgNotManagedTarget)
            case .blocked:
                return Decision(.blocked, .pasteOrgBlocked)
            }
        }
        guard let ref = target.activeRef else { return Decision(.allowed, .pasteIntoUnmanaged) }
        switch ref.value.settings.clipboard {
        case .allApps, .managedAppsWithPasteIn:
            return Decision(.allowed, .pasteInAllowed)
        case .managedApps:
            // [chosen] "from a policy-managed party" read as the source app being managed by a
            // policy (its enrolled account is targeted), whichever identity copied the text.
            return source.policyRef != nil ? Decision(.allowed, .pasteInFromManaged) : Decision(.blocked, .pasteInBlocked)
        case .blocked:
            return Decision(.blocked, .pasteInBlocked)
        }
    }
}
