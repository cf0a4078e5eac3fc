import Foundation
import MAMPolicy
import MAMService
import MAMWire

// App configuration through the emulated MAM service: the full data an app gets for an account
// it has enrolled (empty until then, as the SDK's is), and a notice when a reload changed it.
extension BrokerCore {
    mutating func appConfig(_ id: SessionID, _ frameID: UInt32, account: String, _ out: inout [BrokerEffect]) -> Result<Void, WireError> {
        guard sessions[id]!.manifest.integratesSDK else { return .failure(WireError(.notAllowed, "an app without the SDK has no app configuration")) }
        if let e = NameRules.check(account, field: "account") { return .failure(WireError(.invalidName, e.detail)) }
        let bundle = sessions[id]!.bundleID
        // The configuration is the signed-in, enrolled account's: for any other account a refusal.
        guard let acct = signedInAccount(account, for: id) else {
            return .failure(notSignedIn(id, frameID, channel: "appConfig", account: account, &out))
        }
        var values: [[String: String]] = []
        if let enrolled = service.enrolledAccount(in: bundle), engine.tenant.identity(named: enrolled).account == acct {
            values = AppConfig.resolve(engine.tenant, app: bundle, account: acct).fullDataValues
        }
        let json = (try? JSONSerialization.data(withJSONObject: values, options: [.sortedKeys])).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
        guard json.utf8.count <= Wire.maximumPasteText else {
            return .failure(WireError(.limitReached, "the configuration is \(json.utf8.count) bytes; a message carries at most \(Wire.maximumPasteText)"))
        }
        out.append(.send(id, Frame(id: frameID, .appConfigData(account: account, json: json))))
        return .success(())
    }

    /// After a reload: the running apps whose enrolled account's configuration changed are told.
    mutating func appConfigChanges(from old: Tenant, _ out: inout [BrokerEffect]) {
        let pairs = service.enrollments.values.filter(\.isEnrolledAndManaged).map { (app: $0.app, account: $0.account) }
        for change in AppConfigChanges.between(old: old, new: engine.tenant, pairs: pairs) {
            // Only to the instances the account is signed in to (not another user's instance).
            for id in noticeInstances(of: change.app, account: change.account, requester: nil) {
                out.append(.send(id, Frame(id: brokerFrameID(), .appConfigChanged(account: change.account))))
            }
        }
    }
}
