import Foundation
import MAMCatalog
import MAMPolicy
import MAMService
import Testing

/// The tenant's `conditionalAccess` section: what it reads, and one clear line for each mistake.
@Suite("Conditional access section")
struct ConditionalAccessFileTests {
    /// The section starts on line 8 of `CALab.tenantJSON`, at column 22 after `"conditionalAccess": `.
    static func policy(_ body: String) -> String {
        #"{"tenantId": "\#(CALab.tenantId)", "policies": [\#(body)]}"#
    }

    @Test func aTenantWithoutTheSectionHasNoConditionalAccess() throws {
        let access = try CALab.access(nil)
        #expect(access.settings == .none)
        #expect(access.token(for: access.account(named: "ben@contoso.com"), app: AppsOnDevice().facts(CALab.mail)).reason == .notTargeted)
    }

    @Test func theSampleTenantTargetsBenAndNotAdele() throws {
        let root = try #require(Catalog.projectRoot())
        let path = root.appendingPathComponent("Policies/contoso/tenant.json").path
        let tenant = try Catalog.loadTenant(path)
        #expect(tenant.warnings.isEmpty, "\(tenant.warnings)")
        let ca = try ConditionalAccessFile.load(try Catalog.read(path), file: path, tenant: tenant.tenant)
        #expect(ca.warnings.isEmpty, "\(ca.warnings)")
        let access = ConditionalAccess(tenant: tenant.tenant, settings: ca.settings)
        let ben = access.account(named: "ben@contoso.com")
        let t = access.token(for: ben, app: AppComplianceFacts(bundleID: "com.contoso.mail"))
        #expect(t.outcome == .protectionPolicyRequired)
        #expect(t.homeAccountId == "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d.\(try #require(ca.settings.tenantId))")
        #expect(access.policy(for: access.account(named: "adele@contoso.com")) == nil)
    }

