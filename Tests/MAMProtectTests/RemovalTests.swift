import CMAMProtect
import Foundation
import Glibc
import MAMProtect
import Testing

@Suite("Removing an account's files on a selective wipe")
struct RemovalTests {
    let scratch = ScratchFolder()

    func make(_ relative: String, owner: DataOwner?) throws -> String {
        let path = scratch.file(relative)
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: path, contents: Data(relative.utf8))
        if let owner { try FileOwnership.setOwner(owner, ofFileAt: path) }
        return path
    }

    func exists(_ relative: String) -> Bool {
        var st = stat()
        return lstat(scratch.file(relative), &st) == 0
    }

    @Test func onlyTheAccountsFilesGo() throws {
        _ = try make("Documents/alice.docx", owner: Fixture.alice)
        _ = try make("Documents/deep/er/alice2.txt", owner: Fixture.alice)
        _ = try make("Documents/bob.docx", owner: Fixture.bob)
        _ = try make("Documents/personal.txt", owner: nil)
        _ = try make("Documents/carol.txt", owner: Fixture.personal)
        // The same account named by its UPN in another case and its object id upper-case.
        _ = try make("Library/cache.bin", owner: try DataOwner(upn: "ALICE@contoso.com", objectID: Fixture.alice.objectID.uppercased()))
        let encrypted = try EncryptedFile.create(at: scratch.file("Library/enc.bin"), for: Fixture.alice, key: Fixture.aliceKey)
        encrypted.close()

        let report = try FileOwnership.removeFiles(ownedBy: Fixture.alice, under: scratch.path)
        #expect(Set(report.removed) == ["Documents/alice.docx", "Documents/deep/er/alice2.txt", "Library/cache.bin", "Library/enc.bin"])
        #expect(report.skipped.isEmpty, "\(report.skipped)")
        for gone in report.removed { #expect(!exists(gone)) }
        for kept in ["Documents/bob.docx", "Documents/personal.txt", "Documents/carol.txt", "Documents/deep/er"] { #expect(exists(kept), "\(kept)") }
        #expect(try FileOwnership.removeFiles(ownedBy: Fixture.alice, under: scratch.path).removed.isEmpty)
    }

    @Test func aSymbolicLinkOutOfTheFolderIsNotFollowed() throws {
        let outside = ScratchFolder("outside")
        let victim = outside.write("alice-elsewhere.txt", [1])
        try FileOwnership.setOwner(Fixture.alice, ofFileAt: victim)
        _ = try make("inside/keep.txt", owner: nil)
        #expect(symlink(outside.path, scratch.file("inside/escape")) == 0)
        #expect(symlink(victim, scratch.file("inside/file-link")) == 0)

        let report = try FileOwnership.removeFiles(ownedBy: Fixture.alice, under: scratch.path)
        #expect(report.removed.isEmpty)
        #expect(outside.read("alice-elsewhere.txt") == [1], "the file the links point to is still there")
        #expect(exists("inside/escape") && exists("inside/file-link"))
    }

    @Test func theFolderItselfMayNotBeALink() throws {
        let link = scratch.file("link-to-self")
        #expect(symlink(scratch.path, link) == 0)
        #expect(throws: FileProtectionError.symbolicLink(path: link)) { try FileOwnership.removeFiles(ownedBy: Fixture.alice, under: link) }
    }

    @Test func aHostileOwnerAttributeIsSkippedAndReported() throws {
        let path = try make("planted.txt", owner: nil)
        let value = Array("1\n\(Fixture.alice.objectID)\n".utf8) + [0xff, 0xfe]
        #expect(value.withUnsafeBytes { setxattr(path, FileOwnership.attributeName, $0.baseAddress, $0.count, 0) } == 0)
        let report = try FileOwnership.removeFiles(ownedBy: Fixture.alice, under: scratch.path)
        #expect(report.removed.isEmpty)
        #expect(report.skipped.map(\.path) == ["planted.txt"])
        #expect(exists("planted.txt"))
    }

    @Test func theWalkStopsAtItsDepthLimit() throws {
        let deep = (0...FileOwnership.maximumDepth).map { "d\($0)" }.joined(separator: "/")
        _ = try make("\(deep)/alice.txt", owner: Fixture.alice)
        _ = try make("d0/alice.txt", owner: Fixture.alice)
        let report = try FileOwnership.removeFiles(ownedBy: Fixture.alice, under: scratch.path)
        #expect(report.removed == ["d0/alice.txt"])
        #expect(report.skipped.count == 1 && report.skipped[0].reason.contains("deeper"))
    }

    /// Runs a command and says whether it succeeded.
    func run(_ tool: String, _ arguments: [String]) throws -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    @Test(.enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
    func theWalkDoesNotCrossIntoAnotherMount() throws {
        let mountPoint = scratch.file("mnt")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        #expect(try run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "mamprotect-test", mountPoint]))
        defer { _ = try? run("/bin/umount", [mountPoint]) }
        _ = try make("mnt/alice.txt", owner: Fixture.alice)
        _ = try make("here/alice.txt", owner: Fixture.alice)
        let report = try FileOwnership.removeFiles(ownedBy: Fixture.alice, under: scratch.path)
        #expect(report.removed == ["here/alice.txt"])
        #expect(report.skipped.map(\.path) == ["mnt"])
        #expect(exists("mnt/alice.txt"))
    }

    @Test func nobodyHasNoFilesToRemove() {
        let error = #expect(throws: FileProtectionError.self) { try FileOwnership.removeFiles(ownedBy: .nobody, under: scratch.path) }
        #expect(error?.code == .unmanagedIdentity)
    }
}
