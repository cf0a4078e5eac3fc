import CMAMWire
import Dispatch
import Glibc

/// epoll over the broker's descriptors, and a mailbox other threads post to (an eventfd wakes
/// the loop). Level-triggered: a connection with frames left is reported again next turn, which
/// is what lets the loop read a few frames per connection and move on.
final class EventLoop<Mail: Sendable>: @unchecked Sendable {
    let epoll: Int32
    let wakeFD: Int32
    private let lock = Mutex()
    private var mail: [Mail] = []
    let finished = DispatchSemaphore(value: 0)

    init() throws {
        epoll = mam_epoll_create()
        wakeFD = mam_eventfd()
        guard epoll >= 0, wakeFD >= 0 else { throw BrokerError("epoll/eventfd: \(String(cString: strerror(errno)))") }
        try add(wakeFD)
    }

    deinit {
        close(epoll)
        close(wakeFD)
    }

    func add(_ fd: Int32) throws {
        guard mam_epoll_add(epoll, fd) == 0 else { throw BrokerError("epoll_ctl: \(String(cString: strerror(errno)))") }
    }

    func remove(_ fd: Int32) { _ = mam_epoll_del(epoll, fd) }

    /// The descriptors that are ready (the wake descriptor drained and included).
    func wait(timeoutMilliseconds: Int32) -> [Int32] {
        var fds = [Int32](repeating: -1, count: 64)
        let n = mam_epoll_wait(epoll, &fds, 64, timeoutMilliseconds)
        guard n > 0 else { return [] }
        let ready = Array(fds[0..<Int(n)])
        if ready.contains(wakeFD) {
            var v: UInt64 = 0
            _ = read(wakeFD, &v, 8)
        }
        return ready
    }

    /// Hands the loop something to do; safe from any thread.
    func post(_ item: Mail) {
        lock.withLock { mail.append(item) }
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    func takeMail() -> [Mail] {
        lock.withLock {
            defer { mail.removeAll(keepingCapacity: true) }
            return mail
        }
    }
}
