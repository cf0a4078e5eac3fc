import Foundation
import MAMFuzzing
import MAMPolicy

/// A tenant file, as the broker (root) loads it at start and on every reload: users, groups,
/// the device, policies inline or by `$ref`, app configurations, and its conditional-access
/// section read against the tenant the same bytes made.
@_cdecl("LLVMFuzzerTestOneInput")
public func tenantFile(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = FuzzTarget.bytes(data, size)
    let text = SourceText(bytes)
    let loaded: TenantFile.Loaded
    do {
        loaded = try TenantFile.load(Data(bytes), file: "tenant.json", resolve: ReferencedPolicies.resolve)
    } catch {
        FuzzCheck.failure(error, file: "tenant.json", in: text)
        return 0
    }
    FuzzCheck.warnings(loaded.warnings)
    // One name, one user: a UPN or OID that named two users would let one act as the other.
    var names = Set<String>()
    for user in loaded.tenant.users {
        FuzzCheck.require(user.upn.contains("@"), "a user loaded without a UPN: \(user.upn.debugDescription)")
        for name in [user.upn] + [user.oid].compactMap({ $0 }) {
            FuzzCheck.require(names.insert(name.lowercased()).inserted, "two users answer to \(name.debugDescription)")
        }
        if let c = user.credential {
            guard case .success = CredentialFormat.parse(c) else { FuzzCheck.require(false, "a credential loaded that does not parse"); return 0 }
        }
    }
    for policy in loaded.tenant.policies {
        FuzzCheck.require(policy.targetedApps.allSatisfy { $0 == $0.lowercased() }, "a targeted app not lower-cased")
    }
    do {
        let access = try ConditionalAccessFile.load(Data(bytes), file: "tenant.json", tenant: loaded.tenant)
        FuzzCheck.warnings(access.warnings)
    } catch {
        FuzzCheck.failure(error, file: "tenant.json", in: text)
    }
    return 0
}

/// What a `$ref` reaches: one Graph policy and one debug-form policy, whatever the name says,
/// and an unreadable file for a name with "missing" in it.
enum ReferencedPolicies {
    struct Unreadable: Error {}

    static func resolve(_ reference: String) throws -> (name: String, data: Data) {
        if reference.contains("missing") { throw Unreadable() }
        return (reference, Data((reference.hasSuffix(".plist") ? debug : graph).utf8))
    }

    static let graph = """
        {"@odata.type": "#microsoft.graph.iosManagedAppProtection", "displayName": "Managed only",
         "allowedOutboundDataTransferDestinations": "managedApps", "allowedInboundDataTransferSources": "managedApps",
         "allowedOutboundClipboardSharingLevel": "managedAppsWithPasteIn", "saveAsBlocked": true,
         "allowedDataStorageLocations": ["oneDriveForBusiness", "sharePoint"], "pinRequired": true, "minimumPinLength": 6}
        """
    static let debug = """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict>
        <key>AppSharingToLevel</key><integer>1</integer><key>AppSharingFromLevel</key><integer>1</integer>
        <key>ClipboardSharingLevel</key><integer>2</integer><key>ManagedLocations</key><integer>3</integer>
        <key>ProtocolExclusions</key><string>skype;itms;</string>
        </dict></plist>
        """
}

@main enum TenantFileFuzz {
    static func main() { FuzzTarget.main(tenantFile) }
}
