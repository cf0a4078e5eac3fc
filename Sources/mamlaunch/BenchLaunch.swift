import ArgumentParser
import CMAMSandbox
import Foundation
import MAMCatalog
import Glibc
import MAMSandbox

struct BenchLaunch: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-launch",
        abstract: "Measure what the sandbox adds to an app's launch on this machine.",
        discussion: """
            Times, in one run and in turn, the launch of the same executable three ways, from the \
            launch request to the app's first broker message (one byte on descriptor 3): a plain \
            posix_spawn, bubblewrap (bwrap --unshare-all, when installed), and MAMLab's sandbox. \
            Prints the median of each and the ratios to the plain spawn.
            """
    )

    @Option(help: "Launches of each kind.")
    var iterations = 40

    @Option(help: ArgumentHelp("The executable (default: Hostile, built beside mamlaunch).", valueName: "PATH"))
    var executable: String?

    func run() throws {
        let exe = executable ?? (Catalog.toolDirectory as NSString).appendingPathComponent("Hostile")
        let container = NSTemporaryDirectory() + "mamlab-bench-\(getpid())"
        try FileManager.default.createDirectory(atPath: container, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: container) }
        let bwrap = ["/usr/bin/bwrap", "/bin/bwrap"].first { FileManager.default.isExecutableFile(atPath: $0) }

        var plain: [Double] = [], sandboxed: [Double] = [], wrapped: [Double] = []
        for _ in 0..<iterations {
            // Interleaved, so that a noisy moment on a shared machine hits all three alike.
            plain.append(try time { fd in try spawn([exe, "--exit"], fd: fd) })
            sandboxed.append(try time { fd in
                let app = try Sandbox.launch(LaunchConfiguration(bundleID: "bench", executable: exe, arguments: ["--exit"],
                                                                 containersRoot: container, brokerDescriptor: fd), report: { _ in })
                return app.pid
            })
            if let bwrap {
                wrapped.append(try time { fd in
                    try spawn([bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                               exe, "--exit"], fd: fd)
                })
            }
        }
        func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }
        let base = median(plain)
        print(String(format: "plain spawn       %8.2f ms", base))
        if !wrapped.isEmpty { print(String(format: "bwrap --unshare-all %6.2f ms  %.2fx", median(wrapped), median(wrapped) / base)) }
        else { print("bwrap             not installed (apt-get install bubblewrap)") }
        print(String(format: "MAMLab sandbox    %8.2f ms  %.2fx", median(sandboxed), median(sandboxed) / base))
    }

    /// Milliseconds from the start of `launch` to the first byte on the app's end of a pair.
    private func time(_ launch: (Int32) throws -> pid_t) throws -> Double {
        var pair: [Int32] = [-1, -1]
        guard mam_seqpacket_pair(&pair) == 0 else { throw ValidationError("socketpair failed") }
        defer { close(pair[0]) }
        let start = DispatchTime.now().uptimeNanoseconds
        let pid = try launch(pair[1])
        close(pair[1])
        var byte: UInt8 = 0
        _ = recv(pair[0], &byte, 1, 0)
        let end = DispatchTime.now().uptimeNanoseconds
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        return Double(end - start) / 1e6
    }

    private func spawn(_ argv: [String], fd: Int32) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fd, 3)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        var pid: pid_t = 0
        let cArgs = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        let rc = posix_spawn(&pid, argv[0], &actions, nil, cArgs, environ)
        guard rc == 0 else { throw ValidationError("posix_spawn \(argv[0]): \(String(cString: strerror(rc)))") }
        return pid
    }
}
