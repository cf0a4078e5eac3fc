import Foundation
import MAMPolicy
import MAMWire

// What an SDK app needs to run its own policy queries (MAMKit asks the engine in its process,
// as the real SDK answers its policy object locally), and the key of the managed account it is
// enrolled with, to protect and unprotect that account's data.
extension BrokerCore {
    /// `policyRequest` → `policySnapshot`: the app's manifest, enrolled account, the policy
    /// targeting (app, account), the identity it acts under and the accounts it has signed in.
    mutating func policySnapshot(_ id: SessionID, _ frameID: UInt32, _ out: inout [BrokerEffect]) -> Result<Void, WireError> {
        guard sessions[id]!.manifest.integratesSDK else { return .failure(WireError(.notAllowed, "an app without the SDK has no policy of its own")) }
        let p = party(id)
        sessions[id]!.snapshotsSent += 1
        let s = sessions[id]!
        var snapshot = PolicySnapshot(app: s.manifest, enrolled: p.enrolled, policy: p.policy, identity: s.identity,
                                      signedIn: s.signedIn, isMDMManaged: p.isMDMManaged,
                                      personalAccountSignedIn: p.personalAccountSignedIn, revision: revision)
        snapshot.sequence = s.snapshotsSent
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(snapshot), data.count <= Wire.maximumPasteText else {
            return .failure(WireError(.limitReached, "the policy snapshot does not fit in one message of \(Wire.maximumPasteText) bytes"))
        }
        out.append(.send(id, Frame(id: frameID, .policySnapshot(json: String(decoding: data, as: UTF8.self)))))
        return .success(())
    }

    /// `keyRequest` → `accountKey`: only for the managed account this app is enrolled with and
    /// acting under a policy for (its data is what the key protects); refused otherwise, audited
    /// either way (channel `key`).
    mutating func keyRequest(_ id: SessionID, _ frameID: UInt32, account: String, _ out: inout [BrokerEffect]) -> Result<Void, WireError> {
        let s = sessions[id]!
        // Refused before the account is looked at, and audited all the same: an app without
        // the SDK asking for keys is what the security log is for.
        func refusedEarly(_ error: WireError) -> Result<Void, WireError> {
            out.append(.audit(AuditEntry(session: id, request: frameID, channel: "key", source: auditParty(id), target: nil, dataType: nil,
                                         size: nil, outcome: "blocked", rule: "7.protect", tag: "chosen",
                                         detail: Self.fitting(account), revision: revision)))
            return .failure(error)
        }
        guard s.manifest.integratesSDK else { return refusedEarly(WireError(.notAllowed, "an app without the SDK holds no account key")) }
        if let e = NameRules.check(account, field: "account") { return refusedEarly(WireError(.invalidName, e.detail)) }
        let p = party(id)
        let wanted = engine.tenant.identity(named: account).account
        // The session's own enrollment, not only the party's: after a wipe or an unenrollment the
        // engine still falls back to the tenant's default enrollment for a multi-identity app,
        // which must not bring the wiped account's key back.
        // And only an account the device lets anyone sign in with (allowed accounts): the
        // launcher's user or the tenant's default enrollment must not bring in another's key.
        // And only an account the user signed in to this instance (never one the app named, nor
        // the tenant's default when the user signed in someone else), which the service has as
        // this app's enrolled account when it has one (a second instance run for another user
        // does not get the key of the first's).
        let serviceEnrolled = service.enrolledAccount(in: s.manifest.bundleID).map { engine.tenant.identity(named: $0).account }
        let granted = !s.developer && wanted != nil && s.enrolled == wanted && p.enrolled == wanted && p.policy != nil && wanted!.userIndex != nil
            && engine.tenant.device.allows(wanted!) && s.signedIn.contains(wanted!)
            && (serviceEnrolled == nil || serviceEnrolled! == wanted)
            && !service.isSignedOut(app: s.manifest.bundleID, account: Self.canonicalName(wanted!))
        out.append(.audit(AuditEntry(session: id, request: frameID, channel: "key", source: auditParty(id), target: nil, dataType: nil,
                                     size: nil, outcome: granted ? "allowed" : "blocked", rule: "7.protect", tag: "chosen",
                                     detail: account, revision: revision)))
        guard granted, let acct = wanted else {
            if s.developer {
                return .failure(WireError(.notAllowed, "\(s.bundleID) runs a developer's program (mamlaunch run --developer), which is never given a key"))
            }
            return .failure(WireError(.notAllowed, "\(account) is not a managed account \(s.bundleID) is enrolled with"))
        }
        out.append(.sendKey(id, frameID: frameID, account: account, keyID: Self.keyID(acct)))
        return .success(())
    }
}
