import Foundation
import Glibc
import MAMCatalog
@testable import MAMLauncher
@testable import MAMMatrixLive
import MAMScript
import MAMTestSupport
import Testing

/// Session 6's red team on the live matrix: an app is the app author's program, and how it
/// ends is its own choice. The matrix asks each app to end and kills the ones that do not.
@Suite("Red team, session 6: the matrix's apps", .serialized, .timeLimit(.minutes(2)))
struct RedTeamS6MatrixTests {
    /// Launches `script` (a shell script the sandbox runs) as Notes against a broker of its
    /// own, from a folder of its own (traversable by the app's uid), as `mamlaunch matrix`
    /// launches its apps; the broker and the folder go when `body` returns.
    static func withApp(_ script: String, _ body: (ScriptedApp) throws -> Void) throws {
        let broker = try TestBroker(prefix: "mamlab-redteam-s6")
        defer { broker.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-redteam-s6-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/hostile"
        try Data(script.utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o755)
        let notes = Catalog.loadApps(in: URL(fileURLWithPath: TestBroker.root + "/Apps")).apps.first { $0.name == "Notes" }
        let manifest = try #require(notes?.manifest)
        try body(try ScriptedApp.launch(manifest: manifest, executable: path, launcherSocket: broker.launcherSocket,
                                        containers: broker.containers, account: nil, hidden: [broker.device], log: folder + "/app.log"))
    }

    /// Runs `body` on a thread of its own; whether it returned within `seconds`. If not, the app
    /// is killed (which ends any wait on it) and the thread given as long again to return: the
    /// verdict is whether the runner ever gives up on the app, not how fast.
    static func returns(within seconds: Double, killing app: ScriptedApp, _ body: @escaping @Sendable () -> Void) -> Bool {
        let done = DispatchSemaphore(value: 0)
        Thread { body(); done.signal() }.start()
        if done.wait(timeout: .now() + seconds) == .success { return true }
        kill(-app.app.pid, SIGKILL)
        _ = done.wait(timeout: .now() + seconds)
        return false
    }

    /// An app that closes its output at once (the runner reads that as its end) and goes on
    /// running: it waits on its broker connection, where nothing comes to an app that never said
    /// hello, and ignores `bye` and the end of its input. The matrix's stop waited for its exit
    /// with no deadline, so one such app hung the run (and its broker, and every app) for good.
    @Test func anAppThatClosesItsOutputButRunsOnIsStoppedAllTheSame() throws {
        try Self.withApp("#!/bin/sh\nexec 1>&-\nread line <&3\n") { app in
            let ended = Self.returns(within: 60, killing: app) { app.stop() }
            #expect(ended, "the runner's stop never ended an app that closed its output and ran on")
        }
    }

    /// An app that never reads its commands: each call waits for its answer until its deadline
    /// and fails, the runner writes on until the app's input is full, and then waited in `send`
    /// for ever (and `bye` did too).
    @Test func anAppThatNeverReadsItsCommandsCannotHangTheRunner() throws {
        try Self.withApp("#!/bin/sh\nread line <&3\n") { app in
            let outcome = Locked<String>("")
            let returned = Self.returns(within: 60, killing: app) {
                // 400 commands of 60 KiB: far more than a socket's buffer holds.
                let argument = String(repeating: "a", count: 60_000)
                var answered = 0
                for _ in 0..<400 {
                    do { _ = try app.call(ScriptCommand("copy", [argument]), timeout: 1); answered += 1 } catch {
                        // Unanswered while its input has room: the runner writes on.
                        if "\(error)".contains("did not answer") { continue }
                        outcome.update { $0 = "\(answered) answered, then: \(error)" }
                        break
                    }
                }
                app.stop()
            }
            #expect(returned, "the runner waited for ever on an app that does not read its commands")
            #expect(outcome.value.contains("did not read its commands"), "\(outcome.value)")
        }
    }

    /// An app that floods events nobody claims (and answers to commands never sent): the runner,
    /// root, kept every one, so its memory grew as fast as the app could write.
    @Test func anAppThatFloodsEventsCannotFillTheRunnersMemory() throws {
        let script = """
            #!/bin/sh
            i=0
            while [ $i -lt 20000 ]; do echo '{"event":"flood"}'; echo "{\\"id\\":$((i + 100))}"; i=$((i+1)); done
            read line
            echo '{"id":1}'
            read line <&3

            """
        try Self.withApp(script) { app in
            defer { app.stop() }
            // Answered after every flooded line: all of them were read by then.
            let answer = try app.call(ScriptCommand("hello"), timeout: 60)
            #expect(answer["id"]?.number == 1)
            let kept = app.drainEvents().count
            #expect(kept <= ScriptedApp.unclaimedEvents, "the runner kept \(kept) unclaimed events")
            let answers = app.untakenAnswers
            #expect(answers == 0, "the runner kept \(answers) answers to commands it never sent")
        }
    }

    /// The same with few, large events: 20 of 64 KiB each, kept up to the bound in bytes (set
    /// low here, so that the flood is small).
    @Test func anAppThatFloodsLargeEventsIsBoundedInBytes() throws {
        let script = """
            #!/bin/sh
            s=a
            i=0
            while [ $i -lt 16 ]; do s=$s$s; i=$((i+1)); done
            read line
            i=0
            while [ $i -lt 20 ]; do echo "{\\"event\\":\\"flood\\",\\"pad\\":\\"$s\\"}"; i=$((i+1)); done
            echo '{"id":1}'
            read line <&3

            """
        try Self.withApp(script) { app in
            defer { app.stop() }
            app.eventByteLimit = 256 << 10
            let answer = try app.call(ScriptCommand("hello"), timeout: 60)
            #expect(answer["id"]?.number == 1)
            let kept = app.drainEvents().count
            #expect(kept > 0 && kept <= 4, "the runner kept \(kept) events of 64 KiB under a bound of 256 KiB")
        }
    }
}
