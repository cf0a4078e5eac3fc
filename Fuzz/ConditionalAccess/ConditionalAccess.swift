import Foundation
import MAMFuzzing
import MAMPolicy

/// The `conditionalAccess` section of a tenant file (docs/POLICIES.md), read against a fixed
/// tenant, so that every input reaches the section's own reader rather than stopping at a
/// tenant that does not load.
@_cdecl("LLVMFuzzerTestOneInput")
public func conditionalAccess(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = FuzzTarget.bytes(data, size)
    do {
        let loaded = try ConditionalAccessFile.load(Data(bytes), file: "tenant.json", tenant: FixedTenant.contoso)
        FuzzCheck.warnings(loaded.warnings)
    } catch {
        FuzzCheck.failure(error, file: "tenant.json", in: SourceText(bytes))
    }
    return 0
}

enum FixedTenant {
    static let contoso = Tenant(
        name: "contoso.com",
        users: [TenantUser(upn: "adele@contoso.com", oid: "5f1c7a2e-3b4d-4e6f-8a9b-0c1d2e3f4a5b", groups: ["sales"]),
                TenantUser(upn: "ben@contoso.com", oid: "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", groups: ["finance"])],
        groups: ["pilot-allow-all", "pilot-level3"])
}

@main enum ConditionalAccessFuzz {
    static func main() { FuzzTarget.main(conditionalAccess) }
}
