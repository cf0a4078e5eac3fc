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

    @Test func theAppRootShowsWhatTheAppNamesAtItsPathsAndNothingOfTheFoldersAround() {
        // A checkout in a 0700 folder, python3 a link to python3.11, /etc/localtime a link into
        // zoneinfo, a merged /usr (/lib64 -> usr/lib64), the containers beside the program.
        let links = ["/usr/bin/python3": "/usr/bin/python3.11", "/etc/localtime": "/usr/share/zoneinfo/Etc/UTC",
                     "/lib64": "/usr/lib64", "/home/me/src/app/lib/libzz.so": "/"]
        let resolve: (String) -> String? = { links[$0] ?? $0 }
        let root = AppRoot.plan(
            needed: ["/home/me/src/app/prog", "/usr/bin/python3", "/home/me/src/app", "/home/me/src/app/lib/a.so",
                     "/home/me/src/app/lib/libzz.so", "/usr/lib", "/usr/lib/swift", "/lib64", "/etc/localtime", "/usr/share/zoneinfo"],
            hidden: ["/home/me/src/app/containers", "/var/lib/mambroker", "/dev/shm"],
            rootLinks: [AppRoot.Link(path: "/lib64", target: "usr/lib64"), AppRoot.Link(path: "/proc", target: "/elsewhere"),
                        AppRoot.Link(path: "/usr", target: "/nowhere")],
            resolve: resolve)
        #expect(root.binds.map(\.target) == ["/dev/random", "/dev/urandom", "/etc/localtime", "/home/me/src/app",
                                              "/usr/bin/python3", "/usr/bin/python3.11", "/usr/lib", "/usr/lib64", "/usr/share/zoneinfo"])
        #expect(root.binds.first { $0.target == "/usr/bin/python3" }?.source == "/usr/bin/python3.11")
        #expect(root.binds.first { $0.target == "/etc/localtime" }?.source == "/usr/share/zoneinfo/Etc/UTC")
        // The app's /dev/null is a node of its own (spawn.c), never a bind of the host's.
        #expect(root.binds.filter(\.writable).isEmpty)
        #expect(root.binds.filter(\.device).map(\.target) == ["/dev/random", "/dev/urandom"])
        // Only the root's own links that stand nowhere else; only the hidden folders a shown one holds.
        #expect(root.links == [AppRoot.Link(path: "/lib64", target: "usr/lib64")])
        #expect(root.hidden == ["/home/me/src/app/containers"])
    }
}
