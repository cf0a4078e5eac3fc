import Foundation
import MAMBroker
import MAMBrokerCore
import MAMPolicy
import MAMWire
import Testing

/// The SDK's own policy queries (a snapshot) and its data protection (the account key) through
/// the broker's core.
@Suite("Broker core: policy snapshots and account keys")
struct PolicySnapshotCoreTests {
    func snapshot(_ got: [CoreLab.Delivered]) throws -> PolicySnapshot? {
        guard case let .policySnapshot(json)? = got.first?.frame.message else { return nil }
        return try JSONDecoder().decode(PolicySnapshot.self, from: Data(json.utf8))
    }

    @Test func theSnapshotsJSONHasItsDesignedShapeWithNoSynthesizedEnumKeys() throws {
        var lab = CoreLab()
        let mail = lab.launch("com.contoso.mail", account: "adele@contoso.com")
        guard case let .policySnapshot(json)? = lab.send(mail, .policyRequest, frameID: 5).first?.frame.message else {
            Issue.record("no snapshot"); return
        }
        #expect(!json.contains("\"_0\""), "\(json)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["app", "enrolled", "identity", "isMDMManaged", "personalAccountSignedIn", "policy", "revision", "sequence", "signedIn"])
        let identity = try #require(object["identity"] as? [String: Any])
        #expect(identity["kind"] as? String == "account" && (identity["account"] as? [String: Any])?["upn"] as? String == "adele@contoso.com")
        // Both identities, exactly, and back.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        #expect(String(decoding: try encoder.encode(Identity.personal), as: UTF8.self) == #"{"kind":"personal"}"#)
        let adele = try #require(CoreLab.sampleTenant.knownAccount(named: "adele@contoso.com"))
        let text = String(decoding: try encoder.encode(Identity.account(adele)), as: UTF8.self)
        #expect(text.hasPrefix(#"{"account":{"#) && text.hasSuffix(#""kind":"account"}"#), "\(text)")
        #expect(try JSONDecoder().decode(Identity.self, from: Data(text.utf8)) == .account(adele))
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Identity.self, from: Data(#"{"kind":"robot"}"#.utf8)) }
    }

    /// Each connection's snapshots are numbered from 1, so an app can tell the later of two
    /// replies it handles out of order.
    @Test func eachConnectionsSnapshotsAreNumberedInTheOrderTheyWereMade() throws {
        var lab = CoreLab()
        let mail = lab.launch("com.contoso.mail", account: "adele@contoso.com")
        let docs = lab.launch("com.contoso.docs", account: "adele@contoso.com")
        #expect(try snapshot(lab.send(mail, .policyRequest, frameID: 5))?.sequence == 1)
        #expect(try snapshot(lab.send(mail, .policyRequest, frameID: 6))?.sequence == 2)
        #expect(try snapshot(lab.send(docs, .policyRequest, frameID: 5))?.sequence == 1)
        #expect(try snapshot(lab.send(mail, .policyRequest, frameID: 7))?.sequence == 3)
    }

    @Test func aSnapshotAnswersPolicyQueriesAsTheBrokersEngineDoes() throws {
        var lab = CoreLab()
        let mail = lab.launch("com.contoso.mail", account: "adele@contoso.com")
        let snap = try #require(try snapshot(lab.send(mail, .policyRequest, frameID: 5)))
        #expect(snap.app.bundleID == "com.contoso.mail" && snap.app.isMultiIdentity)
        #expect(snap.enrolled?.upn == "adele@contoso.com" && snap.policy != nil)
        let broker = try #require(lab.core.party(of: mail))
        // The party the app builds from the snapshot is the broker's, decision for decision.
        let local = snap.party(broker.identity)
        #expect(local == broker)
        let engine = lab.core.engine
        for url in ["https://contoso.com", "contosodocs://x", "tel:123", "mailto:a@b.c"] {
            #expect(engine.isURLAllowed(url, by: local) == engine.isURLAllowed(url, by: broker), "\(url)")
        }
        for location in SaveLocation.allCases {
            #expect(engine.saveTo(location, account: broker.enrolled, owner: local) == engine.saveTo(location, account: broker.enrolled, owner: broker))
        }
        #expect(PolicyView(local) == PolicyView(broker))
        // Identities compare case-insensitively, and a user's UPN is its object id.
        #expect(snap.identity(named: "ADELE@contoso.com") == snap.identity(named: "5F1C7A2E-3B4D-4E6F-8A9B-0C1D2E3F4A5B"))
        #expect(snap.identity(named: "personal") == .personal && snap.identity(named: "") == .personal)
        #expect(snap.identity(named: "someone@elsewhere.com") != snap.identity(named: "adele@contoso.com"))
        // Another account is unmanaged here; several with one managed get the lock-down policy.
        let ben = try #require(CoreLab.sampleTenant.knownAccount(named: "ben@contoso.com"))
        #expect(!snap.party(.account(ben)).isManaged)
        let mixed = snap.party(forAccounts: [ben, broker.enrolled!])
        #expect(mixed.isManaged && mixed.activePolicy == .lockDown)
    }

    @Test func anAppWithoutTheSDKHasNoSnapshotAndNoKey() {
        var lab = CoreLab()
        let notes = lab.launch("com.example.notes")
        #expect(lab.send(notes, .policyRequest).error == .notAllowed)
        #expect(lab.send(notes, .keyRequest(account: "adele@contoso.com")).error == .notAllowed)
    }

    @Test func theKeyGoesOnlyToTheManagedAccountTheAppIsEnrolledWithAudited() {
        var lab = CoreLab()
        let docs = lab.launch("com.contoso.docs", account: "adele@contoso.com")
        let got = lab.send(docs, .keyRequest(account: "ADELE@contoso.com"), frameID: 7)
        guard case let .accountKey(account, key)? = got.first?.frame.message else {
            Issue.record("no key: \(got.map(\.frame))")
            return
        }
        #expect(account == "ADELE@contoso.com" && key.count == 32)
        #expect(lab.audits.last?.channel == "key" && lab.audits.last?.outcome == "allowed")
        // Ben is a tenant user, but not the account Docs is enrolled with.
        #expect(lab.send(docs, .keyRequest(account: "ben@contoso.com")).error == .notAllowed)
        #expect(lab.audits.last?.outcome == "blocked" && lab.audits.last?.detail == "ben@contoso.com")
        #expect(lab.send(docs, .keyRequest(account: "a/b")).error == .invalidName)
        #expect(lab.send(docs, .keyRequest(account: "someone@elsewhere.com")).error == .notAllowed)
    }
}
