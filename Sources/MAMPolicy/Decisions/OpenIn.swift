/// Content-type twins for Open-in and share (SEMANTICS §4.5).
public enum ContentType {
    public static let twinPrefix = "com.microsoft.intune.mam."

    /// `com.microsoft.intune.mam.T` for `T` [doc].
    public static func twin(of type: String) -> String {
        isTwin(type) ? type : twinPrefix + type
    }

    /// `T` for `com.microsoft.intune.mam.T`; other types unchanged (what a receiving SDK does).
    public static func stripped(_ type: String) -> String {
        isTwin(type) ? String(type.dropFirst(twinPrefix.count)) : type
    }

    /// Whether `type` starts with the twin prefix, compared without case and without allocating.
    public static func isTwin(_ type: String) -> Bool {
        var text = type
        return text.withUTF8 { bytes in
            guard bytes.count >= prefixBytes.count else { return false }
            for (b, p) in zip(bytes, prefixBytes) where b | 0x20 != p && b != p { return false }
            return true
        }
    }

    private static let prefixBytes = Array(twinPrefix.utf8)

    /// Lower-cased, without allocating when it already is (UTIs compare without case).
    static func key(_ type: String) -> String {
        var text = type
        let hasCapitals = text.withUTF8 { $0.contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") } }
        return hasCapitals ? type.lowercased() : type
    }
}

extension PolicyEngine {
    /// A content type with its twin, worked out once for a whole share sheet.
    struct TypePair {
        let plain: String, twin: String, plainKey: String
        init(_ type: String) {
            plain = ContentType.stripped(type)
            twin = ContentType.twin(of: plain)
            plainKey = ContentType.key(plain)
        }
    }

    /// Sending a document of `type` from `sender` to `target` through Open-in or share: the
    /// target's offer (§4.5), the sender's check (§4.1) and the receiver's (§4.2, passive).
    public func openIn(type: String, from sender: Party, to target: Party, mode: TransferMode = .push) -> Decision {
        openIn(TypePair(type), from: sender, to: target, mode: mode)
    }

    func openIn(_ type: TypePair, from sender: Party, to target: Party, mode: TransferMode) -> Decision {
        let plain = type.plain, twin = type.twin
        let app = target.appRef.value
        let declared = app.typeDeclarations[type.plainKey] ?? []
        let declaresTwin = declared.contains(.twin)
        let declaresPlain = declaresTwin || app.acceptsAnyDocument || declared.contains(.plain)
        guard declaresTwin || declaresPlain else { return Decision(.filtered, .openInTypeNotDeclared) }

        // Filtering trims the share sheet; an import has none, and §4.1.4 blocks it anyway.
        if mode == .push, let ref = sender.activeRef, ref.value.settings.send == .managedApps,
           ref.value.settings.filterOpenInToOnlyManagedApps, !declaresTwin {
            return Decision(.filtered, .openInFilterNeedsTwin)
        }
        // An import is the receiver pulling: seed 002's import table (blocked towards an unmanaged
        // app), not a push that could travel encrypted.
        var d = transfer(from: sender, to: target, mode: mode, kind: mode == .push ? .openIn : .data)
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
        let pair = TypePair(type)
        var out: [(target: Party, decision: Decision)] = []
        out.reserveCapacity(candidates.count)
        for c in candidates where !(c.appRef === sender.appRef || c.bundleID == sender.bundleID) {
            let d = openIn(pair, from: sender, to: c, mode: .push)
            if d.rule != .openInTypeNotDeclared { out.append((c, d)) }
        }
        return out
    }
}
