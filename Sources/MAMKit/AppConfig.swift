import Foundation
import MAMWire

/// `IntuneMAMAppConfig`: the configurations that reach an account, as the service sent them.
public struct AppConfig: Sendable, Hashable {
    /// `fullData`: one dictionary per configuration; the tenant default has `__IsDefault`.
    public var fullData: [[String: String]]

    public enum StringQuery: Sendable { case any, min, max }
    public enum BoolQuery: Sendable { case any, or, and }

    /// The key the service marks the tenant default's dictionary with: not a setting.
    public static let defaultMarker = "__IsDefault"

    /// Targeted values win over the tenant default; the default counts only when it is the
    /// key's sole value [doc].
    public func allStrings(for key: String) -> [String] {
        let targeted = fullData.filter { $0[Self.defaultMarker] == nil }.compactMap { $0[key] }
        if !targeted.isEmpty { return targeted }
        return fullData.filter { $0[Self.defaultMarker] != nil }.compactMap { $0[key] }
    }

    /// `hasConflict`: two or more targeted values differ.
    public func hasConflict(_ key: String) -> Bool {
        Set(fullData.filter { $0[Self.defaultMarker] == nil }.compactMap { $0[key] }).count > 1
    }

    public func stringValue(for key: String, query: StringQuery = .any) -> String? {
        let all = allStrings(for: key)
        switch query {
        case .any: return all.first
        case .min: return all.min()
        case .max: return all.max()
        }
    }

    public func boolValue(for key: String, query: BoolQuery = .any) -> Bool? {
        let all = allStrings(for: key).compactMap { v -> Bool? in
            switch v.lowercased() { case "true", "yes", "1": return true; case "false", "no", "0": return false; default: return nil }
        }
        guard !all.isEmpty else { return nil }
        switch query {
        case .any: return all.first
        case .or: return all.contains(true)
        case .and: return all.allSatisfy { $0 }
        }
    }

    public func numberValue(for key: String, query: StringQuery = .any) -> Double? {
        let all = allStrings(for: key).compactMap(Double.init)
        switch query {
        case .any: return all.first
        case .min: return all.min()
        case .max: return all.max()
        }
    }
}

/// `IntuneMAMAppConfigManager`.
public struct AppConfigManager: Sendable {
    let kit: Kit

    public func setDelegate(_ delegate: (any AppConfigDelegate)?) { kit.state.withLock { $0.appConfigDelegate = delegate } }

    /// `appConfigForAccountId`: empty before the account is enrolled.
    public func appConfig(for account: String) async throws -> AppConfig {
        let replies = try await kit.connection.request(.appConfigRequest(account: account))
        guard case let .appConfigData(_, json)? = replies.first?.frame.message else { throw MAMKitError(.unexpectedReply, "appConfigRequest") }
        guard let data = try? JSONDecoder().decode([[String: String]].self, from: Data(json.utf8)) else {
            throw MAMKitError(.unexpectedReply, "the app configuration is not a list of name → text objects")
        }
        return AppConfig(fullData: data)
    }
}
