import Foundation
import Glibc
import MAMKit
import Testing

/// The identity on screen, kept in the app's container (ScreenState) and overwritten in place:
/// what comes back is the last name written, whatever the names before it were.
@Suite("MAMKit: the identity on screen survives the app")
struct ScreenStateTests {
    func withContainer(_ body: (String) throws -> Void) throws {
        let folder = NSTemporaryDirectory() + "mamkit-screen-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try body(folder)
    }

    @Test func theLastNameWrittenComesBackWhateverItsLength() throws {
        try withContainer { folder in
            let screen = ScreenState(directory: folder)
            #expect(screen.load() == nil, "nothing set yet")
            for (name, bytes) in [("adele@contoso.com", 18), ("", 1), ("ben@contoso.com", 16), ("b", 2)] {
                screen.save(name)
                // Another instance (the app restarted) reads what this one wrote.
                #expect(ScreenState(directory: folder).load() == name)
                let size = (try FileManager.default.attributesOfItem(atPath: screen.path)[.size] as? Int) ?? -1
                #expect(size == bytes, "cut to the name and its line break")
            }
            screen.save(nil)
            #expect(!FileManager.default.fileExists(atPath: screen.path))
            #expect(ScreenState(directory: folder).load() == nil)
            screen.save("adele@contoso.com")
            #expect(ScreenState(directory: folder).load() == "adele@contoso.com", "made again after being removed")
        }
    }

    /// A kill between the write and the cut leaves the old name's tail after the new name's
    /// line break; an earlier kit's file has no line break at all.
    @Test func onlyWhatComesBeforeTheFirstLineBreakCounts() throws {
        try withContainer { folder in
            let screen = ScreenState(directory: folder)
            try Data("ben@contoso.com\nle@contoso.com".utf8).write(to: URL(fileURLWithPath: screen.path))
            #expect(screen.load() == "ben@contoso.com")
            try Data("\ndele@contoso.com".utf8).write(to: URL(fileURLWithPath: screen.path))
            #expect(screen.load() == "")
            try Data("adele@contoso.com".utf8).write(to: URL(fileURLWithPath: screen.path))
            #expect(screen.load() == "adele@contoso.com")
            try Data(String(repeating: "a", count: 5000).utf8).write(to: URL(fileURLWithPath: screen.path))
            #expect(screen.load() == nil, "a name over 4 KiB is not believed")
            try Data([0xFF, 0xFE, 0x0A]).write(to: URL(fileURLWithPath: screen.path))
            #expect(screen.load() == nil, "nor one that is not UTF-8")
        }
    }

    /// The app's container is its own, but the kit still never writes through a link there.
    @Test func aLinkInPlaceOfTheFileIsNotWrittenThrough() throws {
        try withContainer { folder in
            let target = folder + "/elsewhere"
            try Data("untouched".utf8).write(to: URL(fileURLWithPath: target))
            let screen = ScreenState(directory: folder)
            try FileManager.default.createSymbolicLink(atPath: screen.path, withDestinationPath: target)
            screen.save("adele@contoso.com")
            #expect(try String(contentsOfFile: target, encoding: .utf8) == "untouched")
        }
    }
}
