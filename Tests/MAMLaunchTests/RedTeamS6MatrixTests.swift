import Foundation
import Glibc
import MAMCatalog
@testable import MAMLauncher
import MAMTestSupport
import Testing

/// Session 6's red team on the live matrix: an app is the app author's program, and how it
/// ends is its own choice. The matrix asks each app to end and kills the ones that do not.
@Suite("Red team, session 6: the matrix's apps", .serialized, .timeLimit(.minutes(2)))
struct RedTeamS6MatrixTests {
    /// An app that closes its output at once (the runner reads that as its end) and goes on
    /// running: it waits on its broker connection, where nothing comes to an app that never said
    /// hello, and ignores `bye` and the end of its input. The matrix's stop waited for its exit
    /// with no deadline, so one such app hung the run (and its broker, and every app) for good.
    @Test func anAppThatClosesItsOutputButRunsOnIsStoppedAllTheSame() throws {
        let broker = try TestBroker(prefix: "mamlab-redteam-s6")
        defer { broker.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-redteam-s6-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let script = folder + "/hostile"
        try Data("#!/bin/sh\nexec 1>&-\nread line <&3\n".utf8).write(to: URL(fileURLWithPath: script))
        chmod(script, 0o755)
        let notes = Catalog.loadApps(in: URL(fileURLWithPath: TestBroker.root + "/Apps")).apps.first { $0.name == "Notes" }
        let manifest = try #require(notes?.manifest)
        let app = try ScriptedApp.launch(manifest: manifest, executable: script, launcherSocket: broker.launcherSocket,
                                         containers: broker.containers, account: nil, hidden: [broker.device], log: folder + "/app.log")
        let pid = app.app.pid
        // Stopped on a thread of its own: on a runner that waits for ever, the test kills the app
        // itself after its deadline (the verdict is whether the stop ended it, not how fast).
        let stopped = DispatchSemaphore(value: 0)
        Thread { app.stop(); stopped.signal() }.start()
        let ended = stopped.wait(timeout: .now() + 60) == .success
        if !ended {
            kill(-pid, SIGKILL)
            _ = stopped.wait(timeout: .now() + 30)
        }
        #expect(ended, "the runner's stop never ended an app that closed its output and ran on")
    }
}
