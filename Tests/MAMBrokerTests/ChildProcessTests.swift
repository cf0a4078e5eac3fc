import Foundation
import Glibc
import MAMTestSupport
import Testing

/// The process driver every process test uses (MAMTestSupport's ChildProcess): a child that
/// stops answering fails the test within its deadline, saying what it printed, and goes away
/// with what it started; a child that fills its error pipe first cannot stall the test.
@Suite("A stuck child fails its test in time", .hangGuard)
struct ChildProcessTests {
    /// A child that starts a grandchild of its own (as a launcher with its app), says so, then
    /// hangs. The grandchild comes first, so that it exists once the first line has arrived.
    static let stuck = "sleep 1000 & echo started; echo 'about to hang' >&2; wait"

    @Test func aChildThatNeverSaysItFailsWithinItsDeadlineWithWhatItPrinted() throws {
        let child = try ChildProcess("/bin/sh", ["-c", Self.stuck], input: false)
        _ = try child.waitForOutput("its first line", timeout: 10) { $0.contains(UInt8(ascii: "\n")) }
        let grandchildren = ProcessTree.descendants(of: child.pid)
        #expect(!grandchildren.isEmpty)
        let start = Date()
        let error = #expect(throws: ChildProcess.TimedOut.self) {
            _ = try child.waitForOutput("a line that never comes", timeout: 1) { String(decoding: $0, as: UTF8.self).contains("never") }
        }
        #expect(Date().timeIntervalSince(start) < 60, "the wait ended at its deadline, not at the child's end (it sleeps 1000 s)")
        #expect(error?.output.contains("started") == true && error?.errors.contains("about to hang") == true, "\(String(describing: error))")
        #expect(error?.description.contains("a line that never comes") == true)
        // The child and its grandchild are gone.
        #expect(!child.process.isRunning)
        for pid in grandchildren { #expect(!ProcessTree.isAlive(pid), "process \(pid) survived") }
    }

    @Test func aScriptedAppThatNeverAnswersFailsTheCommandWithItsOutput() throws {
        let app = try ScriptedProcess("/bin/sh", ["-c", "echo '{\"event\":\"ready\"}'; echo 'stuck in a read' >&2; sleep 1000"],
                                      environment: [:], deadline: 1)
        let start = Date()
        let error = #expect(throws: ChildProcess.TimedOut.self) { try app.send("policy") }
        #expect(Date().timeIntervalSince(start) < 60, "the wait ended at its deadline, not at the app's end (it sleeps 1000 s)")
        #expect(error?.output.contains("ready") == true && error?.errors.contains("stuck in a read") == true, "\(String(describing: error))")
        #expect(!app.process.isRunning)
    }

    @Test func aChildThatFillsItsErrorPipeBeforeItsOutputDoesNotStall() throws {
        // 256 KiB on standard error, four times a pipe's buffer, then one line of output.
        let r = try ChildProcess.run("/bin/sh", ["-c", "head -c 262144 /dev/zero | tr '\\0' e >&2; echo done"], timeout: 10)
        #expect(r.status == 0 && r.out == "done\n" && r.err.count == 262_144)
    }
}
