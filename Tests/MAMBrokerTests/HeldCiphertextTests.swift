import Foundation
import Glibc
import MAMWire
import SystemPackage
import Testing

/// Issue 21: the broker writes the ciphertext of an encrypted push into a memfd of its own, so
/// its pages are charged to the broker's cgroup and never to the receiver's (a receiver held
/// 1.25 GiB of them beside a 1 GiB limit). The broker now counts what each receiver still holds
/// and refuses the sender, with the reason, beyond the receiver's quota; what the receiver lets
/// go of no longer counts.
@Suite("Encrypted documents a receiver holds count against it", .serialized, .timeLimit(.minutes(2)))
struct HeldCiphertextTests {
    /// Mail (adele's) shares 1 MiB documents with Notes, an unmanaged app: each arrives
    /// encrypted, made by the broker. Notes keeps every descriptor it is given.
    final class Pair {
        let broker: BrokerHarness
        let launcher: WireSocket
        let mail: WireSocket
        let notes: WireSocket
        var held: [Int32] = []
        var nextID: UInt32 = 10

        init(quota: Int?) throws {
            broker = try BrokerHarness(extraArguments: quota.map { ["--encrypted-held-per-app", String($0)] } ?? [])
            launcher = try WireSocket.connect(broker.launcherSocket)
            notes = try FloodTests.adopt(launcher, "com.example.notes", account: nil)
            mail = try FloodTests.adopt(launcher, "com.contoso.mail", account: "adele@contoso.com")
        }

        /// One share; "encrypted" when it arrived, else the error Mail was given.
        func share() throws -> String {
            let document = try SealedDocument.create([UInt8](repeating: 0x51, count: 1 << 20))
            nextID += 1
            try mail.send(Frame(id: nextID, .share(target: "com.example.notes", contentType: "com.adobe.pdf", name: "q\(nextID).pdf")), descriptor: FileDescriptor(rawValue: document.rawValue))
            // The answer to this request; what the broker sends unasked (enrollment notices) is skipped.
            var answer: Frame?
            while answer == nil, let r = mail.receive(within: 10) {
                if case let .success(f) = r.frame, f.id == nextID { answer = f }
            }
            guard let frame = answer else { return "no answer" }
            switch frame.message {
            case let .decision(d) where d.outcome == 2:
                guard var got = notes.receive(within: 10), case .success(let f) = got.frame, case .document(_, _, _, true) = f.message,
                      let fd = got.descriptor.take() else { return "encrypted, but nothing arrived" }
                held.append(fd.release())
                return "encrypted"
            case let .decision(d): return "outcome \(d.outcome): \(d.message)"
            case let .error(code, detail): return "\(code): \(detail)"
            default: return "\(frame.message)"
            }
        }

        func letGo() {
            for fd in held { close(fd) }
            held = []
        }

        func stop() {
            letGo()
            mail.close()
            notes.close()
            launcher.close()
            broker.stop()
        }
    }

    @Test func aReceiverHoldsNoMoreThanItsQuotaAndGetsMoreWhenItLetsGo() throws {
        let pair = try Pair(quota: 7 << 19)
        defer { pair.stop() }
        // Three 1 MiB ciphertexts fit 3.5 MiB; a fourth does not.
        let answers = try (0..<6).map { _ in try pair.share() }
        #expect(answers.prefix(3).allSatisfy { $0 == "encrypted" }, "\(answers)")
        for refused in answers.dropFirst(3) {
            #expect(refused.hasPrefix("limitReached: com.example.notes still holds 3 encrypted documents"), "\(answers)")
        }
        #expect(pair.held.count == 3)
        // A mapping holds the memory as a descriptor does: the first one mapped, every
        // descriptor closed, two more fit and a third does not.
        let mapped = mmap(nil, 1 << 20, PROT_READ, MAP_SHARED, pair.held[0], 0)
        #expect(mapped != MAP_FAILED)
        pair.letGo()
        let again = try (0..<3).map { _ in try pair.share() }
        #expect(again.prefix(2).allSatisfy { $0 == "encrypted" }, "\(again)")
        #expect(again[2].hasPrefix("limitReached: com.example.notes still holds 3 encrypted documents"), "\(again)")
        // Let go of, mapping and all: the receiver gets its documents again.
        munmap(mapped, 1 << 20)
        pair.letGo()
        #expect(try pair.share() == "encrypted")
    }

    @Test func withoutTheQuotaTheSameFloodIsAllDelivered() throws {
        // The control: the broker's default quota (512 MiB) lets the same six through, so the
        // refusals above are the quota's doing.
        let pair = try Pair(quota: nil)
        defer { pair.stop() }
        let answers = try (0..<6).map { _ in try pair.share() }
        #expect(answers.allSatisfy { $0 == "encrypted" }, "\(answers)")
    }
}
