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
        ready.deallocate()
    }

    func add(_ fd: Int32) throws {
        guard mam_epoll_add(epoll, fd) == 0 else { throw BrokerError("epoll_ctl: \(String(cString: strerror(errno)))") }
    }

    func remove(_ fd: Int32) { _ = mam_epoll_del(epoll, fd) }

    /// Waits, then calls `body` with each descriptor that is ready (the wake descriptor drained,
    /// and not passed on). The ready list is one buffer kept for the loop's life: the wait runs
    /// once per turn, and an array per turn cost more than the wait's own bookkeeping.
    func wait(timeoutMilliseconds: Int32, _ body: (Int32) -> Void) {
        let n = Int(mam_epoll_wait(epoll, ready, Int32(Self.readyCapacity), timeoutMilliseconds))
        for i in 0..<max(n, 0) {
            let fd = ready[i]
            if fd == wakeFD {
                var v: UInt64 = 0
                _ = read(wakeFD, &v, 8)
            } else {
                body(fd)
            }
        }
    }

    private static var readyCapacity: Int { 64 }
    private let ready = UnsafeMutablePointer<Int32>.allocate(capacity: 64)

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
