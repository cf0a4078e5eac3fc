import Foundation
import Glibc
import MAMWire
import SystemPackage

/// One frame as it arrived, with the descriptor that came with it (the receiver owns it).
struct Incoming: Sendable {
    var frame: Frame
    var descriptor: Int32?
}

/// How many frames answer a request: one, or a decision and, when it allows, one more (the
/// imported document, the opened file).
enum ReplyShape: Sendable {
    case one
    case decisionThenItem
}

/// The app's end of its broker connection (`MAMLAB_BROKER_FD`).
///
/// One reader thread owns receiving: a reply goes to the request whose id it carries, anything
/// else (and the service's notices, also when they answer a request) to `unsolicited`. Requests
/// number from 1 and stay below 0x80000000, so the broker's own frame ids never collide with them.
final class BrokerConnection: Sendable {
    private struct Pending {
        var shape: ReplyShape
        var replies: [Incoming] = []
        var continuation: CheckedContinuation<[Incoming], any Error>
        /// When it times out (the monotonic clock, `Deadlines.now`), and what it asked, to name it then.
        var deadline: UInt64
        var message: Message
    }
    private struct State {
        var nextID: UInt32 = 1
        var pending: [UInt32: Pending] = [:]
        var closed = false
    }

    let socket: WireSocket
    /// Seconds a request waits for its reply. The broker answers at once or, for a request that
    /// waits on another app (a URL's launch, an import), within 30 s; a broker that goes silent
    /// must not leave the app waiting forever.
    let requestTimeout: Double
    static let defaultRequestTimeout: Double = 60
    private let state = Locked(State())
    /// Frames nobody asked for, in arrival order, for the kit's event loop.
    let unsolicited: AsyncStream<Incoming>
    private let sink: AsyncStream<Incoming>.Continuation

    /// The connection lives as long as the app's process: its reader holds the socket.
    init(_ connection: consuming Descriptor, requestTimeout: Double = BrokerConnection.defaultRequestTimeout) {
        socket = WireSocket(adopting: connection)
        self.requestTimeout = requestTimeout
        (unsolicited, sink) = AsyncStream.makeStream(of: Incoming.self, bufferingPolicy: .unbounded)
    }

    /// The descriptor from the environment, as the launcher passes it.
    static func fromEnvironment() throws(MAMKitError) -> BrokerConnection {
        guard let text = ProcessInfo.processInfo.environment["MAMLAB_BROKER_FD"], let fd = Int32(text), fd >= 0 else {
            throw MAMKitError(.disconnected, "no broker connection: MAMLAB_BROKER_FD is not set (start the app with `mamlaunch run`)")
        }
        return BrokerConnection(Descriptor(adopting: fd))
    }

    func start() {
        let thread = Thread { [self] in readLoop() }
        thread.name = "mamkit.reader"
        thread.start()
        let deadlines = Thread { [self] in expireLoop() }
        deadlines.name = "mamkit.deadlines"
        deadlines.start()
    }

    /// Fails each request its time-out has passed. One thread for all requests: a timer per
    /// request woke libdispatch's manager thread twice per request, a sixth of a scripted app's
    /// context switches in a live matrix. Every request waits the same `requestTimeout`, so a
    /// later request never times out before an earlier one: sleeping until the oldest deadline
    /// (or a whole time-out when none is pending) never misses one, and nothing has to wake it.
    private func expireLoop() {
        let whole = Deadlines.nanoseconds(requestTimeout)
        while true {
            let now = Deadlines.now()
            let (expired, next, closed) = state.withLock { s -> ([(UInt32, Pending)], UInt64?, Bool) in
                let expired = s.pending.filter { $0.value.deadline <= now }
                for (id, _) in expired { s.pending[id] = nil }
                return (expired.map { ($0.key, $0.value) }, s.pending.values.map(\.deadline).min(), s.closed)
            }
            for (_, p) in expired.sorted(by: { $0.0 < $1.0 }) {
                p.replies.forEach { $0.descriptor.map { _ = Glibc.close($0) } }
                // Named only when it times out: describing a message reflects over it, and that
                // was a few per cent of a live matrix's CPU when done for every request.
                let name = String(describing: p.message).prefix { $0 != "(" }
                p.continuation.resume(throwing: MAMKitError(.timedOut, "the broker did not answer \(name) within \(requestTimeout) s"))
            }
            if closed { return }
            Deadlines.sleep(until: next ?? now + whole)
        }
    }

    private func readLoop() {
        // A scripted app's command goes on here when its answer comes (InlineExecutor).
        InlineExecutor.runsJobsInPlace()
        let buffer = ReceiveBuffer()
        while var raw = socket.receiveRaw(buffer: buffer) {
            // A frame that cannot be read is dropped; when its header still names a request, that
            // request fails now rather than at its time-out.
            // (A descriptor that came with it closes with `raw`.)
            if let error = raw.error {
                fail(Self.requestID(raw.bytes), MAMKitError(.unexpectedReply, "a reply that could not be received: \(error)"))
                continue
            }
            let frame: Frame
            do { frame = try socket.decode(raw.bytes) } catch {
                fail(Self.requestID(raw.bytes), MAMKitError(.unexpectedReply, "a reply that could not be read: \(error)"))
                continue
            }
            // From here the kit closes it by hand, as `Incoming` travels in lists and streams.
            deliver(Incoming(frame: frame, descriptor: raw.descriptor.take()?.release()))
        }
        let waiting = state.withLock { s -> [Pending] in
            s.closed = true
            defer { s.pending = [:] }
            return Array(s.pending.values)
        }
        for p in waiting { p.continuation.resume(throwing: MAMKitError(.disconnected, "the broker closed the connection")) }
        sink.finish()
    }

