import Crypto
import Foundation
import Glibc
import MAMCatalog
@testable import MAMLauncher
@testable import MAMMatrixLive
import MAMTestSupport
import Testing

/// The launcher's program digests are kept by the file's stamp (LaunchedPrograms, DigestMemo):
/// device, inode, size and times. A stamp stands for the bytes only when no one else can write
/// the file: its owner can change it without moving its times, through a shared writable mapping
/// whose pages were already written (a store to such a page does not fault, so the kernel does
/// not touch the times; seen on ext4). The launcher hashes a program after its exec, which keeps
/// writers off while it runs, but one that has already ended (an instant exit, a restart's gap)
/// can be mapped before its stamp is taken: its digest was then kept, from run to run, for
/// whatever its owner made it next.
@Suite("Launcher: program digests by stamp", .serialized, .hangGuard)
struct LaunchedProgramDigestTests {
    static func sha256(ofFileAt path: String) throws -> String {
        SHA256.hash(data: try Data(contentsOf: URL(fileURLWithPath: path))).map { String(format: "%02x", $0) }.joined()
    }

    static func stamp(_ path: String) -> String? {
        var st = stat()
        return stat(path, &st) == 0 ? DigestMemo.stamp(st) : nil
    }

    @Test func aProgramAnotherUserRewroteThroughAMappingIsHashedAgain() throws {
        let folder = "/tmp/mamlab-mapped-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let program = folder + "/program"
        let size = 64 * 4096
        try Data(repeating: 0x41, count: size).write(to: URL(fileURLWithPath: program))
        // Another user's program (an app author's), 0755.
        #expect(chown(program, 65534, 65534) == 0)
        #expect(chmod(program, 0o755) == 0)

        // Its owner maps it and writes every page once, leaving its bytes as they were.
        let fd = open(program, O_RDWR | O_CLOEXEC)
        try #require(fd >= 0)
        defer { close(fd) }
        let map = try #require(mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0))
        try #require(map != MAP_FAILED)
        let pages = map.assumingMemoryBound(to: UInt8.self)
        for offset in stride(from: 0, to: size, by: 4096) { pages[offset] ^= 0xFF; pages[offset] ^= 0xFF }

        let first = try #require(OpenProgram(program))
        let stamp = try #require(Self.stamp(program))
        defer { unlink(DigestMemo.shared.folder + "/" + DigestMemo.entryName(stamp)) }
        #expect(LaunchedPrograms.shared.sha256(first) == (try Self.sha256(ofFileAt: program)))

        // Then makes it another program through the mapping.
        for offset in 0..<size { pages[offset] = 0x42 }
        munmap(map, size)
        // (The stamp has not moved unless the pages were written back meanwhile.)
        let rewritten = try #require(OpenProgram(program))
        #expect(LaunchedPrograms.shared.sha256(rewritten) == (try Self.sha256(ofFileAt: program)),
                "stamp then \(stamp), now \(Self.stamp(program) ?? "-")")
        #expect(DigestMemo.shared.recall(stamp) == nil, "the memo kept a digest for a file another user can write")
    }
}
