/// Decisions about who an app acts as, and about a paste with nothing to paste. The broker asks
/// these instead of improvising an answer, so every reply it sends is an engine decision.
extension PolicyEngine {
    /// An app asks to act under `wanted` (SEMANTICS §1).
    ///
    /// - Parameters:
    ///   - party: the app as it is now (its manifest, enrolled account, SDK use).
    ///   - signedIn: the accounts the broker knows this app has signed in. Never taken from the
    ///     app's own word: identity comes from the broker.
    public func setIdentity(_ wanted: Identity, for party: Party, signedIn: [Account]) -> Decision {
        // [chosen] Identity is an SDK call (seed 000 §Switch identities); an app without it has none to set.
        guard party.integratesSDK else { return Decision(.blocked, .identityNoSDK) }
        guard case let .account(account) = wanted else {
            var d = Decision(.allowed, .identitySet)
            d.receivingIdentity = .personal
            return d
        }
        guard signedIn.contains(account) else { return Decision(.blocked, .identityNotSignedIn) }
        // One managed account per app [doc: headers, SingleManagedAccountMode 227]: a second account
        // that a policy targets for this app cannot be enrolled beside the first.
        if let enrolled = party.enrolled, enrolled != account, tenant.policy(app: party.bundleID, account: account) != nil {
            return Decision(.blocked, .identitySecondManaged)
        }
        var d = Decision(.allowed, .identitySet)
        d.receivingIdentity = wanted
        return d
    }

    /// A paste when nothing was ever copied (or the pasteboard was cleared): nothing to decide
    /// about, answered as a decision so that the reply and the audit record agree [chosen].
    public func pasteFromEmptyPasteboard(into target: Party) -> Decision {
        Decision(.allowed, .pasteboardEmpty)
    }
}

extension URLText {
    /// The URL an app asked to open, with every identity claim it made removed: a `-intunemam`
    /// twin is unwrapped to the URL inside it, and `com.microsoft.intune.mam.*` query items are
    /// dropped. The broker then wraps it again, if the policy says so, with the sender's real
    /// identity; an app can never choose the identity a URL arrives with.
    ///
    /// The query is split on Unicode scalars, not characters: a character that joins the next
    /// one (a prepended mark before `?`, a combining mark after `&`) must not hide a separator
    /// that a receiver's byte-wise parser sees. A key counts as a claim however it is spelled:
    /// percent-encoded, in any ASCII case, or after a `;` that some parsers take as a separator.
    public static func withoutIdentityClaims(_ url: String) -> String {
        if let unwrapped = unwrap(url) { return withoutIdentityClaims(unwrapped.url) }
        let scalars = url.unicodeScalars
        guard let q = scalars.firstIndex(of: "?") else { return url }
        let kept = scalars[scalars.index(after: q)...].split(separator: "&", omittingEmptySubsequences: false).filter { item in
            !item.split(separator: ";").contains { isIdentityClaim(key: $0.prefix { $0 != "=" }) }
        }
        let base = String(scalars[..<q])
        return kept.isEmpty ? base : base + "?" + kept.map { String($0) }.joined(separator: "&")
    }

    /// Whether a query key, as a receiver decodes it, names one of the SDK's identity items.
    static func isIdentityClaim(key: Substring.UnicodeScalarView) -> Bool {
        var decoded: [UInt8] = []
        var bytes = Array(Substring(key).utf8)[...]
        while let b = bytes.popFirst() {
            if b == UInt8(ascii: "%"), bytes.count >= 2, let hi = hexDigit(bytes[bytes.startIndex]), let lo = hexDigit(bytes[bytes.startIndex + 1]) {
                decoded.append(hi << 4 | lo)
                bytes.removeFirst(2)
            } else {
                decoded.append(b)
            }
        }
        let lowered = decoded.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
        return lowered.starts(with: identityPrefix.utf8)
    }

    static let identityPrefix = "com.microsoft.intune.mam."
}

extension PolicyEngine {
    /// Opening a stored file from a location: the receiver's ingestion rules (§4.6), and, when
    /// the file holds org data, the owner's send rules as for an import (§4.1, §5): a file keeps
    /// its owner, so saving it somewhere never launders org data into personal data.
    ///
    /// - Parameter owner: the party that owns the file's data as it stands now (its app, acting
    ///   under the owning account); nil for personal data.
    public func openStoredFile(_ location: OpenLocation, account: Account?, owner: Party?, receiver: Party) -> Decision {
        let d = openFrom(location, account: account, receiver: receiver)
        guard d.outcome.delivers, let owner, owner.isManaged else { return d }
        let t = transfer(from: owner, to: receiver, mode: .import, kind: .data)
        return t.outcome.delivers && t.outcome != .switched ? d : t
    }
}

extension PolicyEngine {
    /// An active import of a document of `type` (the receiver pulls it from `source`): seed
    /// 002's import table, decided like `transfer(mode: .import)`; the item arrives typed as
    /// the plain type, which the importing SDK asked for.
    public func importDocument(type: String, from source: Party, to receiver: Party) -> Decision {
        var d = transfer(from: source, to: receiver, mode: .import)
        if d.outcome.delivers { d.deliveredType = ContentType.stripped(type) }
        return d
    }
}
