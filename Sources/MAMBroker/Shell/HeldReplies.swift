import Glibc
import Logging
import MAMBrokerCore
import MAMService
import MAMWire
import SystemPackage

/// Replies waiting for a state write: the loop hands a write to the persistence queue and goes
/// on serving everyone else, while the replies that follow the write in the same turn (the
/// enrolled app's answer, a wiped app's notice) wait until it is done. What an app is told is
/// in the database before or with the answer, and the loop never waits for the disk.
///
/// Writes are numbered as they are issued; a reply waits for a number, and goes once that write
/// and every earlier one are done. A later reply to the same connection waits at least as long
/// as the one before it, so nothing overtakes on a connection; other connections are not held.
struct HeldReplies {
    enum Item {
        /// A frame, with a copy of its descriptor taken when it was held (the core releases its own).
        case frame(Frame, descriptor: Int32?)
        case close(reason: String?)
    }

    private var issued: UInt64 = 0
    /// Every write up to this one is done.
    private var written: UInt64 = 0
    private var finished: Set<UInt64> = []
    private var items: [(write: UInt64, session: SessionID, item: Item)] = []
    private var lastHeld: [SessionID: UInt64] = [:]

    var isEmpty: Bool { items.isEmpty }

    /// Numbers a write about to be handed to the persistence queue.
    mutating func issue() -> UInt64 {
        issued += 1
        return issued
    }

    /// The write a reply to `session` must wait for, if any: `turnWrite` (one its own turn
    /// issued) or the one an earlier reply still held for that connection waits for.
    func mustWait(_ session: SessionID, turnWrite: UInt64?) -> UInt64? {
        // Nearly always nothing is held: no look-up (a hash of the session) per reply then.
        guard turnWrite != nil || !lastHeld.isEmpty else { return nil }
        let w = max(turnWrite ?? 0, lastHeld[session] ?? 0)
        return w > written ? w : nil
    }

    mutating func hold(_ item: Item, for session: SessionID, until write: UInt64) {
        items.append((write, session, item))
        lastHeld[session] = write
    }

    /// Marks writes done; returns the replies that may go now, in the order they were held.
    mutating func finish(_ writes: [UInt64]) -> [(SessionID, Item)] {
        finished.formUnion(writes)
        while finished.remove(written + 1) != nil { written += 1 }
        var ready: [(SessionID, Item)] = []
        var waiting: [(write: UInt64, session: SessionID, item: Item)] = []
        for held in items {
            if held.write <= written { ready.append((held.session, held.item)) } else { waiting.append(held) }
        }
        items = waiting
        lastHeld = lastHeld.filter { $0.value > written }
        return ready
    }

    /// At the loop's end: the connections are closing, and the held descriptors go with them.
    mutating func discard() {
        for case let (_, _, .frame(_, fd?)) in items { close(fd) }
        items = []
        lastHeld = [:]
    }
}

extension Broker {
    /// Carries out what `finish` released: a frame the receiver no longer takes loses it its
    /// connection, as a reply sent at once would have.
    func release(_ writes: [UInt64]) {
        for (id, item) in heldReplies.finish(writes) {
            switch item {
            case let .frame(frame, descriptor):
                defer { descriptor.map { _ = close($0) } }
                guard let socket = sockets[id] else { continue }
                do { try socket.send(frame, descriptor: descriptor.map(FileDescriptor.init(rawValue:)), wait: false) } catch {
                    log(LogLine(level: .warning, message: "a reply could not be delivered; closing that connection",
                                metadata: ["session": "\(id)", "error": error.description]))
                    apply(core.handle(.disconnected(id)))
                    drop(id, reason: nil)
                }
            case let .close(reason):
                drop(id, reason: reason)
            }
        }
    }

    /// The newest enrollments are written on the persistence queue, coalesced: a burst of
    /// changes costs one write at a time, of the newest list, which covers every write number
    /// it replaced.
    func saveEnrollments(_ list: [Enrollment], wipes: Set<String>, signedOut: Set<String>, now: Duration, write: UInt64) {
        let schedule = pendingEnrollments.withLock { () -> Bool in
            let idle = unsavedEnrollments == nil
            unsavedEnrollments = UnsavedEnrollments(list: list, wipes: wipes, signedOut: signedOut, now: now,
                                                    writes: (unsavedEnrollments?.writes ?? []) + [write])
            return idle
        }
        guard schedule else { return }
        persistence.async { [self] in
            guard let latest = pendingEnrollments.withLock({ () -> UnsavedEnrollments? in
                defer { unsavedEnrollments = nil }
                return unsavedEnrollments
            }) else { return }
            do { try store.saveEnrollments(latest.list, pendingWipes: latest.wipes, signedOut: latest.signedOut, now: latest.now) } catch {
                logger.error("the enrollments could not be saved", metadata: ["error": "\(error)"])
            }
            loop.post(Mail.stateWritten(latest.writes))
        }
    }

    /// Destroyed on the persistence queue, after every write issued before it.
    func destroyKey(_ keyID: String, write: UInt64) {
        persistence.async { [self] in
            do { try store.destroyKey(keyID) } catch {
                logger.error("a wiped account's key could not be destroyed", metadata: ["error": "\(error)"])
            }
            loop.post(Mail.stateWritten([write]))
        }
    }
}

struct UnsavedEnrollments {
    var list: [Enrollment]
    var wipes: Set<String>
    var signedOut: Set<String>
    var now: Duration
    var writes: [UInt64]
}
