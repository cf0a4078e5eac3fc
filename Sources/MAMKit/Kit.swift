import Foundation
import Logging
import MAMPolicy
import MAMWire

/// The kit's state and its one broker connection, shared by every manager and channel.
final class Kit: Sendable {
    struct State {
        var bundleID = ""
        var integratesSDK = false
        var snapshot: PolicySnapshot?
        /// The number of the latest snapshot taken (`PolicySnapshot.sequence`).
        var snapshotSequence = 0
        /// The UI identity (nil: not set, falls back to the process identity).
        var ui: Identity?
        var process: Identity?
        /// The app is in the background (`PolicyManager.pause`).
        var paused = false
        /// The UI identity of each window or scene the app named (nil: none set), and the key
        /// window, whose identity is `ui` (`PolicyManager.setUIIdentity(_:for:)`).
        var windows: [UIWindowID: Identity?] = [:]
        var keyWindow: UIWindowID?
        /// Windows that show several accounts at once (`setUIIdentities(_:for:)`), and the key
        /// window's, which UI work then acts under instead of `ui`.
        var views: [UIWindowID: [Identity]] = [:]
        var uiView: [Identity]?
        /// The identity the broker has the app acting under, as last set or reported, and the
        /// view it shows when it shows several accounts.
        var broker: Identity?
        var brokerView: [Identity]?
        /// What this app hands out when another app imports from it, by lower-cased type.
        var served: [String: (name: String, bytes: [UInt8])] = [:]
        var keys: [String: [UInt8]] = [:]
        /// Accounts a launch check blocked, by lower-cased name, and the last check told of each.
        var blocked: [String: (account: String, reason: BlockAccountReason)] = [:]
        var launchChecks: [String: LaunchCheckNotice] = [:]
        var policyDelegate: (any PolicyDelegate)?
        var enrollmentDelegate: (any EnrollmentDelegate)?
        var complianceDelegate: (any ComplianceDelegate)?
        var appConfigDelegate: (any AppConfigDelegate)?
        var urlHandler: (@Sendable (URLDelivery) async -> Void)?
        var fileProtector: any FileProtector = ProtectFiles()
        /// Policy objects and resolved names for the current snapshot: a query is then a lookup
        /// and the engine's answer, not a party built anew. Emptied with every new snapshot.
        var policies: [Identity?: AppPolicy] = [:]
        var names: [String: Identity] = [:]
        /// Policy objects by the account name an app asked with: one lookup, one lock.
        var policiesByName: [String: AppPolicy] = [:]

        mutating func setSnapshot(_ snap: PolicySnapshot?) {
            snapshot = snap
            policies = [:]
            names = [:]
            policiesByName = [:]
        }
    }

    /// Entries each cache keeps at most (an app names few accounts; a hostile caller many).
    static let cacheLimit = 256

    let connection: BrokerConnection
    let state = Locked(State())
    let lane = SerialLane()
    /// Policy queries need no tenant: they read the party's own policy.
    let engine = PolicyEngine(tenant: Tenant(name: "snapshot"))
    let logger: Logger
    let screen = ScreenState()
    let registered = RegisteredAccounts()
    let events: AsyncStream<MAMEvent>
    let eventSink: AsyncStream<MAMEvent>.Continuation

    init(connection: BrokerConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
        (events, eventSink) = AsyncStream.makeStream(of: MAMEvent.self, bufferingPolicy: .unbounded)
    }

    var snapshot: PolicySnapshot? { state.withLock { $0.snapshot } }
    var fileProtector: any FileProtector { state.withLock { $0.fileProtector } }

    // MARK: Identities

    /// Thread (scoped) identity, else the UI identity for UI work, else the process identity;
    /// nil when nothing is set (a multi-identity app's launch state).
    func effectiveIdentity(forUIWork: Bool) -> Identity? {
        if let scoped = IdentityScope.account { return resolve(scoped) }
        return state.withLock { s in forUIWork ? s.ui ?? s.process : s.process }
    }

