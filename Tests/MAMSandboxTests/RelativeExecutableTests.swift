import Foundation
import Testing

/// An executable named relative to the caller's folder: the app's child changes into its
/// container before the exec, so the name must be made absolute first (bench-launch failed with
/// `exec: ENOENT`).
@Suite("Sandbox: an executable named by a relative path", .serialized, .timeLimit(.minutes(2)))
struct RelativeExecutableTests {
    @Test func benchLaunchTakesAnExecutableRelativeToItsFolder() throws {
        let r = try Built.run("mamlaunch", ["bench-launch", "--executable", "./Hostile", "--iterations", "1", "--block", "1"],
                              in: Built.directory)
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("MAMLab sandbox"), "\(r.out)\(r.err)")
        #expect(!r.err.contains("ENOENT"), "\(r.err)")
    }
}
