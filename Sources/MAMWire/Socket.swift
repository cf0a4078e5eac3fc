import Glibc

/// A connected SOCK_SEQPACKET descriptor that sends and receives whole frames, with at most
/// one descriptor attached (SCM_RIGHTS).
public struct WireSocket: Sendable {
    public let fd: Int32

    public init(fd: Int32) { self.fd = fd }

    public struct Received: Sendable {
        /// The frame, or why it could not be read.
        public var frame: Result<Frame, WireError>
        /// A descriptor that came with it (the receiver owns it).
        public var descriptor: Int32?
    }

    /// Sends a frame; `descriptor` travels with it when given.
    /// Sends a frame; `descriptor` travels with it when given. `wait: false` refuses rather than
    /// blocks when the peer is not reading (the broker never blocks on one app for another).
    public func send(_ frame: Frame, descriptor: Int32? = nil, wait: Bool = true) throws(WireError) {
        let bytes = Wire.encode(frame)
        guard bytes.count <= Wire.maximumFrame else { throw WireError(.oversized, "refusing to send a frame of \(bytes.count) bytes") }
        try sendRaw(bytes, descriptor: descriptor, wait: wait)
    }

    /// Sends bytes as they are (tests use it to send malformed frames).
    public func sendRaw(_ bytes: [UInt8], descriptor: Int32? = nil, wait: Bool = true) throws(WireError) {
        var bytes = bytes
        var iov = iovec()
        let rc: Int = bytes.withUnsafeMutableBytes { raw in
            iov.iov_base = raw.baseAddress
            iov.iov_len = raw.count
            var msg = msghdr()
            var control = [UInt8](repeating: 0, count: controlSize)
            return withUnsafeMutablePointer(to: &iov) { iovp in
                msg.msg_iov = iovp
                msg.msg_iovlen = 1
                return control.withUnsafeMutableBytes { c in
                    if let d = descriptor {
                        msg.msg_control = c.baseAddress
                        msg.msg_controllen = c.count
                        let cm = c.baseAddress!.assumingMemoryBound(to: cmsghdr.self)
                        cm.pointee.cmsg_level = SOL_SOCKET
                        cm.pointee.cmsg_type = Int32(SCM_RIGHTS)
                        cm.pointee.cmsg_len = cmsgLength(MemoryLayout<Int32>.size)
                        (c.baseAddress! + cmsgHeaderSize).storeBytes(of: d, as: Int32.self)
                    }
                    return sendmsg(fd, &msg, Int32(MSG_NOSIGNAL) | (wait ? 0 : Int32(MSG_DONTWAIT)))
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
        do { frame = .success(try Wire.decode(raw.bytes)) } catch { frame = .failure(error) }
        return Received(frame: frame, descriptor: raw.descriptor)
    }

    /// One packet as it came: its bytes and descriptor, or why it was refused unread.
    public struct RawPacket: Sendable {
        public var bytes: [UInt8]
        public var descriptor: Int32?
        public var error: WireError?
        /// Nothing to read yet (only with `dontWait`).
        public var wouldBlock = false
    }

    /// Receives one packet without decoding it; nil at end of stream. With `dontWait` an empty
    /// queue answers `wouldBlock` instead of waiting.
    public func receiveRaw(dontWait: Bool = false) -> RawPacket? {
        // Uninitialised: clearing 64 KiB for every message costs more than the message.
        var buffer = [UInt8](unsafeUninitializedCapacity: Wire.maximumFrame + 1) { _, count in count = Wire.maximumFrame + 1 }
        var control = [UInt8](repeating: 0, count: controlSize * 4)
        var msg = msghdr()
        var iov = iovec()
        let n: Int = buffer.withUnsafeMutableBytes { raw in
            iov.iov_base = raw.baseAddress
            iov.iov_len = raw.count
            return withUnsafeMutablePointer(to: &iov) { iovp in
                msg.msg_iov = iovp
                msg.msg_iovlen = 1
                return control.withUnsafeMutableBytes { c in
                    msg.msg_control = c.baseAddress
                    msg.msg_controllen = c.count
                    var r: Int
                    repeat { r = recvmsg(fd, &msg, Int32(MSG_CMSG_CLOEXEC) | Int32(MSG_TRUNC) | (dontWait ? Int32(MSG_DONTWAIT) : 0)) } while r < 0 && errno == EINTR
                    return r
                }
            }
        }
        if n == 0 { return nil }
        if n < 0 && dontWait && (errno == EAGAIN || errno == EWOULDBLOCK) { return RawPacket(bytes: [], descriptor: nil, error: nil, wouldBlock: true) }
        if n < 0 { return RawPacket(bytes: [], descriptor: nil, error: WireError(.internalError, "receive failed: \(String(cString: strerror(errno)))")) }
        // Collect descriptors; more than one is itself an error (and none may leak).
        var fds: [Int32] = []
        control.withUnsafeBytes { c in
            var offset = 0
            while offset + cmsgHeaderSize <= msg.msg_controllen {
                let header = c.load(fromByteOffset: offset, as: cmsghdr.self)
                if header.cmsg_level == SOL_SOCKET && header.cmsg_type == Int32(SCM_RIGHTS) {
                    let count = (Int(header.cmsg_len) - cmsgHeaderSize) / MemoryLayout<Int32>.size
                    for i in 0..<count { fds.append(c.load(fromByteOffset: offset + cmsgHeaderSize + i * 4, as: Int32.self)) }
                }
                offset += (Int(header.cmsg_len) + 7) & ~7
                if header.cmsg_len == 0 { break }
            }
        }
        if fds.count > 1 {
            fds.forEach { Glibc.close($0) }
            return RawPacket(bytes: [], descriptor: nil, error: WireError(.unexpectedDescriptor, "\(fds.count) descriptors on one frame; at most one"))
        }
        if n > Wire.maximumFrame || msg.msg_flags & Int32(MSG_TRUNC) != 0 {
            fds.forEach { Glibc.close($0) }
            return RawPacket(bytes: [], descriptor: nil, error: WireError(.oversized, "frame of \(n) bytes; the limit is \(Wire.maximumFrame)"))
        }
        return RawPacket(bytes: Array(buffer[0..<n]), descriptor: fds.first, error: nil)
    }

    public func close() { _ = Glibc.close(fd) }

    /// A connected pair (close-on-exec), for the launcher and for tests.
    public static func pair() throws(WireError) -> (WireSocket, WireSocket) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw WireError(.internalError, "socketpair: \(String(cString: strerror(errno)))")
        }
        return (WireSocket(fd: fds[0]), WireSocket(fd: fds[1]))
    }
}

private let cmsgHeaderSize = (MemoryLayout<cmsghdr>.size + 7) & ~7
private let controlSize = cmsgHeaderSize + 8
private func cmsgLength(_ n: Int) -> Int { cmsgHeaderSize + n }
