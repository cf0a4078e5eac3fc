import CMAMWire
import Foundation
import Glibc
import MAMWire
import SystemPackage
import Testing

/// An app cannot get another one disconnected, and odd descriptors leave nothing open: both
/// through a real broker (found in a review of the rewrite; the first failed before its fix).
@Suite("No app is another app's victim", .serialized, .timeLimit(.minutes(2)))
struct VictimTests {
    /// Reads what the socket has, without waiting long: (frames, end of stream seen).
    static func drain(_ s: WireSocket) -> (frames: [Frame], eof: Bool) {
        var frames: [Frame] = []
        var pfd = pollfd(fd: s.descriptor.rawValue, events: Int16(POLLIN), revents: 0)
        while poll(&pfd, 1, 300) > 0 {
            guard let r = s.receiveRaw() else { return (frames, true) }
            if let f = try? Wire.decode(r.bytes) { frames.append(f) } else if r.error == nil { return (frames, true) }
        }
        return (frames, false)
    }

    @Test func aURLFloodToAnAppThatIsNotReadingLeavesItConnected() throws {
        let b = try BrokerHarness()
        defer { b.stop() }
        let launcher = try WireSocket.connect(b.launcherSocket)
        defer { launcher.close() }
        let victim = try FloodTests.adopt(launcher, "com.contoso.mail")
        let attacker = try FloodTests.adopt(launcher, "com.example.notes")
        var allowed = 0, refused = 0
        for i in 0..<3000 {
            try attacker.send(Frame(id: UInt32(100 + i), .openURL(url: "contosomail://x/\(i)")))
            guard let r = attacker.receive(within: 10), case let .success(f) = r.frame else { break }
            if case let .decision(d) = f.message, d.allowed { allowed += 1 }
            if case .error(.limitReached, _) = f.message { refused += 1 }
        }
        let (frames, eof) = Self.drain(victim)
        #expect(!eof && refused > 0, "the attacker was told; the victim kept its connection")
        #expect(frames.count == allowed, "every allowed URL arrived: \(frames.count) of \(allowed)")
        try victim.send(Frame(id: 7, .paste))
        guard let r = victim.receive(within: 10), case let .success(f) = r.frame, case .pasteResult = f.message else {
            Issue.record("the victim is no longer served"); return
        }
        let decided = b.auditRecords.filter { $0["channel"] as? String == "open-url" }.count
        #expect(decided == allowed, "only what arrived was audited")
    }

    @Test func descriptorsOfEveryKindOnEveryFrameLeaveNothingOpen() throws {
        let b = try BrokerHarness()
        defer { b.stop() }
        let launcher = try WireSocket.connect(b.launcherSocket)
        defer { launcher.close() }
        let app = try FloodTests.adopt(launcher, "com.example.notes")
        // Mail stays connected (the shares go to it): its socket closes at the end.
        let mail = try FloodTests.adopt(launcher, "com.contoso.mail")
        defer { mail.close() }
        let before = b.settledDescriptors()
        let fifo = "/tmp/mamlab-fifo-\(getpid())"
        unlink(fifo)
        mkfifo(fifo, 0o600)
        defer { unlink(fifo) }
        for round in 0..<10 {
            var fds: [Int32] = [open(fifo, O_RDWR | O_NONBLOCK)]
            var sv: [Int32] = [-1, -1]
            socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &sv)
            var p: [Int32] = [-1, -1]
            pipe(&p)
            fds += sv + p + [open("/tmp", O_RDONLY | O_DIRECTORY), open("/dev/zero", O_RDONLY), mam_memfd_sealable("unsealed"), FloodTests.sealed(10)!]
            for (k, fd) in fds.enumerated() {
                let id = UInt32(round * 100 + k * 4 + 10)
                try app.send(Frame(id: id, .share(target: "com.contoso.mail", contentType: "public.plain-text", name: "a.txt")), descriptor: FileDescriptor(rawValue: fd))
                _ = app.receive(within: 10)
                try app.send(Frame(id: id + 1, .saveTo(location: 32, account: nil, name: "r\(k).txt")), descriptor: FileDescriptor(rawValue: fd))
                _ = app.receive(within: 10)
            }
            fds.forEach { _ = close($0) }
        }
        let after = b.descriptors(atMost: before + 1)
        #expect(after <= before + 1, "before \(before), after \(after)")
    }
}
