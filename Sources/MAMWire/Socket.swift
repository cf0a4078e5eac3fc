import Glibc
import Synchronization
import SystemPackage

/// A connected SOCK_SEQPACKET socket that sends and receives whole frames, with at most one
/// descriptor attached (SCM_RIGHTS). It owns its descriptor and closes it exactly once: at
/// `close()`, or when the last reference goes.
///
/// A class, not a `~Copyable` value: the broker keeps its sockets in maps by session and by
/// descriptor and answers a sign-in on the socket it came from, and an app's connection shares
/// its socket between its reader thread and the tasks that send; the standard library's maps
/// and closures need copyable values. What `~Copyable` would give, one close, comes from
/// `close()` taking the number away atomically: a second close, or the last reference going
/// after one, does nothing, and a send or receive after it fails (EBADF) instead of reaching
/// whatever file the number was given to next.
public final class WireSocket: Sendable {
    /// -1 once closed or released.
    private let raw: Atomic<Int32>
    /// The protocol version the two ends agreed on, 0 until then: the version of the `welcome`
    /// this socket sent (the broker's) or received (an app's). From then on every frame goes out
    /// in it, and a frame of another is refused. Before it, frames go out in the oldest version
    /// (a hello, or an error refusing one, whose layouts never change), and any version this
    /// side speaks is read.
    private let agreedVersion = Atomic<UInt8>(0)

    /// Takes over `descriptor`, a connected SOCK_SEQPACKET socket.
    public init(adopting descriptor: consuming Descriptor) {
        raw = Atomic(descriptor.release())
    }

    /// The agreed version; nil before the welcome.
    public var agreed: UInt8? {
        let v = agreedVersion.load(ordering: .acquiring)
        return v == 0 ? nil : v
    }

    private func agree(on message: Message) {
        if case let .welcome(version, _, _) = message { agreedVersion.store(version, ordering: .releasing) }
    }

    /// Encodes `frame` in the version this connection speaks (a welcome: the one it names).
    public func encode(_ frame: Frame) -> [UInt8] {
        agree(on: frame.message)
        return Wire.encode(frame, version: agreed ?? Wire.versions.lowerBound)
    }

    /// Decodes a packet that came on this connection, in its agreed version (a welcome sets it).
    public func decode(_ bytes: [UInt8]) throws(WireError) -> Frame {
        let frame = try Wire.decode(bytes, agreed: agreed)
        agree(on: frame.message)
        return frame
    }

    /// A socket of its own over a connection someone else owns: a duplicate of `borrowed`
    /// (the same connection, closed by this socket; the owner still closes `borrowed`).
    public convenience init(duplicating borrowed: FileDescriptor) throws(WireError) {
        do { self.init(adopting: Descriptor(adopting: try systemCall("dup") { fcntl(borrowed.rawValue, F_DUPFD_CLOEXEC, 0) })) }
        catch { throw WireError(.internalError, error.description) }
    }

    deinit { close() }

    /// The socket's descriptor, borrowed (to poll it, or shut it down): still this socket's
    /// to close. -1 once closed.
    public var descriptor: FileDescriptor { FileDescriptor(rawValue: fd) }

    private var fd: Int32 { raw.load(ordering: .relaxed) }

    /// Closes now; once only, whoever calls it first.
    public func close() {
        let fd = raw.exchange(-1, ordering: .acquiringAndReleasing)
        if fd >= 0 { _ = Glibc.close(fd) }
    }

    /// Gives the descriptor to a new owner; this socket is closed from here on, without
    /// closing it. Nil when it was already closed or released.
    public func release() -> Descriptor? {
        let fd = raw.exchange(-1, ordering: .acquiringAndReleasing)
        return fd >= 0 ? Descriptor(adopting: fd) : nil
    }

    public struct Received: ~Copyable, Sendable {
        /// The frame, or why it could not be read.
        public var frame: Result<Frame, WireError>
        /// A descriptor that came with it: the receiver's, closed with this value unless taken.
        public var descriptor: Descriptor?
    }

    /// Sends a frame; `descriptor` travels with it when given (borrowed: the peer receives its
    /// own copy, the sender still closes this one). `wait: false` refuses rather than
    /// blocks when the peer is not reading (the broker never blocks on one app for another).
    public func send(_ frame: Frame, descriptor: FileDescriptor? = nil, wait: Bool = true) throws(WireError) {
        let bytes = encode(frame)
        guard bytes.count <= Wire.maximumFrame else { throw WireError(.oversized, "refusing to send a frame of \(bytes.count) bytes") }
        try sendRaw(bytes, descriptor: descriptor, wait: wait)
    }

