import Glibc
import MAMWire
import SystemPackage
import Testing

@Suite("Owned descriptors and system-call errors")
struct DescriptorTests {
    static func isOpen(_ fd: Int32) -> Bool { fcntl(fd, F_GETFD) != -1 }

    static func pipeEnds() throws -> (Int32, Int32) {
        var ends: [Int32] = [-1, -1]
        _ = try systemCall("pipe") { pipe(&ends) }
        return (ends[0], ends[1])
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
}
