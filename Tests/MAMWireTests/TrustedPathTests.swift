import Foundation
import Glibc
import MAMWire
import SystemPackage
import Testing

/// The rules a folder root keeps state in must meet, one by one, on real folders (as root: the
/// other user is a uid of no account, set with chown).
@Suite("TrustedPath: which folders root may keep state in", .serialized)
struct TrustedPathTests {
    static let other: uid_t = 60_124

    /// A fresh folder of root's under /tmp for one test; removed after it.
    static func scratch(_ body: (String) throws -> Void) throws {
        let dir = "/tmp/mamlab-trusted-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try body(dir)
    }

    static func refusal(_ path: String, create: Bool = true) -> String? {
        do {
            try TrustedPath.folder(path, create: create).close()
            return nil
        } catch {
            return error.reason
        }
    }

    @Test func missingFoldersAreMadeWithTheirModesAndTheLastIsThisUsers() throws {
        try Self.scratch { dir in
            try #require(geteuid() == 0, "run the suite as root: the rules are about root's folders")
            // (The umask is the process's, shared by the tests running beside this one: the
            // modes are asked for as they would be under any.)
            let path = dir + "/a/b/device"
            #expect((try? TrustedPath.folder(path, mode: 0o700).close()) != nil)
            var st = stat()
            #expect(stat(dir + "/a", &st) == 0 && st.st_mode & 0o7777 == 0o755, "a parent is 0755")
            #expect(stat(path, &st) == 0 && st.st_mode & 0o7777 == 0o700 && st.st_uid == 0, "the folder has the mode asked for")
            #expect(Self.refusal(path) == nil, "an existing folder of root's is taken as it is")
        }
    }

    @Test func anotherUsersFolderAnywhereOnTheWayIsRefused() throws {
        try Self.scratch { dir in
            try FileManager.default.createDirectory(atPath: dir + "/theirs/sub", withIntermediateDirectories: true)
            chown(dir + "/theirs", Self.other, Self.other)
            #expect(Self.refusal(dir + "/theirs")?.contains("belongs to uid \(Self.other)") == true)
            #expect(Self.refusal(dir + "/theirs/sub")?.contains("theirs belongs to uid \(Self.other)") == true, "a parent of theirs")
            #expect(Self.refusal(dir + "/theirs/new")?.contains("belongs to uid \(Self.other)") == true)
            #expect(!FileManager.default.fileExists(atPath: dir + "/theirs/new"), "nothing made inside another user's folder")
        }
    }

    @Test func aFolderOthersMayWriteIsRefusedUnlessItIsAStickyParent() throws {
        try Self.scratch { dir in
            try FileManager.default.createDirectory(atPath: dir + "/open/device", withIntermediateDirectories: true)
            chmod(dir + "/open", 0o777)
            #expect(Self.refusal(dir + "/open/device")?.contains("not sticky") == true)
            #expect(Self.refusal(dir + "/open")?.contains("may be written by others") == true)
            chmod(dir + "/open", 0o1777)
            #expect(Self.refusal(dir + "/open/device") == nil, "a sticky parent, as /tmp is")
            #expect(Self.refusal(dir + "/open")?.contains("may be written by others") == true, "but never as the folder itself")
        }
    }

    @Test func onlyRootsOwnLinksAreFollowed() throws {
        try Self.scratch { dir in
            try FileManager.default.createDirectory(atPath: dir + "/real", withIntermediateDirectories: true)
            symlink(dir + "/real", dir + "/mine")
            symlink("real", dir + "/relative")
            symlink(dir + "/real", dir + "/theirs")
            lchown(dir + "/theirs", Self.other, Self.other)
            #expect(Self.refusal(dir + "/mine/device") == nil)
            #expect(Self.refusal(dir + "/relative/two") == nil, "a relative link of root's")
            #expect(FileManager.default.fileExists(atPath: dir + "/real/device") && FileManager.default.fileExists(atPath: dir + "/real/two"))
            #expect(Self.refusal(dir + "/theirs/device")?.contains("is a link made by uid \(Self.other)") == true)
        }
    }

    @Test func dotDotAndMissingFoldersWithoutCreateAreRefused() throws {
        try Self.scratch { dir in
            #expect(Self.refusal(dir + "/../etc")?.contains("\"..\"") == true)
            #expect(Self.refusal(dir + "/absent", create: false)?.contains("does not exist") == true)
            #expect(Self.refusal("")?.contains("not a path") == true)
        }
    }

    @Test func aStateFileMustBeThisUsersWithOneName() throws {
        try Self.scratch { dir in
            let file = dir + "/state.sqlite"
            FileManager.default.createFile(atPath: file, contents: nil, attributes: [.posixPermissions: 0o600])
            func check() -> String? {
                let fd = open(file, O_RDONLY | O_CLOEXEC)
                defer { close(fd) }
                do { try TrustedPath.checkOwnFile(FileDescriptor(rawValue: fd), shown: file); return nil } catch { return error.reason }
            }
            #expect(check() == nil)
            link(file, dir + "/second-name")
            #expect(check()?.contains("hard link") == true)
            unlink(dir + "/second-name")
            chown(file, Self.other, Self.other)
            #expect(check()?.contains("belongs to uid \(Self.other)") == true)
        }
    }
}
