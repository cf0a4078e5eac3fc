import Glibc
import MAMWire
import SystemPackage
import Testing

@Suite("Owned descriptors and system-call errors")
struct DescriptorTests {
    static func isOpen(_ fd: Int32) -> Bool { fcntl(fd, F_GETFD) != -1 }

    /// Two connected ends, close-on-exec from the start (a child another test spawns meanwhile
    /// must not hold a copy, or the other end would never see it closed).
    static func pipeEnds() throws -> (Int32, Int32) {
        var ends: [Int32] = [-1, -1]
        _ = try systemCall("socketpair") { socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) }
        return (ends[0], ends[1])
    }

    /// Whether every descriptor of the other end of `fd` (a socket's peer) is
    /// closed: the kernel's own count, which no descriptor number reused meanwhile can fool.
    static func peerGone(_ fd: Int32) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, 0) == 1 && p.revents & Int16(POLLHUP) != 0
    }

    @Test func anOwnedDescriptorClosesWhenItsOwnerLetsGo() throws {
        let (r, w) = try Self.pipeEnds()
        do {
            let owned = Descriptor(adopting: r)
            #expect(Self.isOpen(owned.rawValue))
        }
        #expect(!Self.isOpen(r), "closed at the end of its owner's scope")
        Descriptor(adopting: w).close()
        #expect(!Self.isOpen(w))
    }

    @Test func aReleasedDescriptorStaysOpenForItsNewOwner() throws {
        let (r, w) = try Self.pipeEnds()
        defer { _ = Glibc.close(w) }
        let raw = Descriptor(adopting: r).release()
        #expect(raw == r && Self.isOpen(r))
        _ = Glibc.close(raw)
    }

    @Test func aFailedCallCarriesItsErrnoAndSaysWhatFailed() {
        #expect(throws: SystemCallError("fcntl on descriptor -1", errno: .badFileDescriptor)) {
            try systemCall("fcntl on descriptor -1") { fcntl(-1, F_GETFD) }
        }
        let e = SystemCallError("connect to /nowhere", errno: .noSuchFileOrDirectory)
        #expect(e.description == "connect to /nowhere: No such file or directory")
    }

    @Test func aMovedDescriptorIsClosedByItsNewOwnerOnly() throws {
        let (r, w) = try Self.pipeEnds()
        defer { _ = Glibc.close(r) }
        func keep(_ d: consuming Descriptor) -> Descriptor { d }
        do {
            let first = Descriptor(adopting: w)
            let second = keep(first)
            #expect(!Self.peerGone(r), "the move closed nothing")
            _ = consume second
            #expect(Self.peerGone(r), "closed when its last owner let go")
        }
    }
}

@Suite("A socket owns its descriptor")
struct WireSocketOwnershipTests {
    @Test func aSocketClosesWhenItsLastReferenceGoes() throws {
        let b: WireSocket
        do {
            let (a, peer) = try WireSocket.pair()
            b = peer
            var another: WireSocket? = a
            withExtendedLifetime(a) {
                another = nil
                #expect(another == nil && !DescriptorTests.peerGone(b.descriptor.rawValue), "one reference still holds it")
            }
        }
        #expect(DescriptorTests.peerGone(b.descriptor.rawValue), "closed with the last reference")
    }

    @Test func aClosedSocketClosesOnceAndNeverReachesTheFileGivenItsNumber() throws {
        // The number a closed socket had goes to the next open; the socket's own end must not
        // close that file (a second close), nor send to it. Another test's open may take the
        // number first, so this tries until it is the one reusing it.
        var checked = false
        for _ in 0..<20 where !checked {
            let (r, w) = try DescriptorTests.pipeEnds()
            defer { _ = Glibc.close(r) }
            let (a, b) = try WireSocket.pair()
            let number = a.descriptor.rawValue
            a.close()
            #expect(DescriptorTests.peerGone(b.descriptor.rawValue), "close() closed it")
            let reused = fcntl(w, F_DUPFD_CLOEXEC, number)
            _ = Glibc.close(w)
            guard reused == number else {
                if reused >= 0 { _ = Glibc.close(reused) }
                continue
            }
            checked = true
            a.close()
            #expect(throws: WireError.self, "a send after close fails") { try a.sendRaw([1, 2, 3]) }
            let released = a.release() != nil
            #expect(!released, "nothing left to release")
            withExtendedLifetime(a) {}
            #expect(DescriptorTests.isOpen(reused) && !DescriptorTests.peerGone(r), "the file that took its number is still open")
            _ = Glibc.close(reused)
        }
        #expect(checked, "the closed socket's number was never reused in 20 tries")
    }

    @Test func aReleasedSocketLeavesItsDescriptorToTheNewOwner() throws {
        let (a, b) = try WireSocket.pair()
        var owned: Descriptor? = a.release()
        let released = owned != nil
        #expect(released && !DescriptorTests.peerGone(b.descriptor.rawValue))
        withExtendedLifetime(a) {}
        #expect(!DescriptorTests.peerGone(b.descriptor.rawValue), "the socket no longer closes it")
        owned = nil
        #expect(DescriptorTests.peerGone(b.descriptor.rawValue), "its new owner did")
    }

    @Test func aDuplicatingSocketLeavesTheBorrowedDescriptorOpen() throws {
        let (a, b) = try WireSocket.pair()
        do {
            let copy = try WireSocket(duplicating: a.descriptor)
            try copy.send(Frame(id: 1, .paste))
        }
        #expect(!DescriptorTests.peerGone(b.descriptor.rawValue), "the owner's descriptor is still open")
        #expect(try b.receive()?.frame.get() == Frame(id: 1, .paste))
        a.close()
        #expect(DescriptorTests.peerGone(b.descriptor.rawValue))
    }

    @Test func aReceivedDescriptorIsClosedWhenItsPacketIsDroppedAndKeptWhenTaken() throws {
        let (a, b) = try WireSocket.pair()
        let (r, w) = try DescriptorTests.pipeEnds()
        defer { _ = Glibc.close(r) }
        try a.send(Frame(id: 1, .paste), descriptor: FileDescriptor(rawValue: w))
        try a.send(Frame(id: 2, .paste), descriptor: FileDescriptor(rawValue: w))
        _ = Glibc.close(w)
        // The first: dropped unread.
        do {
            var came = false
            if let dropped = b.receiveRaw() { came = dropped.descriptor != nil }
            #expect(came)
        }
        #expect(!DescriptorTests.peerGone(r), "the second packet's copy is still on its way")
        // The second: taken by a new owner, open until that owner lets go.
        var kept: Descriptor?
        do {
            var packet = b.receive()
            kept = packet?.descriptor.take()
        }
        let taken = kept != nil
        #expect(taken && !DescriptorTests.peerGone(r), "taken, so not closed with its packet")
        kept = nil
        #expect(DescriptorTests.peerGone(r), "every copy closed: the dropped packet's and the taken one's")
    }
}
