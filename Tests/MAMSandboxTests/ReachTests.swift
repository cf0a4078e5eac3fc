import Foundation
@testable import MAMSandbox
import Testing

/// A folder only root may enter, as `mktemp -d` makes one or a home of mode 0700: a clone in it
/// is where a user may well run MAMLab.
struct PrivateFolder {
    let url = URL(fileURLWithPath: "/tmp").appendingPathComponent("mamlab-private-\(UUID().uuidString.prefix(8).lowercased())")

    init() throws {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        chmod(url.path, 0o700)
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

@Suite("Sandbox: apps beneath folders their uid cannot enter", .serialized, .timeLimit(.minutes(2)))
struct ReachTests {
    @Test func aPythonAppInsideA0700FolderRunsAndStaysConfined() throws {
        let folder = try PrivateFolder()
        defer { folder.remove() }
        let scene = try PythonScene(under: folder.url)
        let r = try scene.run([PythonScene.python, scene.probe.path])
        InterpreterTests().check(r)
    }

    @Test func aBuiltAppCopiedInsideA0700FolderStarts() throws {
        // The sample app's executable, as a clone inside the private folder would have it.
        let folder = try PrivateFolder()
        defer { folder.remove() }
        let app = folder.url.appendingPathComponent("clone/app")
        try FileManager.default.createDirectory(at: app, withIntermediateDirectories: true)
        let copy = app.appendingPathComponent("Hostile")
        try FileManager.default.copyItem(at: Built.directory.appendingPathComponent("Hostile"), to: copy)
        let containers = folder.url.appendingPathComponent("clone/containers")
        let r = try Built.run("mamlaunch", ["run", "--manifest", CommandRunnerPaths.root + "/Apps/Hostile/Info.plist", "--no-broker",
                                            "--containers", containers.path, copy.path, "--"] + Scene.light)
        #expect(r.status == 0, "\(r.err)")
        #expect(!r.err.contains("EACCES"), "\(r.err)")
        #expect(results(r.out)["exec_shell"]?["result"] as? String == "blocked", "\(r.out)\(r.err)")
    }

    @Test func onlyTheFoldersOthersCannotEnterAreCoveredAndOnlyWhatTheAppNeedsIsBoundBack() {
        let modes: [String: mode_t] = ["/home": 0o40755, "/home/me": 0o40700, "/home/me/src": 0o40755,
                                       "/home/me/src/app": 0o40755, "/home/me/src/app/lib": 0o40755,
                                       "/tmp": 0o41777, "/tmp/x": 0o40700, "/tmp/x/c": 0o40700, "/opt": 0o40755]
        let reach = Reach.plan(needed: ["/home/me/src/app/prog", "/home/me/src/app", "/home/me/src/app/lib/a.so", "/opt/swift/lib"],
                               container: "/tmp/x/c/com.example.app") { modes[$0] }
        #expect(reach.masked == ["/home/me", "/tmp/x"])
        #expect(reach.revealed == ["/home/me/src/app"])
        #expect(Reach.plan(needed: ["/opt/swift/lib"], container: "/opt/c/app") { modes[$0] ?? 0o40755 } == Reach())
    }
}