    /// An identity from its written form, against the snapshot's accounts (cached per snapshot).
    func resolve(_ name: String) -> Identity {
        if let known = state.withLock({ $0.names[name] }) { return known }
        let snap = snapshot
        let identity: Identity
        if let snap { identity = snap.identity(named: name) } else {
            let t = name.trimmingCharacters(in: .whitespaces)
            identity = t.isEmpty || t.lowercased() == "personal" ? .personal : .account(Account(unknown: t))
        }
        state.withLock { s in
            guard s.snapshot == snap else { return }
            if s.names.count >= Self.cacheLimit { s.names = [:] }
            s.names[name] = identity
        }
        return identity
    }

    /// The written form the broker takes (`""` personal).
    static func wire(_ identity: Identity) -> String {
        switch identity {
        case .personal: return ""
        case let .account(a): return a.upn ?? a.name
        }
    }

    /// The party for an identity, from the latest snapshot (an app without one is unmanaged).
    func policy(for identity: Identity?) -> AppPolicy {
        let (cached, current, bundle) = state.withLock { ($0.policies[identity], $0.snapshot, $0.bundleID) }
        if let cached { return cached }
        let snap = current ?? PolicySnapshot(app: AppManifest(bundleID: bundle), enrolled: nil, policy: nil,
                                             identity: .personal, signedIn: [], isMDMManaged: false, revision: 0)
        let made = AppPolicy(engine: engine, snapshot: snap, party: snap.party(identity))
        state.withLock { s in
            guard s.snapshot == current else { return }
            if s.policies.count >= Self.cacheLimit { s.policies = [:] }
            s.policies[identity] = made
        }
        return made
    }

    /// `policy(forAccountId:)`: the policy object for an account as the app names it.
    func policy(forName name: String) -> AppPolicy {
        if let cached = state.withLock({ $0.policiesByName[name] }) { return cached }
        let current = snapshot
        let made = policy(for: resolve(name))
        state.withLock { s in
            guard s.snapshot == current else { return }
            if s.policiesByName.count >= Self.cacheLimit { s.policiesByName = [:] }
            s.policiesByName[name] = made
        }
        return made
    }

    // MARK: Requests

    /// Sets the broker's identity for this app; the engine's decision comes back.
    func setBrokerIdentity(_ identity: Identity) async throws -> SharingDecision {
        let replies = try await connection.request(.setIdentity(account: Self.wire(identity)))
        guard case let .decision(record)? = replies.first?.frame.message else { throw MAMKitError(.unexpectedReply, "setIdentity: \(replies)") }
        let d = SharingDecision(record)
        if d.allowed {
            state.withLock { s in
                s.broker = identity
                s.brokerView = nil
            }
        }
        return d
    }

    /// Has the broker act for a view of several accounts (`setViewIdentities`); the engine's
    /// decision comes back.
    func setBrokerView(_ identities: [Identity]) async throws -> SharingDecision {
        let replies = try await connection.request(.setViewIdentities(accounts: identities.map(Self.wire)))
        guard case let .decision(record)? = replies.first?.frame.message else { throw MAMKitError(.unexpectedReply, "setViewIdentities: \(replies)") }
        let d = SharingDecision(record)
        if d.allowed {
            state.withLock { s in
                s.broker = identities.first ?? .personal
                s.brokerView = identities.count > 1 ? identities : nil
            }
        }
        return d
    }

    /// What the broker acts for: one identity, or a view of several accounts.
    enum Shown: Equatable {
        case one(Identity)
        case view([Identity])
    }

    /// Puts the broker back to what the UI shows (after a scoped action, a cancelled switch).
    func restoreBroker(_ shown: Shown?) async {
        switch shown {
        case let .one(identity)?: _ = try? await setBrokerIdentity(identity)
        case let .view(identities)?: _ = try? await setBrokerView(identities)
        case nil: break
        }
    }

    /// What the broker shows now, as the kit last set it.
    var brokerShown: Shown? {
        state.withLock { s in s.brokerView.map(Shown.view) ?? s.broker.map(Shown.one) }
    }