    @Test func mistakesNameTheirPathLineAndColumn() {
        let tenantId = #"{"tenantId": "contoso.com"}"#
        #expect(CALab.errors(tenantId) == [
            #"t.json:8:35: error: $.conditionalAccess.tenantId: "contoso.com" is not a tenant id; expected a GUID such as 8c3f6a2e-1d4b-4f7a-9e2c-5b6d7e8f9a0b"#,
        ])
        let noTenantId = #"{"policies": [{"displayName": "P", "state": "enabled", "conditions": {"users": {"includeUsers": ["All"]}}, "grantControls": {"builtInControls": ["compliantApplication"]}}]}"#
        #expect(CALab.errors(noTenantId) == [
            #"t.json:8:22: error: $.conditionalAccess: conditional access needs a "tenantId" (a GUID): a targeted user's home account id is <oid>.<tenantId>"#,
        ])
        #expect(CALab.errors(Self.policy(#"{"displayName": "P", "state": "on"}"#)) == [
            #"t.json:8:118: error: $.conditionalAccess.policies[0].state: unknown value "on"; allowed values: enabled, disabled, enabledForReportingButNotEnforced"#,
        ])
        #expect(CALab.errors(Self.policy(#"{"state": "enabled"}"#)) == [
            #"t.json:8:88: error: $.conditionalAccess.policies[0]: a conditional access policy needs a "displayName""#,
        ])
        #expect(CALab.errors(Self.policy(#"{"displayName": "P", "state": "enabled", "conditions": {"users": {"includeUsers": ["zoe@contoso.com"], "includeGroups": ["hr"]}}, "grantControls": {"builtInControls": ["requireAppProtection"]}}"#)) == [
            #"t.json:8:171: error: $.conditionalAccess.policies[0].conditions.users.includeUsers[0]: unknown user "zoe@contoso.com"; the tenant's users are: adele@contoso.com, ben@contoso.com, cleo@contoso.com"#,
            #"t.json:8:209: error: $.conditionalAccess.policies[0].conditions.users.includeGroups[0]: unknown group "hr"; the tenant's groups are: finance, legal, sales"#,
            #"t.json:8:256: error: $.conditionalAccess.policies[0].grantControls.builtInControls[0]: unknown value "requireAppProtection"; allowed values: block, mfa, compliantDevice, domainJoinedDevice, approvedApplication, compliantApplication, passwordChange"#,
        ])
    }

    @Test func forcedOutcomesAreChecked() {
        func force(_ body: String) -> [String] { CALab.errors(#"{"tenantId": "\#(CALab.tenantId)", "forceRemediation": \#(body)}"#) }
        #expect(force(#"{"ben@contoso.com": "offline"}"#) == [
            #"t.json:8:115: error: $.conditionalAccess.forceRemediation.ben@contoso.com: unknown value "offline"; allowed values: compliant, notCompliant, serviceFailure, networkFailure, interactionRequired, userCancelled"#,
        ])
        #expect(force(#"{"zoe@contoso.com": "compliant"}"#) == [
            #"t.json:8:115: error: $.conditionalAccess.forceRemediation.zoe@contoso.com: unknown user "zoe@contoso.com"; the tenant's users are: adele@contoso.com, ben@contoso.com, cleo@contoso.com"#,
        ])
        #expect(force(#"{"ben@contoso.com": {"interactive": "interactionRequired"}}"#) == [
            #"t.json:8:131: error: $.conditionalAccess.forceRemediation.ben@contoso.com.interactive: an interactive remediation is the interaction; it cannot end in interactionRequired"#,
        ])
        #expect(force(#"{"ben@contoso.com": 3}"#) == [
            #"t.json:8:115: error: $.conditionalAccess.forceRemediation.ben@contoso.com: expected a status name or an object {"silent": …, "interactive": …}, found integer 3"#,
        ])
        #expect(force(#"{"ben@contoso.com": "compliant", "\#(CALab.benOID)": "compliant"}"#).first?.hasSuffix(
            "error: $.conditionalAccess.forceRemediation.\(CALab.benOID): ben@contoso.com is forced twice (by UPN and by OID)") == true)
    }

    @Test func aTargetedUserWithoutAnOIDIsAnError() throws {
        let json = """
            {"tenant": "contoso.com", "users": [{"upn": "fay@contoso.com", "groups": ["ops"]}],
             "conditionalAccess": {"tenantId": "\(CALab.tenantId)", "policies": [{"displayName": "Ops", "state": "enabled",
               "conditions": {"users": {"includeGroups": ["ops"]}}, "grantControls": {"builtInControls": ["compliantApplication"]}}]}}
            """
        let data = Data(json.utf8)
        let tenant = try TenantFile.load(data, file: "t.json") { _ in throw LoadFailure([]) }
        #expect(throws: LoadFailure.self) { try ConditionalAccessFile.load(data, file: "t.json", tenant: tenant.tenant) }
        do {
            _ = try ConditionalAccessFile.load(data, file: "t.json", tenant: tenant.tenant)
        } catch {
            #expect(error.diagnostics.map(\.description) == [
                #"t.json:2:89: error: $.conditionalAccess.policies[0]: policy "Ops" targets fay@contoso.com, who has no "oid"; a targeted user's home account id is <oid>.<tenantId>"#,
            ])
        }
    }

    @Test func policiesMAMLabDoesNotEmulateAreWarnings() throws {
        let w = try CALab.warnings(Self.policy(#"{"displayName": "MFA", "state": "enabled", "conditions": {"users": {"includeUsers": ["All"]}, "applications": {"includeApplications": ["Office365"]}}, "grantControls": {"builtInControls": ["mfa"]}, "sessionControls": null}"#))
        #expect(w == [
            #"t.json:8:305: warning: $.conditionalAccess.policies[0].sessionControls: unknown conditional access policy key "sessionControls"; it is ignored"#,
            #"t.json:8:222: warning: $.conditionalAccess.policies[0].conditions.applications.includeApplications: MAMLab emulates every token request as one for all cloud apps; includeApplications other than ["All"] is ignored"#,
            #"t.json:8:88: warning: $.conditionalAccess.policies[0]: policy "MFA" does not grant with "compliantApplication" (Require app protection policy); MAMLab emulates only that control, so it changes no token request"#,
        ])
    }
}

extension ConditionalAccessFileTests {
    @Test func aReportOnlyPolicyNeedsNoTenantId() throws {
        let section = #"{"policies": [{"displayName": "Watch", "state": "enabledForReportingButNotEnforced", "conditions": {"users": {"includeUsers": ["All"]}}, "grantControls": {"builtInControls": ["compliantApplication"]}}]}"#
        #expect(CALab.errors(section).isEmpty)
        let access = try CALab.access(section)
        #expect(access.token(for: access.account(named: "cleo@contoso.com"), app: AppsOnDevice().facts(CALab.mail)).reason == .reportOnly)
    }
}
