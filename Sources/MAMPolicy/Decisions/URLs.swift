/// URL pieces the engine needs, without Foundation's `URL` (which is slow and rejects some
/// schemes apps use). Every piece is cut on Unicode scalars, never on characters: a mark that
/// joins a separator into one character would otherwise hide it from this code and not from a
/// receiver that reads bytes.
public enum URLText {
    /// The scheme of `url`: the text before the first `:`, if it is a valid scheme (RFC 3986).
    @inlinable
    public static func scheme(of url: String) -> Substring? {
        schemeKey(of: url)?.scheme
    }

    /// The scheme and its lower-cased form, in one pass over the bytes; lower-casing happens
    /// only when the scheme has capitals (this is on every URL decision's path).
    public static func schemeKey(of url: String) -> (scheme: Substring, key: String)? {
        var copy = url
        var length = 0
        var hasCapitals = false
        let valid: Bool = copy.withUTF8 { bytes in
            for b in bytes {
                if b == UInt8(ascii: ":") { return length > 0 }
                let lower = b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")
                let upper = b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z")
                let digit = b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")
                let mark = b == UInt8(ascii: "+") || b == UInt8(ascii: "-") || b == UInt8(ascii: ".")
                if length == 0 ? !(lower || upper) : !(lower || upper || digit || mark) { return false }
                hasCapitals = hasCapitals || upper
                length += 1
            }
            return false
        }
        guard valid else { return nil }
        let end = url.utf8.index(url.utf8.startIndex, offsetBy: length)
        let scheme = url[url.startIndex..<end]
        return (scheme, hasCapitals ? scheme.lowercased() : String(scheme))
    }

    /// The part after the scheme and its `:`. Counted in Unicode scalars, never in characters:
    /// a combining mark after the `:` joins it into one character, and would be lost with it.
    public static func rest(of url: String, scheme: Substring) -> Substring {
        Substring(url.unicodeScalars[url.unicodeScalars.index(after: scheme.endIndex)...])
    }

    public static let twinSuffix = "-intunemam"

    /// The `-intunemam` twin of a scheme [doc].
    public static func twin(of scheme: some StringProtocol) -> String { scheme.lowercased() + twinSuffix }

    public static let identityKey = "com.microsoft.intune.mam.identity"
    public static let oidKey = "com.microsoft.intune.mam.identity.oid"
    public static let policyKey = "com.microsoft.intune.mam.policy"

    /// Wraps a URL for a managed target [chosen; documented in docs/PROTOCOL.md]:
    /// `S-intunemam://<percent-encoded URL>?identity=<upn>&identity.oid=<oid>&policy=1`.
    public static func wrap(_ url: String, scheme: Substring, account: Account) -> String {
        var out = twin(of: scheme) + "://" + percentEncode(url)
        out += "?\(identityKey)=\(percentEncode(account.upn ?? account.name))"
        if let oid = account.oid { out += "&\(oidKey)=\(percentEncode(oid))" }
        out += "&\(policyKey)=1"
        return out
    }