    /// The policy of a view of several accounts (the lock-down one when one is managed).
    func policy(showing identities: [Identity]) -> AppPolicy {
        let p = policy(for: nil)
        return AppPolicy(engine: engine, snapshot: p.snapshot, party: p.snapshot.party(showing: identities))
    }

    /// Carries out an action under the effective identity: the broker is told that identity
    /// first when it differs, and the UI identity again afterwards, with nothing in between.
    func acting<T: Sendable>(forUIWork: Bool = true, _ body: () async throws -> T) async throws -> T {
        let wanted = effectiveIdentity(forUIWork: forUIWork)
        // UI work in a window that shows several accounts acts for the whole view; a scoped
        // (thread) identity overrides it, as it overrides a window's one identity.
        let view = IdentityScope.account == nil && forUIWork ? state.current.uiView : nil
        await lane.acquire()
        do {
            if let view {
                if view != state.current.brokerView {
                    let d = try await setBrokerView(view)
                    guard d.allowed else { throw MAMKitError(.refused(.notAllowed), "the view of \(view) may not act here: \(d.message) (\(d.rule))") }
                }
            } else if let wanted, wanted != state.current.broker || state.current.brokerView != nil {
                let d = try await setBrokerIdentity(wanted)
                guard d.allowed else { throw MAMKitError(.refused(.notAllowed), "the identity \(wanted) may not act here: \(d.message) (\(d.rule))") }
            }
            let result = try await body()
            if IdentityScope.account != nil {
                let s = state.current
                if let shown = s.uiView, shown != s.brokerView {
                    _ = try? await setBrokerView(shown)
                } else if s.uiView == nil, let ui = s.ui, ui != wanted {
                    _ = try? await setBrokerIdentity(ui)
                }
            }
            await lane.release()
            return result
        } catch {
            await lane.release()
            throw error
        }
    }

    /// Asks for the policy snapshot again (after a notice, a switch); returns it.
    @discardableResult
    func refreshPolicy() async throws -> PolicySnapshot? {
        guard state.current.integratesSDK else { return nil }
        let replies: [Incoming]
        do {
            replies = try await connection.request(.policyRequest)
        } catch let e as MAMKitError where e.code == .refused(.notAllowed) {
            // The manifest has no SDK: the broker treats this app as unmanaged.
            state.withLock { $0.integratesSDK = false }
            return nil
        }
        guard case let .policySnapshot(json)? = replies.first?.frame.message else { throw MAMKitError(.unexpectedReply, "policyRequest") }
        var snap = try JSONDecoder().decode(PolicySnapshot.self, from: Data(json.utf8))
        let sequence = snap.sequence ?? 0
        snap.sequence = nil
        let changed = state.withLock { s -> Bool in
            // Two refreshes in flight (a notice's and an unenrollment's) resume in either
            // order: a snapshot older than the one taken is not what the broker holds now.
            guard sequence == 0 || sequence > s.snapshotSequence else { return false }
            s.snapshotSequence = max(s.snapshotSequence, sequence)
            let changed = s.snapshot != snap
            let enrolledBefore = s.snapshot?.enrolled
            if changed { s.setSnapshot(snap) }
            // A single-identity app has one identity, its enrolled account: when the enrollment
            // changes (the app enrolled the account the user signed in, or lost it), so does
            // the process identity, as the broker already acts on it.
            if changed, !snap.app.isMultiIdentity, enrolledBefore != snap.enrolled {
                s.process = snap.enrolled.map(Identity.account) ?? snap.identity
            }
            if s.broker == nil { s.broker = snap.identity }
            return changed
        }
        if changed {
            logger.debug("policy snapshot", metadata: ["revision": "\(snap.revision)", "enrolled": "\(snap.enrolled?.name ?? "none")",
                                                      "policy": "\(snap.policy?.displayName ?? "none")"])
            eventSink.yield(.policyChanged)
        }
        return snapshot
    }
}
