/// The keys of the `IntuneMAMSettings` dictionary and their types [doc: seed 001's settings
/// table; `DebugSettingsEnabled` from seed 000; the main nib and storyboard keys from seed 004].
public enum MAMSettingsSchema {
    public enum Kind: Sendable, Equatable {
        case string, boolean, number, strings
        /// A `#RRGGBB` colour; the `#` may be left out [doc].
        case color
        case oneOf([String])

        public var description: String {
            switch self {
            case .string: return "a string"
            case .boolean: return "a boolean"
            case .number: return "a number"
            case .strings: return "an array of strings"
            case .color: return "a colour string #RRGGBB"
            case let .oneOf(values): return "one of \(values.joined(separator: ", "))"
            }
        }
    }

    public static let keys: [String: Kind] = [
        "ADALClientId": .string,
        "ADALAuthority": .string,
        "ADALRedirectUri": .string,
        "ADALRedirectScheme": .string,
        "ADALLogOverrideDisabled": .boolean,
        "ADALCacheKeychainGroupOverride": .string,
        "AppGroupIdentifiers": .strings,
        "ContainingAppBundleId": .string,
        "DebugSettingsEnabled": .boolean,
        "AutoEnrollOnLaunch": .boolean,
        "MAMPolicyRequired": .boolean,
        "MAMPolicyWarnAbsent": .boolean,
        "MultiIdentity": .boolean,
        "SafariViewControllerBlockedOverride": .boolean,
        // seed 004 §Configure settings for the Intune App SDK: the app's main nib and
        // storyboard, required when the app defines them in its Info.plist.
        "MainNibFile": .string,
        "MainNibFile~ipad": .string,
        "MainStoryboardFile": .string,
        "MainStoryboardFile~ipad": .string,
        "SplashIconFile": .string,
        "SplashIconFile~ipad": .string,
        "SplashDuration": .number,
        "BackgroundColor": .color,
        "ForegroundColor": .color,
        "AccentColor": .color,
        "SecondaryBackgroundColor": .color,
        "SecondaryForegroundColor": .color,
        "SupportsDarkMode": .boolean,
        "MAMTelemetryDisabled": .boolean,
        "MAMTelemetryUsePPE": .boolean,
        "MaxFileProtectionLevel": .oneOf([
            "NSFileProtectionComplete", "NSFileProtectionCompleteUnlessOpen",
            "NSFileProtectionCompleteUntilFirstUserAuthentication", "NSFileProtectionNone",
        ]),
        "OpenInActionExtension": .boolean,
        "WebViewHandledURLSchemes": .strings,
        "DocumentBrowserFileCachePath": .string,
        "VerboseLoggingEnabled": .boolean,
        "FinishLaunchingAtStartup": .boolean,
        "ValuesToScrubFromLogging": .strings,
    ]

    /// Checks one value against its key's type; returns the problem, if any.
    public static func check(_ key: String, _ value: Located, _ log: inout DiagnosticLog) {
        guard let kind = keys[key] else {
            log.append(value.problem(.warning, "unknown IntuneMAMSettings key \"\(key)\"; the SDK ignores it"))
            return
        }
        switch kind {
        case .string: _ = value.string(&log)
        case .boolean: _ = value.bool(&log)
        case .number: _ = value.number(&log)
        case .strings: _ = value.strings(&log)
        case .color:
            guard let s = value.string(&log) else { return }
            if !isColor(s) { log.append(value.problem("\"\(s)\" is not a colour; expected #RRGGBB in hexadecimal (the # may be left out)")) }
        case let .oneOf(allowed):
            guard let s = value.string(&log) else { return }
            if !allowed.contains(s) {
                log.append(value.problem("unknown value \"\(s)\"; allowed values: \(allowed.joined(separator: ", "))"))
            }
        }
    }

    public static func isColor(_ s: String) -> Bool {
        let hex = s.hasPrefix("#") ? s.dropFirst() : Substring(s)
        return hex.count == 6 && hex.allSatisfy(\.isHexDigit)
    }
}
