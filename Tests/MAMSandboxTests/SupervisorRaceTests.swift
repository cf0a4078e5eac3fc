import Foundation
import MAMTestSupport
import Testing

/// A hostile app races the supervisor: it checks the file a confined call names (from the app's
/// memory and descriptor table) and then lets the kernel run the call, which reads them again
/// (SECCOMP_USER_NOTIF_FLAG_CONTINUE). Another thread of the app changes them in between.
@Suite(.serialized) struct SupervisorRaceTests {
    static let attribute = "user.mamlab.race"

    /// getxattr(2), which Glibc's Swift module does not declare.
    static func attributeSet(on path: String, named name: String = attribute) -> Bool {
        typealias GetXattr = @convention(c) (UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafeMutableRawPointer?, Int) -> Int
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "getxattr") else { return false }
        var value = [UInt8](repeating: 0, count: 8)
        return unsafeBitCast(symbol, to: GetXattr.self)(path, name, &value, value.count) >= 0
    }

    /// A host folder every uid may write (as /tmp), sticky, with a file for each race on a
    /// path: times.txt (modified in 2001) and write.txt. The rename race aims at a new name in it.
    struct RaceFolder {
        let url: URL
        static let old = Date(timeIntervalSince1970: 978_307_200)
        init(in scene: Scene) throws {
            url = scene.root.appendingPathComponent("race")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            chmod(url.path, 0o1777)
            for name in ["times.txt", "write.txt"] {
                let file = url.appendingPathComponent(name)
                try Data("shared\n".utf8).write(to: file)
                chmod(file.path, 0o666)
            }
            try FileManager.default.setAttributes([.modificationDate: Self.old], ofItemAtPath: times)
        }
        var times: String { url.appendingPathComponent("times.txt").path }
        var write: String { url.appendingPathComponent("write.txt").path }
        var renamed: String { url.appendingPathComponent("escaped-rename.txt").path }
        var timesChanged: Bool {
            let date = (try? FileManager.default.attributesOfItem(atPath: times))?[.modificationDate] as? Date
            return date != Self.old
        }
        var written: Bool { (try? String(contentsOfFile: write, encoding: .utf8)) != "shared\n" }
        var renamedOut: Bool { FileManager.default.fileExists(atPath: renamed) }
    }

    /// Every confined call the supervisor used to let run after its check, raced: a descriptor
    /// number dup2'd or a path byte flipped by a second thread. (Writes, renames and opens for
    /// writing outside the grant are Landlock's as well; they show the supervisor's own layer
    /// where Landlock is missing: `scripts/kernels nolandlock`.)
    @Test func aConfinedCallCannotBeRacedPastTheCheck() throws {
        let scene = try Scene()
        defer { scene.remove() }
        let race = try RaceFolder(in: scene)
        let r = try Built.run("mamlaunch", ["run", "Hostile", "--no-broker", "--containers", scene.containers.path, "--",
                                            "--race-ms", "2000", "--world-writable", scene.worldWritable.path, "--race-dir", race.url.path])
        #expect(r.status == 0, "\(r.err)")
        let byAttempt = results(r.out)
        for attempt in ["flock_race_system_file", "inotify_race_system_file", "fcntl_lock_race_system_file"] {
            #expect(byAttempt[attempt]?["result"] as? String == "blocked", "\(attempt) reached /etc/ld.so.cache past the check: \(byAttempt[attempt] ?? [:])")
        }
        for attempt in ["setxattr_race_host_file", "utimensat_race_host_file", "write_open_race_host_file", "rename_race_host_folder"] {
            #expect(byAttempt[attempt]?["result"] as? String == "tried", "\(attempt): \(r.out)")
        }
        #expect(!Self.attributeSet(on: scene.worldWritable.path),
                "an attribute reached \(scene.worldWritable.path), a host file outside every grant: \(byAttempt["setxattr_race_host_file"] ?? [:])")
        #expect(!race.timesChanged, "utimensat reached \(race.times): \(byAttempt["utimensat_race_host_file"] ?? [:])")
        #expect(!race.written, "a write-open reached \(race.write): \(byAttempt["write_open_race_host_file"] ?? [:])")
        #expect(!race.renamedOut, "a container file was renamed out to \(race.renamed): \(byAttempt["rename_race_host_folder"] ?? [:])")
    }

    /// The same races unconfined: each reaches the outside file, so the confined run can fail.
    @Test func theRacesReachTheOutsideFileUnconfined() throws {
        let scene = try Scene()
        defer { scene.remove() }
        let race = try RaceFolder(in: scene)
        let throwaway = scene.root.appendingPathComponent("throwaway")
        try FileManager.default.createDirectory(at: throwaway, withIntermediateDirectories: true)
        let r = try Built.run("Hostile", ["--race-ms", "1000", "--world-writable", scene.worldWritable.path, "--race-dir", race.url.path], in: throwaway)
        #expect(r.status == 0, "\(r.err)")
        let byAttempt = results(r.out)
        for attempt in ["flock_race_system_file", "inotify_race_system_file", "fcntl_lock_race_system_file"] {
            #expect(byAttempt[attempt]?["result"] as? String == "succeeded", "\(attempt): \(r.out)")
        }
        #expect(Self.attributeSet(on: scene.worldWritable.path), "\(r.out)")
        #expect(race.timesChanged, "\(r.out)")
        #expect(race.written, "\(r.out)")
        #expect(race.renamedOut, "\(r.out)")
    }

    /// The supervisor runs as root without Landlock, and performs these calls itself: on files in
    /// the container the app's uid may not change (root's), each fails as the app's own would.
    @Test func aPerformedCallGetsNoMoreThanTheAppsOwnPermissions() throws {
        let scene = try Scene()
        defer { scene.remove() }
        let container = scene.containers.appendingPathComponent("com.example.hostile")
        let folder = try Self.notMine(in: container)
        // The on-disk container (no tmpfs of its own), where the files of root's were put.
        let r = try Built.run("mamlaunch", ["run", "Hostile", "--no-broker", "--limit", "disk=none", "--containers", scene.containers.path,
                                            "--", "--not-mine", "not-mine"])
        #expect(r.status == 0, "\(r.err)")
        let byAttempt = results(r.out)
        for attempt in Self.performed {
            // Refused for want of permission: the file is there (no "No such file").
            let detail = byAttempt[attempt]?["detail"] as? String ?? ""
            #expect(byAttempt[attempt]?["result"] as? String == "blocked" && (detail.contains("denied") || detail.contains("not permitted")),
                    "\(attempt): \(byAttempt[attempt] ?? [:])\n\(r.out)")
        }
        let file = folder.appendingPathComponent("root.txt").path
        #expect(!Self.attributeSet(on: file, named: "user.mamlab.perm"))
        #expect((try? String(contentsOfFile: file, encoding: .utf8)) == "root's\n")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("new").path))
        let behind = folder.appendingPathComponent("locked/open.txt").path
        #expect((try? String(contentsOfFile: behind, encoding: .utf8)) == "root's\n")
        #expect(!Self.attributeSet(on: behind, named: "user.mamlab.perm"))

        // Control: root, as the supervisor is, may do each of them.
        let throwaway = scene.root.appendingPathComponent("throwaway")
        _ = try Self.notMine(in: throwaway)
        let control = try Built.run("Hostile", ["--not-mine", "not-mine"], in: throwaway)
        for attempt in Self.performed {
            let outcome = results(control.out)[attempt]
            // A tmpfs before Linux 6.6 (the kernel lab's /tmp) has no user attributes at all.
            let unsupported = attempt.contains("setxattr") && (outcome?["detail"] as? String ?? "").contains("not supported")
            #expect(outcome?["result"] as? String == "succeeded" || unsupported, "\(attempt): \(control.out)")
        }
    }

    static let performed = ["performed_setxattr_not_mine", "performed_touch_not_mine", "performed_truncate_not_mine",
                            "performed_mkdir_not_mine", "performed_unlink_not_mine",
                            "performed_write_behind_locked_folder", "performed_setxattr_behind_locked_folder"]

    /// A folder of root's (0755) holding root.txt (0644, root's) in `directory`, and
    /// locked/open.txt (0666) in a folder of root's the app's uid may not search (0700).
    static func notMine(in directory: URL) throws -> URL {
        let folder = directory.appendingPathComponent("not-mine")
        let locked = folder.appendingPathComponent("locked")
        try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: true)
        chmod(folder.path, 0o755)
        chmod(locked.path, 0o700)
        let file = folder.appendingPathComponent("root.txt")
        try Data("root's\n".utf8).write(to: file)
        chmod(file.path, 0o644)
        let open = locked.appendingPathComponent("open.txt")
        try Data("root's\n".utf8).write(to: open)
        chmod(open.path, 0o666)
        return folder
    }
}
