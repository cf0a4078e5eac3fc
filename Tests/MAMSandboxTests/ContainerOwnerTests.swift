import Foundation
import Glibc
@testable import MAMSandbox
import Testing

/// A kept container is handed to the app's new uid at launch (registered accounts and the shown
/// identity survive a relaunch under another uid), and the walk gives nothing else away: the
/// container is the app's, so it may hold links to anything.
@Suite("Sandbox: a kept container changes hands safely")
struct ContainerOwnerTests {
    @Test func onlyTheOldAppUsersOwnEntriesChangeHands() throws {
        let dir = "/tmp/mamlab-owner-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir + "/sub", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let old = AppUser.first + 7, new = AppUser.first + 9
        // A root-owned file outside, which the app links to both ways.
        let outside = dir + ".outside"
        FileManager.default.createFile(atPath: outside, contents: Data("root's".utf8))
        defer { unlink(outside) }
        for f in ["kept", "sub/deeper", "linked"] { FileManager.default.createFile(atPath: "\(dir)/\(f)", contents: Data("x".utf8)) }
        #expect(link(dir + "/linked", dir + "/second-name") == 0)
        for f in ["", "/sub", "/kept", "/sub/deeper", "/linked"] { #expect(chown(dir + f, old, old) == 0) }
        #expect(symlink(outside, dir + "/to-outside") == 0)
        #expect(link(outside, dir + "/hard-outside") == 0)
        FileManager.default.createFile(atPath: dir + "/root-file", contents: Data("r".utf8))

        let fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { close(fd) }
        ContainerOwner.hand(fd, to: new)

        func owner(_ path: String) -> uid_t {
            var s = stat()
            return lstat(path, &s) == 0 ? s.st_uid : 4_294_967_295
        }
        #expect(owner(dir + "/kept") == new && owner(dir + "/sub") == new && owner(dir + "/sub/deeper") == new)
        #expect(owner(outside) == 0, "a link to a file outside gives it away")
        #expect(owner(dir + "/root-file") == 0, "a file of root stays root's")
        #expect(owner(dir + "/linked") == old, "a file with a second name is not changed by either")
    }
}
