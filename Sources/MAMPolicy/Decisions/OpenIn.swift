/// Content-type twins for Open-in and share (SEMANTICS §4.5).
public enum ContentType {
    public static let twinPrefix = "com.microsoft.intune.mam."

    /// `com.microsoft.intune.mam.T` for `T` [doc].
    public static func twin(of type: String) -> String {
        type.lowercased().hasPrefix(twinPrefix) ? type : twinPrefix + type
    }

    /// `T` for `com.microsoft.intune.mam.T`; other types unchanged (what a receiving SDK does).
    public static func stripped(_ type: String) -> String {
        type.lowercased().hasPrefix(twinPrefix) ? String(type.dropFirst(twinPrefix.count)) : type
    }

    /// Types that accept any document [chosen: the generic supertypes of the type tree].
    static let anyDocument: Set<String> = ["public.item", "public.data", "public.content"]
}

extension PolicyEngine {
    /// Sending a document of `type` from `sender` to `target` through Open-in or share: the
    /// target's offer (§4.5), the sender's check (§4.1) and the receiver's (§4.2, passive).
    public func openIn(type: String, from sender: Party, to target: Party, mode: TransferMode = .push) -> Decision {
        let plain = ContentType.stripped(type)
        let twin = ContentType.twin(of: plain)
        let declared = target.appRef.value.contentTypeSet
        let declaresTwin = declared.contains(twin.lowercased())
        let declaresPlain = declared.contains(plain.lowercased()) || !declared.isDisjoint(with: ContentType.anyDocument)
        guard declaresTwin || declaresPlain else { return Decision(.filtered, .openInTypeNotDeclared) }

        if let ref = sender.activeRef, ref.value.settings.send == .managedApps,
           ref.value.settings.filterOpenInToOnlyManagedApps, !declaresTwin {
            return Decision(.filtered, .openInFilterNeedsTwin)
        }
        var d = transfer(from: sender, to: target, mode: mode, kind: .openIn)
        guard d.outcome.delivers else { return d }
        // A managed sender's item travels typed as the twin; a receiving SDK app strips the
        // prefix, an unmanaged one sees the twin and encrypted bytes [doc].
        let protected = sender.isManaged && sender.activeRef?.value.settings.send != .allApps && d.rule != .sendOpenInOSSharing
            && d.senderRule != .sendOpenInOSSharing
        if protected {
            d.deliveredType = target.integratesSDK && d.outcome != .encrypted ? plain : twin
        } else {
            d.deliveredType = plain
        }
        return d
    }

    /// The share sheet: every candidate that declares the type (or its twin), each with the
    /// decision a push to it would get. Filtered targets stay in the list with their decision so
    /// a caller can show why; `offered` drops them.
    public func openInTargets(type: String, from sender: Party, candidates: [Party]) -> [(target: Party, decision: Decision)] {
        candidates.compactMap { c in
            if c.appRef === sender.appRef || c.bundleID == sender.bundleID { return nil }
            let d = openIn(type: type, from: sender, to: c)
            return d.rule == .openInTypeNotDeclared ? nil : (c, d)
        }
    }
}
