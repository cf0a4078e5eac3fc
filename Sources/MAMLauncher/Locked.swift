import Synchronization

/// A value several threads update.
package final class Locked<Value>: Sendable {
    private let mutex: Mutex<Value>
    package init(_ value: sending Value) { mutex = Mutex(value) }
    package var value: Value { mutex.withLock { $0 } }
    package func update(_ body: (inout sending Value) -> Void) { mutex.withLock { body(&$0) } }
}
