import Foundation
import MAMBroker
import MAMBrokerCore
import MAMCatalog
import MAMPolicy
import MAMService
import MAMWire
import Testing

/// App Protection conditional access through the broker's core: seed 003 §Exit criteria's test
/// cases, with ben targeted by the sample tenant's CA policy and adele not.
@Suite("Broker core: App Protection conditional access")
struct ConditionalAccessCoreTests {
    func token(_ got: [CoreLab.Delivered]) -> (UInt8, String?)? {
        for d in got { if case let .token(outcome, home, _) = d.frame.message { return (outcome, home) } }
        return nil
    }

    /// The sample apps, with Mail's manifest as it is but for AutoEnrollOnLaunch, which is off.
    static func appsWithMailNotEnrollingAtLaunch() -> [AppManifest] {
        let file = CoreLab.root.appendingPathComponent("Apps/Mail/Info.plist").path
        let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        let edited = text.replacingOccurrences(of: "<key>AutoEnrollOnLaunch</key>\n\t\t<true/>", with: "<key>AutoEnrollOnLaunch</key>\n\t\t<false/>")
        let copy = NSTemporaryDirectory() + "mail-no-autoenroll-\(UUID().uuidString.prefix(8)).plist"
        defer { try? FileManager.default.removeItem(atPath: copy) }
        guard edited != text, FileManager.default.createFile(atPath: copy, contents: Data(edited.utf8)),
              let mail = try? Catalog.loadManifest(copy).manifest, !mail.sdkFlag("AutoEnrollOnLaunch") else {
            Issue.record("Mail's manifest could not be edited (\(file))")
            return CoreLab.sampleApps
        }
        return CoreLab.sampleApps.map { $0.bundleID == mail.bundleID ? mail : $0 }
    }

    @Test func seed003AlwaysAppliedTokenRequiresProtectionUntilRemediationEnrolls() {
        // The user signed Ben in to Mail (the launcher's --user); this Mail does not enroll him at
        // launch (AutoEnrollOnLaunch off, its default), so he is not enrolled yet.
        var lab = CoreLab(apps: Self.appsWithMailNotEnrollingAtLaunch(), conditionalAccess: CoreLab.sampleAccess)
        let m = lab.launch("com.contoso.mail", account: "ben@contoso.com")
        guard let first = token(lab.send(m, .acquireToken(account: "ben@contoso.com"))) else { Issue.record("no token answer"); return }
        #expect(first.0 == 1, "protection policy required")
        let home = first.1 ?? ""
        #expect(home.hasPrefix("9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d."), "<oid>.<tenantId>: \(home)")
        let oid = String(home.split(separator: ".").first ?? "")
        guard case .remediationAccepted(0, _)? = lab.send(m, .remediateCompliance(account: oid, silent: true)).first?.frame.message else {
            Issue.record("remediation not started"); return
        }
        guard case .remediationProgress(1, _)? = lab.send(m, .remediationInProgress(account: oid)).first?.frame.message else {
            Issue.record("not reported in progress"); return
        }
        // A repeat while it runs is dropped.
        guard case .remediationAccepted(2, _)? = lab.send(m, .remediateCompliance(account: oid, silent: true)).first?.frame.message else {
            Issue.record("a repeat was not dropped"); return
        }
        lab.clock.advance(by: .seconds(2))
        lab.run(lab.core.handle(.tick))
        let statuses = lab.received(m).compactMap { d -> UInt8? in if case let .complianceStatus(_, s, _, _) = d.frame.message { return s } else { return nil } }
        #expect(statuses == [0], "compliant")
        guard case .remediationProgress(0, _)? = lab.send(m, .remediationInProgress(account: oid)).first?.frame.message else {
            Issue.record("still reported in progress"); return
        }
        #expect(lab.received(m).contains { if case .restartRequest = $0.frame.message { return true } else { return false } }, "enrolled: a first policy")
        #expect(token(lab.send(m, .acquireToken(account: "ben@contoso.com")))?.0 == 0, "granted now")
        #expect(lab.audits.contains { $0.channel == "ca.compliance" } && lab.audits.contains { $0.channel == "ca.token" })
    }

    @Test func aUserCANoLongerTargetsIsGrantedAtOnce() {
        var lab = CoreLab(conditionalAccess: CoreLab.sampleAccess)
        let m = lab.launch("com.contoso.mail")
        #expect(token(lab.send(m, .acquireToken(account: "adele@contoso.com")))?.0 == 0)
    }

    @Test func seed003NoncomplianceAnAppWithoutTheSDKNeverGetsAToken() {
        var lab = CoreLab(conditionalAccess: CoreLab.sampleAccess)
        let n = lab.launch("com.example.notes", account: "ben@contoso.com")
        #expect(token(lab.send(n, .acquireToken(account: "ben@contoso.com")))?.0 != 0)
        lab.send(n, .remediateCompliance(account: "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", silent: false))
        lab.clock.advance(by: .seconds(2))
        lab.run(lab.core.handle(.tick))
        let statuses = lab.received(n).compactMap { d -> UInt8? in if case let .complianceStatus(_, s, _, _) = d.frame.message { return s } else { return nil } }
        #expect(statuses == [1], "not compliant")
        #expect(token(lab.send(n, .acquireToken(account: "ben@contoso.com")))?.0 != 0)
    }
}
