import Dispatch
import Foundation

// Work queued on Dispatch or an OperationQueue keeps the identity of the code that queued it
// (seed 000 and seed 002 §Thread queues): the SDK hooks every GCD call to carry the calling
// thread's identity into the block, sets it while the block runs and restores the thread's own
// afterwards. Nothing can hook libdispatch here, so MAMKit's queue calls do it explicitly; work
// queued through the plain calls runs with no scoped identity (the process identity applies).
// The work may set another identity while it runs (an inner `IdentityScope.withAccount`).

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
