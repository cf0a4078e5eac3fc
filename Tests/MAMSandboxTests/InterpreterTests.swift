import Foundation
import MAMSandbox
import Testing

/// A Python app of the user's own, in a folder of its own, beside another folder and a neighbour's
/// container it must not reach.
struct PythonScene {
    static let python = "/usr/bin/python3"
    static let manifest = CommandRunnerPaths.root + "/clients/python/Info.plist"

    let root: URL
    var app: URL { root.appendingPathComponent("app") }
    var probe: URL { app.appendingPathComponent("probe.py") }
    var elsewhere: URL { root.appendingPathComponent("elsewhere/secret.txt") }
    var containers: URL { root.appendingPathComponent("containers") }
    var neighbour: URL { containers.appendingPathComponent("com.example.other/secret.txt") }

    /// Tries what an app might, one JSON line per attempt.
    static let probeSource = #"""
    #!/usr/bin/python3
    import json, os, socket, stat, subprocess, sys
    sys.dont_write_bytecode = True
    here = os.path.dirname(os.path.abspath(__file__))

    def attempt(name, action):
        try:
            action()
            result = "succeeded"
        except OSError as error:
            result = "blocked"
        print(json.dumps({"attempt": name, "result": result}), flush=True)

    attempt("read_own_folder", lambda: open(os.path.join(here, "data.txt")).read())
    attempt("write_own_folder", lambda: open(os.path.join(here, "written.txt"), "w").close())
    attempt("read_elsewhere", lambda: open(sys.argv[1]).read())
    attempt("read_neighbour_container", lambda: open(sys.argv[2]).read())
    attempt("exec_shell", lambda: subprocess.run(["/bin/sh", "-c", "true"], check=True))
    attempt("tcp_socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).close())
    attempt("unix_socket", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close())
    attempt("write_working_directory", lambda: open("note.txt", "w").write("x"))
    if "--stdio" in sys.argv:
        print(json.dumps({"stdin": sys.stdin.read(), "pipes": [stat.S_ISFIFO(os.fstat(i).st_mode) for i in range(3)],
                          "terminals": [os.isatty(i) for i in range(3)], "session_leader": os.getsid(0) == os.getpid()}), flush=True)
        print("a line for standard error", file=sys.stderr, flush=True)
    """#

    /// `parent`: where the scene's folder goes (default /tmp).
    init(under parent: URL = URL(fileURLWithPath: "/tmp")) throws {
        root = parent.appendingPathComponent("mamlab-python-\(UUID().uuidString.prefix(8).lowercased())")
        let fm = FileManager.default
        for dir in [app, elsewhere.deletingLastPathComponent(), neighbour.deletingLastPathComponent()] {
            try fm.createDirectory(at: dir, withIntermediateDirectories: true)
        }
        try Data(Self.probeSource.utf8).write(to: probe)
        chmod(probe.path, 0o755)
        try Data("mine".utf8).write(to: app.appendingPathComponent("data.txt"))
        try Data("secret".utf8).write(to: elsewhere)
        try Data("secret".utf8).write(to: neighbour)
    }

    /// `mamlaunch run --manifest … -- program…`, with the probe's targets.
    func run(_ program: [String], extra: [String] = [], input: FileHandle = .nullDevice) throws -> (status: Int32, out: String, err: String) {
        try Built.run("mamlaunch", ["run", "--manifest", Self.manifest, "--no-broker", "--containers", containers.path, "--"]
                      + program + [elsewhere.path, neighbour.path] + extra, input: input)
    }

    /// A script in the app's folder with this first line.
    func script(_ name: String, firstLine: [UInt8]) throws -> String {
        let path = app.appendingPathComponent(name).path
        try Data(firstLine + Array("\nprint('ran')\n".utf8)).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o755)
        return path
    }

    func remove() { try? FileManager.default.removeItem(at: root) }
}

@Suite("Sandbox: apps in other languages", .serialized, .timeLimit(.minutes(2)))
struct InterpreterTests {
    static let confined = ["read_elsewhere", "read_neighbour_container", "exec_shell", "tcp_socket", "unix_socket", "write_own_folder"]

    func check(_ r: (status: Int32, out: String, err: String)) {
        #expect(r.status == 0, "\(r.err)")
        let byAttempt = results(r.out).mapValues { $0["result"] as? String ?? "" }
        #expect(byAttempt["read_own_folder"] == "succeeded", "the app cannot read its own folder: \(r.out)\(r.err)")
        #expect(byAttempt["write_working_directory"] == "succeeded", "\(r.out)")
        // Without Landlock (a kernel without it in lsm=) too: what lies elsewhere is not in the
        // app's own root (docs/SANDBOX.md, "The app's root").
        for name in Self.confined {
            #expect(byAttempt[name] == "blocked", "\(name): \(byAttempt[name] ?? "missing")\n\(r.out)\(r.err)")
        }
        for phrase in ["execve /bin/sh denied", "socket AF_INET denied", "socket AF_UNIX denied", "written.txt denied"] {
            #expect(r.err.contains(phrase), "missing report: \(phrase)\n\(r.err)")
        }
    }

    @Test func aPythonScriptRunsUnderTheInterpreterAndIsConfined() throws {
        let scene = try PythonScene()
        defer { scene.remove() }
        check(try scene.run([PythonScene.python, scene.probe.path]))
    }

    @Test func aShebangScriptRunsAsTheExecutableAndIsConfined() throws {
        let scene = try PythonScene()
        defer { scene.remove() }
        check(try scene.run([scene.probe.path]))
    }

    @Test func theSameAttemptsSucceedUnconfined() throws {
        // The probe can tell: outside the sandbox each confined attempt works.
        let scene = try PythonScene()
        defer { scene.remove() }
        let throwaway = scene.root.appendingPathComponent("throwaway")
        try FileManager.default.createDirectory(at: throwaway, withIntermediateDirectories: true)
        let r = try Built.run(PythonScene.python, [scene.probe.path, scene.elsewhere.path, scene.neighbour.path], in: throwaway)
        let byAttempt = results(r.out).mapValues { $0["result"] as? String ?? "" }
        for name in Self.confined { #expect(byAttempt[name] == "succeeded", "\(name): \(r.out)\(r.err)") }
    }

    @Test func pipesPassThroughAndTheAppHasASessionOfItsOwn() throws {
        let scene = try PythonScene()
        defer { scene.remove() }
        let input = Pipe()
        input.fileHandleForWriting.write(Data("paste\nbye\n".utf8))
        try input.fileHandleForWriting.close()
        let r = try scene.run([PythonScene.python, scene.probe.path], extra: ["--stdio"], input: input.fileHandleForReading)
        #expect(r.status == 0, "\(r.err)")
        let stdio = lines(r.out).first { $0["stdin"] != nil } ?? [:]
        #expect(stdio["stdin"] as? String == "paste\nbye\n", "\(r.out)\(r.err)")
        #expect(stdio["pipes"] as? [Bool] == [true, true, true], "\(stdio)")
        #expect(stdio["terminals"] as? [Bool] == [false, false, false], "\(stdio)")
        #expect(stdio["session_leader"] as? Bool == true, "\(stdio)")
        // Standard error stays apart from standard output.
        #expect(r.err.contains("a line for standard error") && !r.out.contains("a line for standard error"))
    }

    @Test func aShebangThatWouldNeedMoreIsRefusedClearly() throws {
        let scene = try PythonScene()
        defer { scene.remove() }
        let interpreterScript = try scene.script("interp.sh", firstLine: Array("#!/usr/bin/python3".utf8))
        let cases: [(String, [UInt8], String)] = [
            ("relative.py", Array("#!python3".utf8), "a relative path"),
            ("dotted.py", Array("#!/usr/bin/../bin/python3".utf8), "no empty, \".\" or \"..\" component"),
            ("env.py", Array("#!/usr/bin/env python3".utf8), "would start a second program"),
            ("long.py", Array("#!/usr/bin/python3 ".utf8) + Array(repeating: UInt8(ascii: "x"), count: 300), "longer than 255 bytes"),
            ("control.py", Array("#!/usr/bin/python3\r".utf8), "printable ASCII only"),
            ("missing.py", Array("#!/no/such/python".utf8), "not an executable file"),
            ("nested.py", Array("#!\(interpreterScript)".utf8), "is itself a script"),
        ]
        for (name, line, phrase) in cases {
            let path = try scene.script(name, firstLine: line)
            let r = try scene.run([path])
            #expect(r.status != 0 && !r.out.contains("ran"), "\(name) ran: \(r.out)")
            #expect(r.err.contains(phrase) && r.err.contains(name), "\(name): \(r.err)")
        }
    }

    @Test func anAppFolderThatHoldsOtherFilesIsRefused() throws {
        let scene = try PythonScene()
        defer { scene.remove() }
        // A script straight in /tmp would grant everyone's /tmp.
        let loose = "/tmp/mamlab-loose-\(UUID().uuidString.prefix(8)).py"
        try Data("print('ran')\n".utf8).write(to: URL(fileURLWithPath: loose))
        defer { unlink(loose) }
        let r = try scene.run([PythonScene.python, loose])
        #expect(r.status != 0 && r.err.contains("/tmp is a system folder"), "\(r.out)\(r.err)")
        // Containers beneath the app's folder would be readable through it.
        let nested = try Built.run("mamlaunch", ["run", "--manifest", PythonScene.manifest, "--no-broker", "--containers",
                                                 scene.app.appendingPathComponent("containers").path, "--", PythonScene.python, scene.probe.path])
        #expect(nested.status != 0 && nested.err.contains("which apps may not see"), "\(nested.err)")
    }

    @Test func theShebangLineIsReadStrictly() throws {
        #expect(try Shebang.parse(Array("\u{7f}ELF".utf8), script: "a") == nil)
        #expect(try Shebang.parse(Array("#!/usr/bin/python3 -u\n".utf8), script: "a") == "/usr/bin/python3")
        #expect(try Shebang.parse(Array("#! \t/usr/bin/python3\n".utf8), script: "a") == "/usr/bin/python3")
        #expect(throws: LaunchError.self) { try Shebang.parse(Array("#!\n".utf8), script: "a") }
        #expect(throws: LaunchError.self) { try Shebang.parse(Array("#!/usr/bin//python3\n".utf8), script: "a") }
        #expect(throws: LaunchError.self) { try Shebang.parse(Array("#!/usr/bin/python3".utf8), script: "a") }
        #expect(throws: LaunchError.self) { try Shebang.parse(Array("#!/usr/bin/pyth\u{0}on\n".utf8), script: "a") }
        #expect(throws: LaunchError.self) { try Shebang.parse(Array("#!/usr/bin/pythön\n".utf8), script: "a") }
    }
}
