import Foundation
import MAMTestSupport
import Testing

/// The launcher's own lines and an interactive app's prompt share one terminal. An app waiting
/// at a prompt (`mail> `) has left its line open; a line of the launcher's written then (a
/// sandbox violation, a restart, a weaker-sandbox warning) must start a line of its own, and the
/// prompt must be drawn again after it so the user still sees where they are typing.
@Suite("The launcher's lines under an app's prompt")
struct TerminalLineTests {
    @Test("a violation reported while the app's prompt is open starts its own line and redraws the prompt")
    func violationUnderAPrompt() async throws {
        let containers = NSTemporaryDirectory() + "mamlab-termline-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: containers) }
        // python3's pty: the command runs on a real pseudo-terminal, read until it ends.
        let code = #"""
            import json, os, pty, select, sys, time
            pid, fd = pty.fork()
            if pid == 0:
                os.execv(sys.argv[1], sys.argv[1:])
            seen = b""
            deadline = time.time() + 60
            while time.time() < deadline:
                if select.select([fd], [], [], 0.2)[0]:
                    try:
                        chunk = os.read(fd, 4096)
                    except OSError:
                        break
                    if not chunk:
                        break
                    seen += chunk
            _, raw = os.waitpid(pid, 0)
            print(json.dumps({"status": os.waitstatus_to_exitcode(raw), "said": seen.decode(errors="replace")}))
            """#
        let arguments = [CommandRunner.executable.path, "run", "Hostile", "--no-broker", "--containers", containers, "--",
                         "--prompt", "hostile> ", "--memory-mib", "1", "--tasks", "2", "--disk-mib", "1", "--cpu-ms", "1"]
        let r = try await ChildProcess.runOffPool("/usr/bin/python3", ["-c", code] + arguments,
                                                  environment: ProcessInfo.processInfo.environment.merging(["MAMLAB_ROOT": CommandRunner.root.path]) { _, b in b },
                                                  timeout: 120)
        let o = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any], "\(r.out) \(r.err)")
        let said = (o["said"] as? String ?? "").replacingOccurrences(of: "\r\n", with: "\n")
        #expect(o["status"] as? Int == 0, "\(said)")
        let lines = said.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let reports = lines.indices.filter { lines[$0].contains("sandbox violation:") }
        #expect(!reports.isEmpty, "the refused call was not reported: \(said)")
        for i in reports {
            // The report is a line of its own: not after the prompt, and the prompt is shown again next.
            #expect(lines[i].hasPrefix("mamlaunch: "), "a report shares the prompt's line: \(lines[i].debugDescription)")
            #expect(i > 0 && lines[i - 1] == "hostile> ", "the prompt's line before the report: \(said.debugDescription)")
            #expect(i + 1 < lines.count && lines[i + 1].hasPrefix("hostile> "), "the prompt is not drawn again: \(said.debugDescription)")
        }
    }
}
