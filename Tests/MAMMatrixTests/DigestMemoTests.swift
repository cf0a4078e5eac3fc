import Foundation
import Glibc
import MAMCatalog
import Testing

/// Program digests kept from run to run (DigestMemo): kept by the file's stamp, and believed
/// only from a folder and a file that are this user's alone.
@Suite("Program digests remembered across runs")
struct DigestMemoTests {
    static let digest = String(repeating: "ab", count: 32)

    /// A fresh memo folder (0700) and a file to stamp; both removed by `body`'s end.
    func withMemo(_ body: (DigestMemo, String, String) throws -> Void) throws {
        let base = NSTemporaryDirectory() + "mamlab-memo-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: base) }
        let file = base + "/program"
        try Data("program bytes".utf8).write(to: URL(fileURLWithPath: file))
        try body(DigestMemo(folder: base + "/digests"), base, file)
    }

    func stamp(_ path: String) throws -> String {
        var st = stat()
        guard stat(path, &st) == 0 else { throw CocoaError(.fileNoSuchFile) }
        return DigestMemo.stamp(st)
    }

    @Test func aRememberedDigestIsRecalledByAnotherMemoOfTheSameFolder() throws {
        try withMemo { memo, _, file in
            let s = try stamp(file)
            #expect(memo.recall(s) == nil)
            memo.remember(s, Self.digest)
            #expect(DigestMemo(folder: memo.folder).recall(s) == Self.digest)
            var st = stat()
            #expect(lstat(memo.folder, &st) == 0 && st.st_mode & 0o777 == 0o700, "the folder is made private")
        }
    }

    @Test func aChangedFileIsANewStamp() throws {
        try withMemo { memo, _, file in
            let before = try stamp(file)
            memo.remember(before, Self.digest)
            let h = try FileHandle(forWritingTo: URL(fileURLWithPath: file))
            try h.seekToEnd()
            try h.write(contentsOf: Data("more".utf8))
            try h.close()
            let after = try stamp(file)
            #expect(after != before)
            #expect(memo.recall(after) == nil)
        }
    }

    @Test func onlyLowerCaseHexOfTheRightLengthIsKept() throws {
        try withMemo { memo, _, file in
            let s = try stamp(file)
            for bad in ["", String(repeating: "A", count: 64), String(repeating: "a", count: 63), String(repeating: "a", count: 65), "../" + String(repeating: "a", count: 61)] {
                memo.remember(s, bad)
                #expect(memo.recall(s) == nil, "kept \(bad)")
            }
        }
    }

    /// Entries the memo must not believe: each is planted by hand where a trusted one would be.
    @Test(arguments: ["foreign owner", "group-readable", "a link", "not hex", "too short", "a folder"])
    func anEntryThatIsNotThisUsersAloneIsNotBelieved(_ kind: String) throws {
        try withMemo { memo, base, file in
            let s = try stamp(file)
            memo.remember(s, Self.digest)
            let entry = memo.folder + "/" + DigestMemo.entryName(s)
            #expect(memo.recall(s) == Self.digest)
            unlink(entry)
            switch kind {
            case "foreign owner":
                try Data(Self.digest.utf8).write(to: URL(fileURLWithPath: entry))
                chmod(entry, 0o600)
                #expect(chown(entry, 65534, 65534) == 0)
            case "group-readable":
                try Data(Self.digest.utf8).write(to: URL(fileURLWithPath: entry))
                chmod(entry, 0o640)
            case "a link":
                try Data(Self.digest.utf8).write(to: URL(fileURLWithPath: base + "/elsewhere"))
                chmod(base + "/elsewhere", 0o600)
                try FileManager.default.createSymbolicLink(atPath: entry, withDestinationPath: base + "/elsewhere")
            case "not hex":
                try Data(String(repeating: "z", count: 64).utf8).write(to: URL(fileURLWithPath: entry))
                chmod(entry, 0o600)
            case "too short":
                try Data(Self.digest.prefix(40).utf8).write(to: URL(fileURLWithPath: entry))
                chmod(entry, 0o600)
            default:
                #expect(mkdir(entry, 0o700) == 0)
            }
            #expect(memo.recall(s) == nil, "believed \(kind)")
        }
    }

    @Test(arguments: ["foreign owner", "open to others", "a link"])
    func aFolderThatIsNotThisUsersAloneIsNeitherReadNorWritten(_ kind: String) throws {
        try withMemo { memo, base, file in
            let s = try stamp(file)
            memo.remember(s, Self.digest)
            #expect(memo.recall(s) == Self.digest)
            switch kind {
            case "foreign owner": #expect(chown(memo.folder, 65534, 65534) == 0)
            case "open to others": chmod(memo.folder, 0o733)
            default:
                #expect(rename(memo.folder, base + "/real") == 0)
                try FileManager.default.createSymbolicLink(atPath: memo.folder, withDestinationPath: base + "/real")
            }
            #expect(memo.recall(s) == nil, "read through \(kind)")
            let other = try stamp(base)
            memo.remember(other, Self.digest)
            #expect(!FileManager.default.fileExists(atPath: (kind == "a link" ? base + "/real" : memo.folder) + "/" + DigestMemo.entryName(other)),
                    "wrote through \(kind)")
        }
    }

    @Test func theFolderIsEmptiedWhenFullSoItStaysSmall() throws {
        try withMemo { memo, _, file in
            let s = try stamp(file)
            for i in 0..<DigestMemo.limit { memo.remember("stamp \(i)", Self.digest) }
            #expect(try FileManager.default.contentsOfDirectory(atPath: memo.folder).count == DigestMemo.limit)
            memo.remember(s, Self.digest)
            #expect(try FileManager.default.contentsOfDirectory(atPath: memo.folder) == [DigestMemo.entryName(s)])
            #expect(memo.recall(s) == Self.digest)
        }
    }
}
