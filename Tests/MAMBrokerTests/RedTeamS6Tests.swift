import CMAMWire
import Foundation
import Glibc
import MAMWire
import SystemPackage
import Testing

/// Session 6's red team, through a real broker: descriptors an app sends with frames the broker
/// refuses (too many on one frame, oversized, undecodable, over its request budget, on a frame
/// that carries none, left queued when it hangs up) are closed, each once, and another app is
/// served on afterwards.
@Suite("Red team, session 6: descriptors on refused frames", .serialized, .timeLimit(.minutes(2)))
struct RedTeamS6Tests {
    /// `bytes` as one packet with `fds` attached (SCM_RIGHTS, all in one control message); false
    /// when the kernel refused it.
    static func send(_ socket: WireSocket, _ bytes: [UInt8], fds: [Int32]) -> Bool {
        let header = (MemoryLayout<cmsghdr>.size + 7) & ~7
        let control = header + ((fds.count * 4 + 7) & ~7)
        return bytes.withUnsafeBytes { raw in
            var iov = iovec(iov_base: UnsafeMutableRawPointer(mutating: raw.baseAddress), iov_len: raw.count)
            return withUnsafeMutablePointer(to: &iov) { iovp in
                withUnsafeTemporaryAllocation(byteCount: control, alignment: 8) { c in
                    c.initializeMemory(as: UInt8.self, repeating: 0)
                    let cm = c.baseAddress!.assumingMemoryBound(to: cmsghdr.self)
                    cm.pointee.cmsg_level = SOL_SOCKET
                    cm.pointee.cmsg_type = Int32(SCM_RIGHTS)
                    cm.pointee.cmsg_len = header + fds.count * 4
                    for (i, fd) in fds.enumerated() { (c.baseAddress! + header + i * 4).storeBytes(of: fd, as: Int32.self) }
                    var msg = msghdr()
                    msg.msg_iov = iovp
                    msg.msg_iovlen = 1
                    msg.msg_control = c.baseAddress
                    msg.msg_controllen = control
                    return sendmsg(socket.descriptor.rawValue, &msg, Int32(MSG_NOSIGNAL)) == raw.count
                }
            }
        }
    }

    /// Answers until none comes within a short while (the broker may answer each, or not).
    static func drain(_ socket: WireSocket) {
        var pfd = pollfd(fd: socket.descriptor.rawValue, events: Int16(POLLIN), revents: 0)
        while poll(&pfd, 1, 200) > 0 {
            guard socket.receiveRaw() != nil else { return }
        }
    }

    @Test func refusedFramesWithDescriptorsCloseThemAndLeaveOthersServed() throws {
        let b = try BrokerHarness(extraArguments: ["--requests-per-second", "50"])
        defer { b.stop() }
        let launcher = try WireSocket.connect(b.launcherSocket)
        defer { launcher.close() }
        let victim = try FloodTests.adopt(launcher, "com.contoso.mail")
        defer { victim.close() }
        let before = b.settledDescriptors()

        let share = Wire.encode(Frame(id: 10, .share(target: "com.contoso.mail", contentType: "public.plain-text", name: "a.txt")))
        let paste = Wire.encode(Frame(id: 11, .paste))
        var oversized = share
        oversized += [UInt8](repeating: 0x41, count: Wire.maximumFrame + 100)
        let garbage: [UInt8] = Array("MAM?garbage".utf8)
        // Each attack on a connection of its own: the broker may close one after a bad frame.
        let attacks: [(String, [UInt8], Int)] = [
            ("40 descriptors on one share", share, 40), ("2 descriptors on one share", share, 2),
            ("an oversized frame", oversized, 1), ("an undecodable frame", garbage, 1), ("a paste", paste, 1),
        ]
        for round in 0..<3 {
            for (name, bytes, count) in attacks {
                let attacker = try FloodTests.adopt(launcher, "com.example.notes")
                let docs = (0..<count).compactMap { _ in FloodTests.sealed(16) }
                let sent = Self.send(attacker, bytes, fds: docs)
                #expect(sent, "\(name): the kernel refused to send it")
                docs.forEach { _ = close($0) }
                Self.drain(attacker)
                attacker.close()
            }
            // Past its request budget (50 a second): refused unread, each with its descriptor;
            // then it hangs up with descriptors still queued on its connection.
            let attacker = try FloodTests.adopt(launcher, "com.example.notes")
            let doc = FloodTests.sealed(16)!
            for _ in 0..<80 { _ = Self.send(attacker, share, fds: [doc]) }
            Self.drain(attacker)
            for _ in 0..<20 { _ = Self.send(attacker, share, fds: [doc]) }
            close(doc)
            attacker.close()
            try victim.send(Frame(id: UInt32(100 + round), .paste))
            // (Shares within the attacker's budget reach it first: documents, closed as they come.)
            var answered = false
            for _ in 0..<200 {
                guard let r = victim.receive(within: 10) else { break }
                if case let .success(f) = r.frame, f.id == UInt32(100 + round), case .pasteResult = f.message { answered = true; break }
            }
            #expect(answered, "round \(round): the other app is no longer served")
        }
        let after = b.descriptors(atMost: before)
        #expect(after <= before, "the broker held \(before) descriptors before the attacks and \(after) after")
    }
}
