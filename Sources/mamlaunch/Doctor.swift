import ArgumentParser
import MAMSandbox

struct Doctor: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Report what this kernel offers the sandbox.",
        discussion: """
            Prints the Landlock ABI, whether seccomp filters and seccomp user notification are \
            available, and the libseccomp version; then what the sandbox would miss here. Exit \
            status 1 when a protection is missing (mamlaunch run then refuses to launch unless \
            --allow-weaker-sandbox is given).
            """
    )

    func run() throws {
        let s = SandboxSupport.probe()
        print("landlock            \(s.landlockABI.map { "ABI \($0)" } ?? "unavailable")\(s.landlockABI.map { $0 >= 6 ? " (filesystem, TCP, abstract-socket and signal scoping)" : "" } ?? "")")
        print("seccomp filters     \(s.seccompFilter ? "available" : "unavailable")")
        print("seccomp notify      \(s.seccompNotify ? "available" : "unavailable")")
        print("libseccomp          \(s.libseccompVersion)")
        print("runs apps as        \(geteuidIsRoot() ? "nobody (65534), dropped from root" : "the invoking user")")
        if s.missing.isEmpty {
            print("sandbox             complete")
        } else {
            for m in s.missing { print("missing             \(m)") }
            throw ExitCode(1)
        }
    }
}

import Glibc
func geteuidIsRoot() -> Bool { geteuid() == 0 }