    /// Undoes `wrap`: the original URL and the sender's UPN and OID; nil if `url` is not wrapped.
    public static func unwrap(_ url: String) -> (url: String, upn: String?, oid: String?)? {
        guard let scheme = scheme(of: url), scheme.lowercased().hasSuffix(twinSuffix) else { return nil }
        let body = rest(of: url, scheme: scheme).unicodeScalars
        guard body.starts(with: "//".unicodeScalars) else { return nil }
        let parts = body.dropFirst(2).split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        guard let original = percentDecode(Substring(parts[0])) else { return nil }
        var upn: String?, oid: String?
        if parts.count > 1 {
            for pair in parts[1].split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1)
                guard kv.count == 2, let value = percentDecode(Substring(kv[1])) else { continue }
                if Substring(kv[0]) == identityKey { upn = value }
                if Substring(kv[0]) == oidKey { oid = value }
            }
        }
        return (original, upn, oid)
    }

    public static func percentEncode(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count * 3)
        for b in s.utf8 {
            let unreserved = (b >= 0x30 && b <= 0x39) || ((b | 0x20) >= 0x61 && (b | 0x20) <= 0x7A)
                || b == UInt8(ascii: "-") || b == UInt8(ascii: ".") || b == UInt8(ascii: "_") || b == UInt8(ascii: "~")
            if unreserved {
                out.unicodeScalars.append(Unicode.Scalar(b))
            } else {
                let hex = Array("0123456789ABCDEF".utf8)
                out.unicodeScalars.append("%")
                out.unicodeScalars.append(Unicode.Scalar(hex[Int(b >> 4)]))
                out.unicodeScalars.append(Unicode.Scalar(hex[Int(b & 0xF)]))
            }
        }
        return out
    }

    public static func percentDecode(_ s: Substring) -> String? {
        var bytes: [UInt8] = []
        var it = s.utf8.makeIterator()
        while let b = it.next() {
            if b == UInt8(ascii: "%") {
                guard let h = it.next(), let l = it.next(), let hi = hexDigit(h), let lo = hexDigit(l) else { return nil }
                bytes.append(hi << 4 | lo)
            } else {
                bytes.append(b)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    static func hexDigit(_ b: UInt8) -> UInt8? {
        switch b {
        case 0x30...0x39: return b - 0x30
        case 0x41...0x46: return b - 0x41 + 10
        case 0x61...0x66: return b - 0x61 + 10
        default: return nil
        }
    }
}

extension PolicyEngine {
    /// Opening `url` from `sender` in `target` (SEMANTICS §4.4). The target is the app the
    /// broker routes the URL to; nil asks about the policy alone.
    public func openURL(_ url: String, from sender: Party, to target: Party?) -> Decision {
        guard let (scheme, key) = URLText.schemeKey(of: url) else { return Decision(.blocked, .urlNotHandled) }
        var d = urlPolicy(url, scheme: scheme, key: key, from: sender, to: target)
        guard d.outcome.delivers, let target else { return d }
        // The delivered URL must be one the target registers: the plain scheme, or the twin for a wrapped URL.
        let delivered = d.url ?? url
        if let s = URLText.scheme(of: delivered), !target.appRef.value.handles(scheme: String(s)) {
            let wrapped = d.rule == .urlTwinWrapped
            d = Decision(.blocked, wrapped ? .urlNoTwin : .urlNotHandled)
        }
        return d
    }

    /// Opening `url` from `sender` where `candidates` are the apps that could take it: the
    /// handler the URL reaches as it will be delivered (after a managed-browser or dialer
    /// rewrite, plain or as its twin), and the decision. No handler: `urlNotHandled`.
    ///
    /// When several candidates handle the scheme, the device's choice decides (SEMANTICS §4.4
    /// "Which app a link opens in"), never the candidates' order: a plain web link opens in the
    /// system browser (a browser without the SDK), any other URL in the handler with the
    /// smallest bundle id. So the broker and a prediction name the same app whichever apps run.
    public func routeURL(_ url: String, from sender: Party, among candidates: [Party]) -> (decision: Decision, target: Party?) {
        let policy = openURL(url, from: sender, to: nil)
        let asDelivered = policy.url.map { URLText.unwrap($0)?.url ?? $0 } ?? url
        guard let scheme = URLText.scheme(of: asDelivered)?.lowercased() else { return (Decision(.blocked, .urlNotHandled), nil) }
        let me = sender.bundleID.lowercased()
        // A link the policy sends to the managed browser goes to a browser the tenant manages:
        // any app's author may declare the browser's schemes, and the smallest bundle id
        // would otherwise be the author's pick [chosen].
        let managedOnly = policy.rule == .urlManagedBrowser
        var handlers = candidates.filter { c in
            c.bundleID.lowercased() != me && (!managedOnly || c.policyRef != nil)
                && (c.appRef.value.handles(scheme: scheme) || c.appRef.value.handles(scheme: scheme + URLText.twinSuffix))
        }
        // A phone link the policy sends to its custom dialer's scheme: an app the tenant manages
        // that takes the scheme first (the policy may name an unmanaged dialer, so not only
        // those), never an author's pick by bundle id [chosen].
        if policy.rule == .urlDialerCustom, handlers.contains(where: { $0.policyRef != nil }) {
            handlers.removeAll { $0.policyRef == nil }
        }
        guard let handler = Self.deviceChoice(among: handlers, scheme: scheme) else { return (Decision(.blocked, .urlNotHandled), nil) }
        return (openURL(url, from: sender, to: handler), handler)
    }

    /// The handler the device opens a `scheme` URL in when several take it. iOS keeps Safari as
    /// the default browser unless the user picks another, and a managed browser receives a
    /// policy's links through its own schemes (the rewrite), so a plain http(s) link goes to a
    /// browser without the SDK first [chosen]. iOS does not say which of several apps gets a
    /// custom scheme; MAMLab takes the smallest bundle id so that the answer never depends on
    /// which apps happen to run [chosen].
    static func deviceChoice(among handlers: [Party], scheme: String) -> Party? {
        let web = scheme == "http" || scheme == "https"
        func rank(_ p: Party) -> (Int, String) {
            (web && p.appRef.value.integratesSDK ? 1 : 0, p.bundleID.lowercased())
        }
        return handlers.min { rank($0) < rank($1) }
    }

    private func urlPolicy(_ url: String, scheme: Substring, key lower: String, from sender: Party, to target: Party?) -> Decision {
        guard let ref = sender.activeRef, let account = sender.enrolled else {
            return Decision(.allowed, .senderUnmanaged)
        }
        if (lower == "http" || lower == "https") && ref.value.settings.managedBrowserRequired {
            var d = Decision(.rewritten, .urlManagedBrowser)
            let rest = URLText.rest(of: url, scheme: scheme)
            if let custom = ref.value.settings.customBrowserProtocol, ref.value.settings.managedBrowser != .microsoftEdge {
                d.url = (lower == "http" ? custom : custom + "s") + ":" + rest
            } else {
                d.url = "microsoft-edge-" + lower + ":" + rest
            }
            return d
        }
        if lower == "tel" || lower == "telprompt" {
            switch ref.value.settings.dialer {
            case .allApps: return Decision(.allowed, .urlDialerAny)
            case .managedApps:
                guard let target else { return Decision(.allowed, .urlDialerManaged) }
                return target.isPolicyManaged(under: account)
                    ? Decision(.allowed, .urlDialerManaged) : Decision(.blocked, .urlDialerNotManaged)
            case .customApp:
                var d = Decision(.rewritten, .urlDialerCustom)
                d.url = (ref.value.settings.customDialerAppProtocol ?? lower) + ":" + URLText.rest(of: url, scheme: scheme)
                return d
            case .blocked: return Decision(.blocked, .urlDialerBlocked)
            }
        }
        switch ref.value.settings.send {
        case .allApps:
            return Decision(.allowed, .sendAllApps)
        case .none:
            return Decision(.blocked, .sendNone)
        case .managedApps:
            if ref.value.settings.exemptedSchemeSet.contains(lower) { return Decision(.allowed, .sendExemptScheme) }
            if let target, !target.isPolicyManaged(under: account) { return Decision(.blocked, .urlNoTwin) }
            var d = Decision(.allowed, .urlTwinWrapped)
            d.url = URLText.wrap(url, scheme: scheme, account: account)
            return d
        }
    }

    /// The SDK's `isURLAllowed(url, isKnownManagedAppScheme)` for the party's current identity
    /// [doc]: whether opening would succeed. With `isKnownManagedAppScheme` the twin need not be
    /// listed in `LSApplicationQueriesSchemes`.
    public func isURLAllowed(_ url: String, by party: Party, isKnownManagedAppScheme: Bool = false) -> Decision {
        guard let (scheme, key) = URLText.schemeKey(of: url) else { return Decision(.blocked, .urlNotHandled) }
        let d = urlPolicy(url, scheme: scheme, key: key, from: party, to: nil)
        guard d.rule == .urlTwinWrapped, !isKnownManagedAppScheme else { return d }
        // The wrapped URL can only be opened if the app may query the twin scheme [doc].
        return party.appRef.value.queries(scheme: key + URLText.twinSuffix) ? d : Decision(.blocked, .urlNotQueried)
    }

    /// `canOpenURL`: iOS answers false for a scheme the app did not list in
    /// `LSApplicationQueriesSchemes` [doc]; a managed sender needs the twin listed as well.
    public func canOpenURL(_ url: String, from party: Party, handledBy handlers: [AppManifest]) -> Bool {
        guard let scheme = URLText.scheme(of: url) else { return false }
        let lower = scheme.lowercased()
        let needsListing = lower != "http" && lower != "https"
        if needsListing && !party.appRef.value.queries(scheme: lower) { return false }
        let d = isURLAllowed(url, by: party)
        guard d.outcome.delivers else { return false }
        let delivered = URLText.scheme(of: d.url ?? url).map { String($0) } ?? lower
        return handlers.contains { $0.handles(scheme: delivered) }
    }
}