    /// Sends bytes as they are (tests use it to send malformed frames).
    public func sendRaw(_ bytes: [UInt8], descriptor: FileDescriptor? = nil, wait: Bool = true) throws(WireError) {
        let fd = self.fd
        let flags = Int32(MSG_NOSIGNAL) | (wait ? 0 : Int32(MSG_DONTWAIT))
        let rc: Int = bytes.withUnsafeBytes { raw in
            var iov = iovec(iov_base: UnsafeMutableRawPointer(mutating: raw.baseAddress), iov_len: raw.count)
            return withUnsafeMutablePointer(to: &iov) { iovp in
                var msg = msghdr()
                msg.msg_iov = iovp
                msg.msg_iovlen = 1
                // Without a descriptor a plain send: the kernel then copies no message header in.
                guard let d = descriptor?.rawValue else { return Glibc.send(fd, raw.baseAddress, raw.count, flags) }
                // The control message only when a descriptor travels: most frames carry none.
                return withUnsafeTemporaryAllocation(byteCount: controlSize, alignment: 8) { c in
                    c.initializeMemory(as: UInt8.self, repeating: 0)
                    msg.msg_control = c.baseAddress
                    msg.msg_controllen = c.count
                    let cm = c.baseAddress!.assumingMemoryBound(to: cmsghdr.self)
                    cm.pointee.cmsg_level = SOL_SOCKET
                    cm.pointee.cmsg_type = Int32(SCM_RIGHTS)
                    cm.pointee.cmsg_len = cmsgLength(MemoryLayout<Int32>.size)
                    (c.baseAddress! + cmsgHeaderSize).storeBytes(of: d, as: Int32.self)
                    return sendmsg(fd, &msg, flags)
                }
            }
        }
        guard rc == bytes.count else { throw WireError(.internalError, "send failed: \(String(cString: strerror(errno)))") }
    }

    /// Receives one frame; nil at end of stream. A frame larger than the limit is drained and
    /// reported as oversized without reading it whole.
    public func receive() -> Received? {
        guard let raw = receiveRaw() else { return nil }
        if let error = raw.error { return Received(frame: .failure(error), descriptor: nil) }
        let frame: Result<Frame, WireError>
        do { frame = .success(try decode(raw.bytes)) } catch { frame = .failure(error) }
        return Received(frame: frame, descriptor: raw.descriptor)
    }

    /// One packet as it came: its bytes and descriptor, or why it was refused unread (then
    /// `bytes` holds at most its header).
    public struct RawPacket: ~Copyable, Sendable {
        public var bytes: [UInt8]
        /// The receiver's, closed with this value unless taken.
        public var descriptor: Descriptor?
        public var error: WireError?
        /// Nothing to read yet (only with `dontWait`).
        public var wouldBlock = false
    }

