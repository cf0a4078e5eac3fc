import MAMFuzzing
import MAMPolicy

/// A URL an app asks to open (`openURL`, `canOpenURL`): the engine reads its scheme, and the
/// broker strips every identity claim the app wrote into it before wrapping it again with the
/// sender's real identity (docs/PROTOCOL.md, the URL twin form).
@_cdecl("LLVMFuzzerTestOneInput")
public func urlText(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let url = String(decoding: FuzzTarget.bytes(data, size), as: UTF8.self)
    if let (scheme, key) = URLText.schemeKey(of: url) {
        FuzzCheck.require(!scheme.isEmpty && url.hasPrefix(scheme + ":") && key == scheme.lowercased(), "scheme \(scheme) key \(key) of \(url)")
        // The wrapped form carries the URL and the account through unchanged.
        let account = Account(userIndex: 0, upn: "adele@contoso.com", oid: "5f1c7a2e-3b4d-4e6f-8a9b-0c1d2e3f4a5b")
        let unwrapped = URLText.unwrap(URLText.wrap(url, scheme: scheme, account: account))
        FuzzCheck.require(unwrapped?.url == url && unwrapped?.upn == account.upn && unwrapped?.oid == account.oid,
                          "\(url.debugDescription) wrapped and unwrapped as \(String(describing: unwrapped))")
    }
    // No claim the app wrote survives: the result is no twin, and carries no MAM query item.
    let stripped = URLText.withoutIdentityClaims(url)
    FuzzCheck.require(URLText.unwrap(stripped) == nil, "\(url.debugDescription) still a twin after stripping: \(stripped.debugDescription)")
    if let q = stripped.firstIndex(of: "?") {
        for item in stripped[stripped.index(after: q)...].split(separator: "&") {
            FuzzCheck.require(!item.lowercased().hasPrefix("com.microsoft.intune.mam."), "\(url.debugDescription) kept the claim \(item)")
        }
    }
    FuzzCheck.require(URLText.percentDecode(Substring(URLText.percentEncode(url))) == url, "percent-encoding does not round-trip \(url.debugDescription)")
    return 0
}

@main enum URLTextFuzz {
    static func main() { FuzzTarget.main(urlText) }
}
