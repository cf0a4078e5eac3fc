import Foundation
import MAMPolicy
import Testing

/// A tenant as an admin exports it from Graph: policies and app configurations with their apps
/// and assignments expanded, groups with their members.
@Suite("A Graph tenant export as input")
struct TenantExportTests {
    static let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Policies/graph-export/fabrikam-export.json")

    static func load(_ json: String) throws(LoadFailure) -> TenantFile.Loaded {
        try TenantFile.load(Data(json.utf8), file: "export.json") { _ in throw LoadFailure([]) }
    }

    static func errors(_ json: String) -> [Diagnostic] {
        do { _ = try load(json); return [] } catch { return error.diagnostics.filter { $0.severity == .error } }
    }

    static let group = ##"{"id": "g-1", "displayName": "Sales", "members": [{"@odata.type": "#microsoft.graph.user", "id": "oid-1", "userPrincipalName": "megan@fabrikam.com"}]}"##
    static let policy = ##"{"@odata.type": "#microsoft.graph.iosManagedAppProtection", "id": "T_1", "displayName": "P", "allowedOutboundDataTransferDestinations": "managedApps", "apps": [{"id": "com.microsoft.office.outlook.ios", "mobileAppIdentifier": {"@odata.type": "#microsoft.graph.iosMobileAppIdentifier", "bundleId": "com.microsoft.office.outlook"}}], "assignments": [{"id": "a", "target": {"@odata.type": "#microsoft.graph.groupAssignmentTarget", "groupId": "GROUP"}}]}"##

    @Test func theSampleExportLoadsUsersGroupsPoliciesAndConfigurations() throws {
        let loaded = try TenantFile.load(try Data(contentsOf: Self.sample), file: "fabrikam-export.json") { _ in throw LoadFailure([]) }
        let t = loaded.tenant
        #expect(loaded.warnings.isEmpty, "\(loaded.warnings)")
        #expect(t.name == "fabrikam.com")
        #expect(t.users.map(\.upn) == ["megan@fabrikam.com", "alex@fabrikam.com"])
        #expect(t.users[1].oid == "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f" && t.users[1].groups.count == 2)
        #expect(t.policies.count == 2 && t.policies[0].targetedApps.contains("com.microsoft.office.outlook"))
        #expect(t.policies[0].settings.send == .managedApps)
        #expect(t.appConfigurations.count == 1)
        // Alex is in the pilot group too: the pilot policy reaches OneDrive for both users.
        #expect(Set(t.managedApps).isSuperset(of: ["com.microsoft.skydrive", "com.microsoft.msedge"]))
    }

    @Test func anAssignmentNamesAGroupOfTheExportByItsID() {
        let json = ##"{"iosManagedAppProtections": {"value": [\##(Self.policy.replacingOccurrences(of: "GROUP", with: "g-2"))]}, "groups": {"value": [\##(Self.group)]}}"##
        let e = Self.errors(json)
        #expect(e.count == 1 && e[0].path == "$.iosManagedAppProtections.value[0].assignments[0].target.groupId", "\(e)")
        #expect(e.first?.message.contains("unknown group \"g-2\"") == true)
        #expect(Self.errors(json.replacingOccurrences(of: "\"g-2\"", with: "\"g-1\"")).isEmpty)
    }

    @Test func everyMemberAndGroupProblemNamesItsKeyPath() throws {
        let noUPN = ##"{"iosManagedAppProtections": [], "groups": [{"id": "g-1", "members": [{"@odata.type": "#microsoft.graph.user", "id": "x"}]}]}"##
        #expect(Self.errors(noUPN).map(\.path) == ["$.groups[0].members[0]"])
        let noID = ##"{"iosManagedAppProtections": [], "groups": [{"displayName": "Sales", "members": []}]}"##
        #expect(Self.errors(noID).map(\.path) == ["$.groups[0]"])
        let notUPN = ##"{"iosManagedAppProtections": [], "groups": {"value": [{"id": "g", "members": [{"userPrincipalName": "megan"}]}]}}"##
        #expect(Self.errors(notUPN).map(\.path) == ["$.groups.value[0].members[0].userPrincipalName"])
        let twoIDs = ##"{"iosManagedAppProtections": [], "groups": [{"id": "g", "members": [{"id": "1", "userPrincipalName": "a@f.com"}]}, {"id": "h", "members": [{"id": "1", "userPrincipalName": "b@f.com"}]}]}"##
        #expect(Self.errors(twoIDs).map(\.path) == ["$.groups[1].members[0]"])
        // A device or a nested group among the members is said, not silently taken as a user.
        let device = ##"{"iosManagedAppProtections": [], "groups": [{"id": "g", "members": [{"@odata.type": "#microsoft.graph.device", "id": "d"}]}]}"##
        let loaded = try Self.load(device)
        #expect(loaded.tenant.users.isEmpty && loaded.warnings.contains { $0.path == "$.groups[0].members[0]" && $0.message.contains("#microsoft.graph.device") })
    }

    @Test func aMemberListCutShortOrWithoutUPNsIsSaid() throws {
        let cut = ##"{"iosManagedAppProtections": [], "groups": [{"id": "g", "members@odata.nextLink": "https://graph.microsoft.com/v1.0/groups/g/members?$skiptoken=x", "members": [{"id": "1", "userPrincipalName": "a@f.com"}]}]}"##
        #expect(try Self.load(cut).warnings.contains { $0.path == "$.groups[0].members@odata.nextLink" && $0.message.contains("at most 20") })
        let hidden = ##"{"iosManagedAppProtections": [], "groups": [{"id": "g", "members": [{"@odata.type": "#microsoft.graph.user", "id": "1", "userPrincipalName": null}]}]}"##
        let e = Self.errors(hidden)
        #expect(e.map(\.path) == ["$.groups[0].members[0].userPrincipalName"] && e[0].message.contains("User.Read.All"), "\(e)")
    }

    @Test func aPolicyExportedWithoutItsAppsIsSaid() throws {
        let json = ##"{"iosManagedAppProtections": [{"@odata.type": "#microsoft.graph.iosManagedAppProtection", "id": "T_1", "displayName": "Bare"}], "groups": [\##(Self.group)]}"##
        let loaded = try Self.load(json)
        #expect(loaded.warnings.contains { $0.message.contains("$expand=apps,assignments") }, "\(loaded.warnings)")
    }
}
