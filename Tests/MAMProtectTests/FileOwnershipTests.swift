import CMAMProtect
import Foundation
import Glibc
@testable import MAMProtect
import Testing

@Suite("File owners in user.mamlab.owner")
struct FileOwnershipTests {
    let scratch = ScratchFolder()

    /// Writes `value` into the owner attribute as a hostile app could, bypassing the API.
    func plant(_ value: [UInt8], on path: String) {
        let status = value.withUnsafeBytes { setxattr(path, FileOwnership.attributeName, $0.baseAddress, $0.count, 0) }
        #expect(status == 0, "setxattr: \(String(cString: strerror(errno)))")
    }

    @Test func anOwnerSetIsReadBack() throws {
        let path = scratch.write("report.txt", Array("q3".utf8))
        #expect(try FileOwnership.owner(ofFileAt: path) == .nobody)
        try FileOwnership.setOwner(Fixture.alice, ofFileAt: path)
        #expect(try FileOwnership.owner(ofFileAt: path) == Fixture.alice)
        try FileOwnership.setOwner(Fixture.bob, ofFileAt: path)
        #expect(try FileOwnership.owner(ofFileAt: path) == Fixture.bob)
        try FileOwnership.setOwner(.nobody, ofFileAt: path)
        #expect(try FileOwnership.owner(ofFileAt: path) == .nobody)
        try FileOwnership.setOwner(.nobody, ofFileAt: path)
    }

    @Test func createAndTruncateSetTheEffectiveIdentity() throws {
        let path = scratch.file("new.txt")
        let fd = try FileOwnership.createFile(at: path, for: Fixture.alice)
        #expect(write(fd, "abc", 3) == 3)
        close(fd)
        #expect(try FileOwnership.owner(ofFileAt: path) == Fixture.alice)
        // Truncating it under another identity hands the file to that identity.
        let again = try FileOwnership.createFile(at: path, for: Fixture.personal)
        #expect(try FileOwnership.owner(of: again) == Fixture.personal)
        var st = stat()
        fstat(again, &st)
        #expect(st.st_size == 0)
        close(again)
    }

    @Test func aSymbolicLinkIsRefusedNotFollowed() throws {
        let target = scratch.write("target.txt", [1])
        let link = scratch.file("link")
        #expect(symlink(target, link) == 0)
        #expect(throws: FileProtectionError.symbolicLink(path: link)) { try FileOwnership.setOwner(Fixture.alice, ofFileAt: link) }
        #expect(throws: FileProtectionError.symbolicLink(path: link)) { try FileOwnership.owner(ofFileAt: link) }
        #expect(throws: FileProtectionError.symbolicLink(path: link)) { try FileOwnership.createFile(at: link, for: Fixture.alice) }
        #expect(try FileOwnership.owner(ofFileAt: target) == .nobody, "the link's target was not touched")
        #expect(scratch.read("target.txt") == [1])
    }

    @Test func directoriesAndMissingFilesHaveTheirCodes() {
        let missing = #expect(throws: FileProtectionError.self) { try FileOwnership.owner(ofFileAt: scratch.file("nope")) }
        #expect(missing?.code == .fileNotFound)
        let folder = #expect(throws: FileProtectionError.self) { try FileOwnership.setOwner(Fixture.alice, ofFileAt: scratch.path) }
        #expect(folder?.code == .operationOnDirectory)
    }

    @Test("a hostile owner attribute is refused with what is wrong", arguments: [
        ("overlong", Array("1\n".utf8) + Array(repeating: 0x61, count: 600)),
        ("too long for the object id", Array("1\n".utf8) + Array(repeating: 0x61, count: 200) + Array("\nx@y".utf8)),
        ("not UTF-8", Array("1\nabc\n".utf8) + [0xc3, 0x28]),
        ("NUL inside", Array("1\nab".utf8) + [0] + Array("c\nx@y".utf8)),
        ("trailing NUL", Array("1\nabc\nx@y".utf8) + [0]),
        ("control character", Array("1\nabc\nx\u{1b}[31m@y".utf8)),
        ("unknown version", Array("2\nabc\nx@y".utf8)),
        ("two lines", Array("1\nabc".utf8)),
        ("four lines", Array("1\nabc\nx@y\nmore".utf8)),
        ("empty", []),
        ("names nobody", Array("1\n\n".utf8)),
    ] as [(String, [UInt8])])
    func hostileAttribute(name: String, value: [UInt8]) throws {
        let path = scratch.write("planted", [])
        plant(value, on: path)
        let error = #expect(throws: FileProtectionError.self, "\(name)") { try FileOwnership.owner(ofFileAt: path) }
        if case .invalidOwnerAttribute = error {} else { Issue.record("\(name): \(String(describing: error))") }
    }

    @Test func theLongestValidOwnerFitsTheAttribute() throws {
        let longest = try DataOwner(upn: String(repeating: "u", count: DataOwner.maximumUPNLength), objectID: String(repeating: "o", count: DataOwner.maximumObjectIDLength))
        let path = scratch.write("long", [])
        try FileOwnership.setOwner(longest, ofFileAt: path)
        #expect(try FileOwnership.owner(ofFileAt: path) == longest)
    }
}
