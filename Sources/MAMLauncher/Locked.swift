import Synchronization

/// A value several threads update.
///
/// Inlinable: the live matrix (another module) reads its running apps through one at every
/// pick of a cell, and a generic call across a module boundary unspecialized looked up its
/// type's metadata at every call.
package final class Locked<Value>: Sendable {
    @usableFromInline let mutex: Mutex<Value>
    @inlinable package init(_ value: sending Value) { mutex = Mutex(value) }
    @inlinable package var value: Value { mutex.withLock { $0 } }
    @inlinable package func update(_ body: (inout sending Value) -> Void) { mutex.withLock { body(&$0) } }
}
