import Foundation
import Glibc
import MAMTestSupport
import Testing

/// Another user of the machine, without root, against root's broker and launcher: each attack
/// starts from a folder or socket the local user made first in a place everyone may write
/// (`/tmp`), as the documentation's own examples would have root use it.
@Suite("a local user cannot plant folders, files or sockets for root", .serialized)
struct LocalUserTests {
    /// The local user: a uid of no account of the system and of no app (the launcher's app uids
    /// start at 1,800,000,000), with no groups and no capabilities.
    static let uid = 60_123

    /// Runs a command as the local user (`setpriv`, util-linux), with a deadline.
    static func asLocalUser(_ command: [String], timeout: Double = 30) throws -> (status: Int32, out: String, err: String) {
        try ChildProcess.run("/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", "--"] + command,
                             environment: ["PATH": "/usr/bin:/bin"], directory: "/", timeout: timeout)
    }

    static var mambroker: String { CommandRunner.executable.deletingLastPathComponent().appendingPathComponent("mambroker").path }
    static var tenant: String { CommandRunner.root.appendingPathComponent("Policies/contoso/tenant.json").path }

    /// A fresh name in /tmp (sticky, everyone's) for the local user to claim.
    static func name(_ what: String) -> String { "/tmp/mamlab-local-\(what)-\(UUID().uuidString.prefix(8))" }

    /// Removes what the local user made, as root.
    static func remove(_ path: String) { _ = try? ChildProcess.run("/bin/rm", ["-rf", "--one-file-system", path], timeout: 30) }

    @Test("mambroker --device: a folder the local user made, with an empty state database of theirs, is refused and stays empty")
    func deviceFolderMadeFirst() throws {
        let device = Self.name("device")
        defer { Self.remove(device) }
        let made = try Self.asLocalUser(["/bin/sh", "-c", "mkdir -m 0777 \(device) && : > \(device)/state.sqlite && chmod 0666 \(device)/state.sqlite"])
        try #require(made.status == 0, "\(made)")
        let r = try ChildProcess.run(Self.mambroker, ["--tenant", Self.tenant, "--device", device], timeout: 20)
        #expect(r.status != 0, "the broker must not serve from another user's folder: \(r.err)")
        #expect(r.err.contains("refusing the device folder") && r.err.contains("uid \(Self.uid)"), "names the folder's owner: \(r.err)")
        var st = stat()
        #expect(stat(device + "/state.sqlite", &st) == 0 && st.st_size == 0, "nothing of root's was written into the local user's file")
        #expect(stat(device + "/audit", &st) != 0, "nothing was made in the folder")
    }

    @Test("mambroker --device: a root folder holding a state file of the local user's is refused")
    func stateFileOfAnotherUser() throws {
        let device = Self.name("device-file")
        defer { Self.remove(device) }
        try FileManager.default.createDirectory(atPath: device, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        try Data().write(to: URL(fileURLWithPath: device + "/state.sqlite"))
        #expect(chown(device + "/state.sqlite", uid_t(Self.uid), gid_t(Self.uid)) == 0)
        let r = try ChildProcess.run(Self.mambroker, ["--tenant", Self.tenant, "--device", device], timeout: 20)
        #expect(r.status != 0, "\(r.err)")
        #expect(r.err.contains("state.sqlite") && r.err.contains("uid \(Self.uid)"), "\(r.err)")
        var st = stat()
        #expect(stat(device + "/state.sqlite", &st) == 0 && st.st_size == 0)
    }

    @Test("mambroker --device: a link the local user planted in /tmp is not followed")
    func deviceLinkPlanted() throws {
        let target = Self.name("target")
        let link = Self.name("link")
        defer { Self.remove(target); Self.remove(link) }
        let made = try Self.asLocalUser(["/bin/sh", "-c", "mkdir -m 0700 \(target) && ln -s \(target) \(link)"])
        try #require(made.status == 0, "\(made)")
        let r = try ChildProcess.run(Self.mambroker, ["--tenant", Self.tenant, "--device", link + "/device"], timeout: 20)
        #expect(r.status != 0, "\(r.err)")
        #expect(r.err.contains("is a link made by uid \(Self.uid)"), "\(r.err)")
        #expect(!FileManager.default.fileExists(atPath: target + "/device"))
    }

    @Test("mambroker --socket: a socket in the local user's folder is refused before it is made (a link swapped in would be chmodded)")
    func socketInAFolderOfTheirs() throws {
        let folder = Self.name("sockets")
        let device = Self.name("device-own")
        defer { Self.remove(folder); Self.remove(device) }
        let made = try Self.asLocalUser(["/bin/mkdir", "-m", "0755", folder])
        try #require(made.status == 0, "\(made)")
        let r = try ChildProcess.run(Self.mambroker, ["--tenant", Self.tenant, "--device", device, "--socket", folder + "/pub.sock"], timeout: 20)
        #expect(r.status != 0, "\(r.err)")
        #expect(r.err.contains("refusing the socket") && r.err.contains("belongs to uid \(Self.uid)"), "\(r.err)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/pub.sock"))
    }

    @Test("mamlaunch signin: a socket the local user serves in the broker's place gets no password and no message")
    func socketInTheBrokersPlace() throws {
        let folder = Self.name("socket")
        defer { Self.remove(folder) }
        let socket = folder + "/launcher.sock"
        let received = folder + "/received"
        // The local user's listener: takes one connection and writes every byte it is sent to a file.
        let listener = """
            import os, socket, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777); s.listen(1)
            open(sys.argv[1] + '.ready', 'w').close()
            s.settimeout(20)
            c, _ = s.accept(); c.settimeout(5)
            data = b''
            try:
                while True:
                    chunk = c.recv(65536)
                    if not chunk: break
                    data += chunk
                    c.send(b'\\x00')
            except Exception:
                pass
            open(sys.argv[2], 'wb').write(data)
            """
        let made = try Self.asLocalUser(["/bin/mkdir", "-m", "0755", folder])
        try #require(made.status == 0, "\(made)")
        let child = try ChildProcess("/usr/bin/setpriv", ["--reuid=\(Self.uid)", "--regid=\(Self.uid)", "--clear-groups", "--",
                                                          "/usr/bin/python3", "-c", listener, socket, received], environment: ["PATH": "/usr/bin:/bin"], directory: "/")
        defer { child.killTree() }
        let deadline = Date(timeIntervalSinceNow: 20)
        while !FileManager.default.fileExists(atPath: socket + ".ready"), Date() < deadline { usleep(20_000) }
        try #require(FileManager.default.fileExists(atPath: socket + ".ready"), "the listener started")
        let r = try ChildProcess.run(CommandRunner.executable.path, ["signin", "--user", "ben@contoso.com", "--pid", "1", "--broker", socket],
                                     environment: ["MAMLAB_ROOT": CommandRunner.root.path, "PATH": "/usr/bin:/bin"], input: "contoso-ben\n", timeout: 20)
        #expect(r.status != 0, "\(r)")
        #expect(r.err.contains("refusing the broker") && r.err.contains("uid \(Self.uid)"), "\(r.err)")
        try child.waitForExit("the listener's end, once the launcher hangs up", timeout: 30)
        let got = (try? Data(contentsOf: URL(fileURLWithPath: received))) ?? Data("(no file)".utf8)
        #expect(got.isEmpty, "the listener received \(got.count) bytes: \(String(decoding: got, as: UTF8.self))")
    }

    @Test("mamlaunch run --containers: a containers folder the local user made is refused")
    func containersMadeFirst() throws {
        let containers = Self.name("containers")
        defer { Self.remove(containers) }
        let made = try Self.asLocalUser(["/bin/mkdir", "-m", "0777", containers])
        try #require(made.status == 0, "\(made)")
        let r = try CommandRunner.run(["run", "--manifest", CommandRunner.root.path + "/Apps/Notes/Info.plist", "--no-broker",
                                       "--containers", containers, "--", "/bin/true"])
        #expect(r.status != 0, "\(r.stderr)")
        #expect(r.stderr.contains("refusing the containers folder") && r.stderr.contains("uid \(Self.uid)"), "\(r.stderr)")
        #expect((try? FileManager.default.contentsOfDirectory(atPath: containers))?.isEmpty == true, "nothing was made in it")
    }

    @Test("mamlaunch run: its own broker's folder has an unguessable name, is root's alone and goes at exit")
    func runsOwnBrokerFolder() throws {
        let containers = Self.name("run-containers")
        defer { Self.remove(containers) }
        var env = ProcessInfo.processInfo.environment
        env["MAMLAB_ROOT"] = CommandRunner.root.path
        let child = try ChildProcess(CommandRunner.executable.path, ["run", "Mail", "--user", "adele@contoso.com", "--containers", containers, "--", "--script"],
                                     environment: env, directory: CommandRunner.root.path)
        defer { child.killTree() }
        try child.input!.fileHandleForWriting.write(contentsOf: Data("hello\n".utf8))
        let answered = try child.waitForOutput("Mail's answer to hello", timeout: 60) { String(decoding: $0, as: UTF8.self).contains("\"id\"") }
        try #require(answered, "\(child.standardError)")
        let prefix = "mamlab-device-\(child.pid)-"
        let folders = ((try? FileManager.default.contentsOfDirectory(atPath: "/run/mamlab")) ?? []).filter { $0.hasPrefix(prefix) }
        #expect(folders.count == 1, "one folder of this run's in /run/mamlab: \(folders)")
        #expect(!FileManager.default.fileExists(atPath: NSTemporaryDirectory() + "mamlab-device-\(child.pid)"), "no predictable name in the temporary folder")
        if let folder = folders.first {
            #expect(folder.count >= prefix.count + 8, "a random part follows the pid: \(folder)")
            var st = stat()
            #expect(stat("/run/mamlab/" + folder, &st) == 0 && st.st_uid == 0 && st.st_mode & 0o077 == 0, "root's alone")
        }
        try child.input!.fileHandleForWriting.close()
        try child.waitForExit("mamlaunch run's end after its app's input closed", timeout: 60)
        for folder in folders { #expect(!FileManager.default.fileExists(atPath: "/run/mamlab/" + folder), "removed at exit") }
    }

    @Test("the project comes from the program's own checkout, never from the working folder's parents")
    func projectFromTheWorkingFolder() throws {
        let planted = Self.name("project")
        defer { Self.remove(planted) }
        // The local user's "project": a tenant with an error that names itself, and an app.
        let script = """
            mkdir -p \(planted)/Apps/Evil \(planted)/Policies/contoso \(planted)/work && chmod -R 0755 \(planted) && \
            echo '{"planted": true' > \(planted)/Policies/contoso/tenant.json
            """
        let made = try Self.asLocalUser(["/bin/sh", "-c", script])
        try #require(made.status == 0, "\(made)")
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "MAMLAB_ROOT")
        let r = try ChildProcess.run(CommandRunner.executable.path, ["explain", "--from", "Mail:adele@contoso.com", "--to", "Notes", "--channel", "send"],
                                     environment: env, directory: planted + "/work", timeout: 60)
        #expect(r.status == 0, "the checkout's tenant answers: \(r.err)")
        #expect(!(r.out + r.err).contains(planted), "nothing of \(planted) was read: \(r.out) \(r.err)")
    }
}
