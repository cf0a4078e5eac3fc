import MAMFuzzing
import MAMPolicy

/// A URL an app asks to open (`openURL`, `canOpenURL`): the engine reads its scheme, and the
/// broker strips every identity claim the app wrote into it before wrapping it again with the
/// sender's real identity (docs/PROTOCOL.md, the URL twin form).
@_cdecl("LLVMFuzzerTestOneInput")
public func urlText(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let url = String(decoding: FuzzTarget.bytes(data, size), as: UTF8.self)
    if let (scheme, key) = URLText.schemeKey(of: url) {
        FuzzCheck.require(!scheme.isEmpty && url.utf8.starts(with: (scheme + ":").utf8) && key == scheme.lowercased(), "scheme \(scheme) key \(key) of \(url)")
        // The wrapped form carries the URL and the account through unchanged.
        let account = Account(userIndex: 0, upn: "adele@contoso.com", oid: "5f1c7a2e-3b4d-4e6f-8a9b-0c1d2e3f4a5b")
        let unwrapped = URLText.unwrap(URLText.wrap(url, scheme: scheme, account: account))
        FuzzCheck.require(unwrapped?.url == url && unwrapped?.upn == account.upn && unwrapped?.oid == account.oid,
                          "\(url.debugDescription) wrapped and unwrapped as \(String(describing: unwrapped))")
    }
    // No claim the app wrote survives: the result is no twin, and carries no MAM query item.
    let stripped = URLText.withoutIdentityClaims(url)
    FuzzCheck.require(URLText.unwrap(stripped) == nil, "\(url.debugDescription) still a twin after stripping: \(stripped.debugDescription)")
    // Read as a byte-wise receiver reads it: split on the bytes `?`, `&` and `;`, keys decoded.
    if let q = stripped.utf8.firstIndex(of: UInt8(ascii: "?")) {
        for item in stripped.utf8[stripped.utf8.index(after: q)...].split(whereSeparator: { $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: ";") }) {
            let key = Substring(item).prefix { $0 != "=" }
            let decoded = (URLText.percentDecode(key) ?? String(key)).lowercased()
            FuzzCheck.require(!decoded.utf8.starts(with: "com.microsoft.intune.mam.".utf8), "\(url.debugDescription) kept the claim \(String(Substring(item)).debugDescription)")
        }
    }
    FuzzCheck.require(URLText.percentDecode(Substring(URLText.percentEncode(url))) == url, "percent-encoding does not round-trip \(url.debugDescription)")
    return 0
}

@main enum URLTextFuzz {
    static func main() { FuzzTarget.main(urlText) }
}