    /// Receives one packet without decoding it; nil at end of stream. With `dontWait` an empty
    /// queue answers `wouldBlock` instead of waiting. A server passes its own `buffer`, reused
    /// for every packet, instead of allocating one per receive.
    public func receiveRaw(dontWait: Bool = false, buffer: ReceiveBuffer? = nil) -> RawPacket? {
        let space = buffer ?? ReceiveBuffer()
        let fd = self.fd
        var msg = msghdr()
        var iov = iovec(iov_base: space.data.baseAddress, iov_len: space.data.count)
        let n: Int = withUnsafeMutablePointer(to: &iov) { iovp in
            msg.msg_iov = iovp
            msg.msg_iovlen = 1
            msg.msg_control = space.control.baseAddress
            msg.msg_controllen = space.control.count
            var r: Int
            repeat { r = recvmsg(fd, &msg, Int32(MSG_CMSG_CLOEXEC) | Int32(MSG_TRUNC) | (dontWait ? Int32(MSG_DONTWAIT) : 0)) } while r < 0 && errno == EINTR
            return r
        }
        if n == 0 { return nil }
        if n < 0 && dontWait && (errno == EAGAIN || errno == EWOULDBLOCK) { return RawPacket(bytes: [], descriptor: nil, error: nil, wouldBlock: true) }
        if n < 0 { return RawPacket(bytes: [], descriptor: nil, error: WireError(.internalError, "receive failed: \(String(cString: strerror(errno)))")) }
        // A packet refused unread keeps its header, so that the error can answer under its id.
        func header(_ n: Int) -> [UInt8] {
            Array(UnsafeRawBufferPointer(rebasing: space.data[0..<min(n, Wire.headerSize, space.data.count)]))
        }
        // Collect descriptors; more than one is itself an error (and none may leak).
        var fds: [Int32] = []
        let c = UnsafeRawBufferPointer(space.control)
        var offset = 0
        while offset + cmsgHeaderSize <= msg.msg_controllen {
            let header = c.load(fromByteOffset: offset, as: cmsghdr.self)
            if header.cmsg_level == SOL_SOCKET && header.cmsg_type == Int32(SCM_RIGHTS) {
                let count = (Int(header.cmsg_len) - cmsgHeaderSize) / MemoryLayout<Int32>.size
                for i in 0..<count { fds.append(c.load(fromByteOffset: offset + cmsgHeaderSize + i * 4, as: Int32.self)) }
            }
            if header.cmsg_len == 0 { break }
            offset += (Int(header.cmsg_len) + 7) & ~7
        }
        if fds.count > 1 || msg.msg_flags & Int32(MSG_CTRUNC) != 0 {
            fds.forEach { Glibc.close($0) }
            return RawPacket(bytes: header(n), descriptor: nil, error: WireError(.unexpectedDescriptor, "\(max(fds.count, 2)) descriptors on one frame; at most one"))
        }
        if n > Wire.maximumFrame || msg.msg_flags & Int32(MSG_TRUNC) != 0 {
            fds.forEach { Glibc.close($0) }
            return RawPacket(bytes: header(n), descriptor: nil, error: WireError(.oversized, "frame of \(n) bytes; the limit is \(Wire.maximumFrame)"))
        }
        return RawPacket(bytes: Array(UnsafeRawBufferPointer(rebasing: space.data[0..<n])), descriptor: fds.first.map(Descriptor.init(adopting:)), error: nil)
    }

    /// Connects to a broker socket (public or launcher) by path: served by root or this user,
    /// or refused before anything is sent (`TrustedPath.checkBrokerPeer`).
    public static func connect(_ path: String) throws(WireError) -> WireSocket {
        let socket: WireSocket
        do { socket = WireSocket(adopting: Descriptor(adopting: try systemCall("socket") { Glibc.socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) })) }
        catch { throw WireError(.internalError, error.description) }
        let fd = socket.fd
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else {
            throw WireError(.internalError, "\(path): socket path too long")
        }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
            raw[bytes.count] = 0
        }
        do throws(SystemCallError) {
            _ = try systemCall("cannot connect to \(path)") {
                withUnsafePointer(to: &addr) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
                }
            }
        } catch {
            throw WireError(.internalError, error.description)
        }
        do { try TrustedPath.checkBrokerPeer(socket.descriptor, path: path) } catch {
            socket.close()
            throw WireError(.internalError, "refusing the broker at \(error)")
        }
        return socket
    }

    /// A connected pair (close-on-exec), for the launcher and for tests.
    public static func pair() throws(WireError) -> (WireSocket, WireSocket) {
        var fds: [Int32] = [-1, -1]
        do { _ = try systemCall("socketpair") { socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) } }
        catch { throw WireError(.internalError, error.description) }
        return (WireSocket(adopting: Descriptor(adopting: fds[0])), WireSocket(adopting: Descriptor(adopting: fds[1])))
    }
}

/// Memory for receiving packets: room for the largest frame plus one byte (to see an oversized
/// one), and for the descriptors that may come with it.
public final class ReceiveBuffer: @unchecked Sendable {
    let data: UnsafeMutableRawBufferPointer
    let control: UnsafeMutableRawBufferPointer

    public init() {
        data = .allocate(byteCount: Wire.maximumFrame + 1, alignment: 8)
        control = .allocate(byteCount: controlSize * 4, alignment: 8)
    }

    deinit {
        data.deallocate()
        control.deallocate()
    }
}

private let cmsgHeaderSize = (MemoryLayout<cmsghdr>.size + 7) & ~7
private let controlSize = cmsgHeaderSize + 8
private func cmsgLength(_ n: Int) -> Int { cmsgHeaderSize + n }
