import Foundation
import MAMBrokerCore
import MAMBrokerEmbedded
import MAMCatalog
import MAMPolicy
import MAMService
import MAMWire

/// The embedded broker (MAMBrokerEmbedded) on this repository's sample tenant and apps.
typealias CoreLab = EmbeddedBroker

extension EmbeddedBroker {
    typealias Content = EmbeddedShell.Content
    typealias Delivered = EmbeddedShell.Delivered

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let sampleTenant = try! Catalog.loadTenant(root.appendingPathComponent("Policies/contoso/tenant.json").path).tenant
    static let sampleApps = Catalog.loadApps(in: root.appendingPathComponent("Apps")).apps.map(\.manifest)

    /// The sample tenant's conditional-access section.
    static let sampleAccess = try! ConditionalAccessFile.load(
        try! Data(contentsOf: root.appendingPathComponent("Policies/contoso/tenant.json")), file: "tenant.json", tenant: sampleTenant).settings

    init(tenant: Tenant = CoreLab.sampleTenant, apps: [AppManifest] = CoreLab.sampleApps, limits: BrokerLimits = BrokerLimits(),
         conditionalAccess: ConditionalAccessSettings? = nil) {
        self.init(tenant: tenant, apps: apps, limits: limits, conditionalAccess: conditionalAccess, credentials: Credential.matches)
    }
}

extension Array where Element == EmbeddedShell.Delivered {
    var outcome: String? { decision.map { WireOutcome.name(of: $0.outcome) } }
}