    /// The id in a frame's header (bytes 4-7, little-endian) when it has one of this side's
    /// requests' numbers.
    private static func requestID(_ bytes: [UInt8]) -> UInt32? {
        guard bytes.count >= 8, bytes[0] == 0x4D, bytes[1] == 0x57 else { return nil }
        let id = UInt32(bytes[4]) | UInt32(bytes[5]) << 8 | UInt32(bytes[6]) << 16 | UInt32(bytes[7]) << 24
        return id > 0 && id < 0x8000_0000 ? id : nil
    }

    /// Ends a pending request with `error` (nothing when it is no longer pending).
    private func fail(_ id: UInt32?, _ error: MAMKitError) {
        guard let id, let p = state.withLock({ $0.pending.removeValue(forKey: id) }) else { return }
        p.replies.forEach { $0.descriptor.map { _ = Glibc.close($0) } }
        p.continuation.resume(throwing: error)
    }

    private func deliver(_ incoming: Incoming) {
        let id = incoming.frame.id
        let (matched, done) = state.withLock { s -> (Bool, (CheckedContinuation<[Incoming], any Error>, [Incoming])?) in
            guard var p = s.pending[id] else { return (false, nil) }
            p.replies.append(incoming)
            if Self.isComplete(p) {
                s.pending[id] = nil
                return (true, (p.continuation, p.replies))
            }
            s.pending[id] = p
            return (true, nil)
        }
        if !matched {
            sink.yield(incoming)
        } else if Self.isNotice(incoming.frame.message) {
            // The service's notices are the delegate's too, also when they answer a request.
            sink.yield(Incoming(frame: incoming.frame, descriptor: nil))
        }
        if let (c, replies) = done { c.resume(returning: replies) }
    }

    private static func isNotice(_ m: Message) -> Bool {
        switch m {
        case .enrollmentNotice, .restartRequest, .wipeRequest, .complianceStatus, .conditionalLaunch: return true
        default: return false
        }
    }

    private static func isComplete(_ p: Pending) -> Bool {
        switch p.shape {
        case .one: return true
        case .decisionThenItem:
            guard case let .decision(d)? = p.replies.first?.frame.message else { return true }
            return !d.allowed || p.replies.count >= 2
        }
    }

    /// Sends a request and waits for its replies. A refusal (`error`) throws.
    func request(_ message: Message, descriptor: Int32? = nil, shape: ReplyShape = .one) async throws -> [Incoming] {
        let replies = try await withCheckedThrowingContinuation { (c: CheckedContinuation<[Incoming], any Error>) in
            let deadline = Deadlines.now() + Deadlines.nanoseconds(requestTimeout)
            let id: UInt32? = state.withLock { s in
                guard !s.closed else { return nil }
                let id = s.nextID
                s.nextID = s.nextID >= 0x7FFF_FFFF ? 1 : s.nextID + 1
                s.pending[id] = Pending(shape: shape, continuation: c, deadline: deadline, message: message)
                return id
            }
            guard let id else {
                c.resume(throwing: MAMKitError(.disconnected, "the broker connection is closed"))
                return
            }
            do {
                try socket.send(Frame(id: id, message), descriptor: descriptor.map(FileDescriptor.init(rawValue:)))
            } catch {
                let p = state.withLock { $0.pending.removeValue(forKey: id) }
                p?.continuation.resume(throwing: MAMKitError(.disconnected, "\(error)"))
            }
        }
        if case let .error(code, detail)? = replies.first?.frame.message {
            throw MAMKitError(.refused(code), detail)
        }
        return replies
    }

    /// Sends a frame that answers the broker (an `exportReply` under the broker's id) or ends
    /// the conversation (`bye`).
    func send(_ frame: Frame, descriptor: Int32? = nil) throws(MAMKitError) {
        do { try socket.send(frame, descriptor: descriptor.map(FileDescriptor.init(rawValue:))) } catch { throw MAMKitError(.disconnected, error.description) }
    }

    func close() {
        try? send(Frame(id: 0, .bye))
        shutdown(socket.descriptor.rawValue, Int32(SHUT_RDWR))
    }
}

/// The monotonic clock the request deadlines use, in nanoseconds.
enum Deadlines {
    static func now() -> UInt64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
    }

    static func nanoseconds(_ seconds: Double) -> UInt64 {
        UInt64(max(0, min(seconds, 1e9)) * 1e9)
    }

    static func sleep(until deadline: UInt64) {
        var t = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, nil) == EINTR {}
    }
}
