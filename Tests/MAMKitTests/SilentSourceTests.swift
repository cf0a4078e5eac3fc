import Foundation
import MAMScript
import MAMTestSupport
import Testing

/// An active import whose source never answers (issue 22: Mail's prompt hung for good until Docs
/// quit). The importer is answered once the source is late, and goes on answering.
@Suite("An import from a source that never answers", .serialized, .timeLimit(.minutes(2)))
struct SilentSourceTests {
    @Test func theImporterIsAnsweredWhenTheSourceIsLateAndAnswersAfterwards() throws {
        // A virtual clock: the source's 30 s are skipped, not waited for.
        let b = try KitBroker(extraArguments: ["--clock", "virtual"])
        defer { b.stop() }
        // The source: Courier as Docs, which says hello and then never reads its connection again.
        let silent = try b.courier("Docs", ["hello", "sleep", "100000"])
        defer { ProcessTree.kill(silent.process.processIdentifier) }
        let mail = try b.launch("Mail", user: "adele@contoso.com")
        defer { mail.finish() }
        // The clock moves on by more than the source's allowance, again and again, until the test is done.
        let done = Flag()
        let clock = Thread {
            while !done.isSet {
                _ = try? ChildProcess.run(KitBroker.bin + "/mamlaunch", ["clock", "advance", "31s", "--broker", b.launcherSocket], timeout: 10)
                usleep(300_000)
            }
        }
        clock.start()
        defer { done.set() }
        // Until the silent source is adopted, the import finds it not running; then it waits
        // for it, and the broker answers when the source is late.
        var answer: JSONValue?
        let deadline = Date(timeIntervalSinceNow: 60)
        while Date() < deadline {
            let r = try mail.send("import", "com.contoso.docs", "public.plain-text")
            if r["error"]?.string?.contains("not running") == true { usleep(100_000); continue }
            answer = r
            break
        }
        let text = "\(answer.map { "\($0)" } ?? "no answer")"
        #expect(text.contains("did not answer within"), "\(text)")
        // The app answers what comes next.
        #expect(try mail.send("hello")["error"] == nil)
    }
}

final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.lock(); value = true; lock.unlock() }
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
}
