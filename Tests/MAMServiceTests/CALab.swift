import Foundation
import MAMPolicy
import MAMService
import Testing

/// A tenant for the conditional-access tests: ben (finance) and adele (sales) are targeted by a
/// MAM policy for Mail; cleo (legal) by none. The `conditionalAccess` section is each test's.
enum CALab {
    static let tenantId = "8c3f6a2e-1d4b-4f7a-9e2c-5b6d7e8f9a0b"
    static let benOID = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
    static let adeleOID = "5f1c7a2e-3b4d-4e6f-8a9b-0c1d2e3f4a5b"
    static let cleoOID = "11111111-2222-4333-8444-555555555555"
    static let mail = "com.contoso.mail"

    static func tenantJSON(_ ca: String?) -> String {
        let section = ca.map { ",\n\"conditionalAccess\": \($0)" } ?? ""
        return """
        {"tenant": "contoso.com",
        "users": [{"upn": "adele@contoso.com", "oid": "\(adeleOID)", "groups": ["sales"]},
                  {"upn": "ben@contoso.com", "oid": "\(benOID)", "groups": ["finance"]},
                  {"upn": "cleo@contoso.com", "oid": "\(cleoOID)", "groups": ["legal"]}],
        "policies": [{"displayName": "Mail MAM", "apps": ["\(mail)"],
                      "assignments": [{"target": {"@odata.type": "#microsoft.graph.groupAssignmentTarget", "groupId": "finance"}},
                                      {"target": {"@odata.type": "#microsoft.graph.groupAssignmentTarget", "groupId": "sales"}}]}]\(section)
        }
        """
    }

    /// A CA section whose one enabled policy requires app protection of these groups.
    static func section(groups: [String], state: String = "enabled", extra: String = "") -> String {
        let list = groups.map { "\"\($0)\"" }.joined(separator: ", ")
        return """
        {"tenantId": "\(tenantId)",
         "policies": [{"displayName": "Require app protection policy", "state": "\(state)",
                       "conditions": {"users": {"includeGroups": [\(list)]}, "applications": {"includeApplications": ["All"]}},
                       "grantControls": {"operator": "OR", "builtInControls": ["compliantApplication"]}}]\(extra)}
        """
    }

    static func access(_ ca: String?) throws -> ConditionalAccess {
        let data = Data(tenantJSON(ca).utf8)
        let tenant = try TenantFile.load(data, file: "t.json") { _ in throw LoadFailure([]) }
        #expect(tenant.warnings.isEmpty, "\(tenant.warnings)")
        let settings = try ConditionalAccessFile.load(data, file: "t.json", tenant: tenant.tenant)
        #expect(settings.warnings.isEmpty, "\(settings.warnings)")
        return ConditionalAccess(tenant: tenant.tenant, settings: settings.settings)
    }

    /// The errors a CA section gets, as printed.
    static func errors(_ ca: String) -> [String] {
        let data = Data(tenantJSON(ca).utf8)
        do {
            let tenant = try TenantFile.load(data, file: "t.json") { _ in throw LoadFailure([]) }
            _ = try ConditionalAccessFile.load(data, file: "t.json", tenant: tenant.tenant)
            return []
        } catch {
            return error.diagnostics.filter { $0.severity == .error }.map(\.description)
        }
    }

    static func warnings(_ ca: String) throws -> [String] {
        let data = Data(tenantJSON(ca).utf8)
        let tenant = try TenantFile.load(data, file: "t.json") { _ in throw LoadFailure([]) }
        return try ConditionalAccessFile.load(data, file: "t.json", tenant: tenant.tenant).warnings.map(\.description)
    }
}

/// What the broker would know of the apps: which account each has enrolled.
struct AppsOnDevice {
    var enrolled: [String: Account] = [:]
    var withoutSDK: Set<String> = []
    var withoutProtApp: Set<String> = []

    func facts(_ app: String) -> AppComplianceFacts {
        AppComplianceFacts(bundleID: app, integratesSDK: !withoutSDK.contains(app), enrolledAccount: enrolled[app],
                           declaresProtApp: !withoutProtApp.contains(app))
    }

    /// Carries out what the results say: an account a remediation enrolls becomes the app's.
    mutating func apply(_ results: [RemediationResult]) {
        for r in results where r.outcome.enrolls { enrolled[r.app] = r.account }
    }
}
