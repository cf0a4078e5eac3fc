import CMAMKitQueues
import Dispatch
import Foundation

// Work queued on Dispatch or an OperationQueue keeps the identity of the code that queued it
// (seed 000 and seed 002 §Thread queues): the SDK hooks every GCD call to carry the calling
// thread's identity into the block, sets it while the block runs and restores the thread's own
// afterwards. MAMKit does the same: libdispatch's block entry points are defined in the app's
// own executable (CMAMKitQueues), so the plain `DispatchQueue.async`, `asyncAfter`, groups,
// sources, work items and every OperationQueue operation carry the scoped identity of the code
// that queued them. The work may set another identity while it runs (an inner
// `IdentityScope.withAccount`). The calls below with "KeepingIdentity" in their names do the
// same explicitly, for code that must not depend on the interposition.

/// The scoped identity carried into a queued block: an owned reference the C side holds until
/// the block has run.
private final class CarriedIdentity {
    let account: String
    init(_ account: String) { self.account = account }
}

extension IdentityScope {
    /// Turns the carrying on for this process (at `MAMApp.start`); idempotent.
    static func carryIntoQueuedWork() {
        mam_queue_identity_install(
            { IdentityScope.account.map { Unmanaged.passRetained(CarriedIdentity($0)).toOpaque() } },
            { identity, call in
                let account = Unmanaged<CarriedIdentity>.fromOpaque(identity).takeUnretainedValue().account
                IdentityScope.withAccount(account) { mam_queue_continue(call) }
            },
            { _ = Unmanaged<CarriedIdentity>.fromOpaque($0).retain() },
            { Unmanaged<CarriedIdentity>.fromOpaque($0).release() })
    }

    /// Whether plain queued work carries the identity in this process: the app's executable
    /// defines libdispatch's block entry points and its libraries bind to them.
    public static var carriesIntoPlainQueues: Bool { mam_queue_interposed() == 1 }
}

extension IdentityScope {
    /// A work item that runs under the scoped identity in effect where it was created, wherever
    /// and whenever it is performed (seed 002 §Thread queues: a Swift `DispatchWorkItem` keeps
    /// the identity of the thread that created it).
    public static func workItem(qos: DispatchQoS = .unspecified, flags: DispatchWorkItemFlags = [],
                                _ work: @escaping @Sendable () -> Void) -> DispatchWorkItem {
        let account = IdentityScope.account
        return DispatchWorkItem(qos: qos, flags: flags) { IdentityScope.withAccount(account, work) }
    }
}

extension DispatchQueue {
    /// `async` that carries the caller's scoped identity into the work.
    public func asyncKeepingIdentity(group: DispatchGroup? = nil, qos: DispatchQoS = .unspecified, flags: DispatchWorkItemFlags = [],
                                     execute work: @escaping @Sendable () -> Void) {
        let account = IdentityScope.account
        async(group: group, qos: qos, flags: flags) { IdentityScope.withAccount(account, work) }
    }

    /// `asyncAfter` that carries the caller's scoped identity into the work.
    public func asyncAfterKeepingIdentity(deadline: DispatchTime, execute work: @escaping @Sendable () -> Void) {
        let account = IdentityScope.account
        asyncAfter(deadline: deadline) { IdentityScope.withAccount(account, work) }
    }

    /// `sync` that runs the work under the caller's scoped identity, on whichever thread the
    /// queue runs it.
    public func syncKeepingIdentity<T>(execute work: () throws -> T) rethrows -> T {
        let account = IdentityScope.account
        return try sync { try IdentityScope.withAccount(account, work) }
    }
}

extension OperationQueue {
    /// `addOperation` that runs the block under the scoped identity of the code that added it
    /// (seed 000 §Thread queues: operations run on the identity of the thread at the time they
    /// were added).
    public func addOperationKeepingIdentity(_ block: @escaping @Sendable () -> Void) {
        let account = IdentityScope.account
        addOperation { IdentityScope.withAccount(account, block) }
    }
}
