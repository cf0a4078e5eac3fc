import ArgumentParser
import CMAMSandbox
import Foundation
import MAMCatalog
import Glibc
import MAMLauncher
import MAMSandbox
import MAMWire
import SystemPackage

struct BenchLaunch: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-launch",
        abstract: "Measure what the sandbox adds to an app's launch on this machine.",
        discussion: """
            Times, in one run, the launch of each executable three ways, from the launch request \
            to the app's first broker message (one byte on descriptor 3): a plain posix_spawn, \
            bubblewrap (bwrap --unshare-all, when installed), and MAMLab's sandbox. The kinds take \
            turns in blocks, in a rotating order, so that a noisy moment on a shared machine hits \
            all alike. Prints the median of each, the overhead over the plain spawn, and MAMLab's \
            overhead as a share of bubblewrap's.
            """
    )

    @Option(help: "Launches of each kind, per executable.")
    var iterations = 60

    @Option(help: "Launches of one kind in a row before the next kind's turn.")
    var block = 5

    @Option(help: ArgumentHelp("An executable to launch (repeat for several; default: Hostile, built beside mamlaunch). It must send one byte on descriptor 3.", valueName: "PATH"))
    var executable: [String] = []

    @OptionGroup var sandbox: SandboxOptions

    enum Kind: String, CaseIterable { case plain, bwrap, mamlab }

    func run() throws {
        // The launches are short and each is waited for: an interruption ends the loop, and the
        // unwinding removes the container folder (and each reaped app its cgroups).
        Interruption.install("mamlaunch bench-launch")
        let containment = try sandbox.decide("benchmark sandboxed launches")
        print(containment.statement)
        let exes = executable.isEmpty ? [(Catalog.toolDirectory as NSString).appendingPathComponent("Hostile")] : executable
        // A folder of root's with a name no one can guess (TrustedPath), removed through descriptors.
        let container = try TrustedPath.uniqueFolder(in: NSTemporaryDirectory(), prefix: "mamlab-bench-\(getpid())-", mode: 0o755)
        defer { try? Sandbox.removeFolder(container) }
        let bwrap = ["/usr/bin/bwrap", "/bin/bwrap"].first { FileManager.default.isExecutableFile(atPath: $0) }
        if bwrap == nil { print("bwrap not installed (apt-get install bubblewrap): no peer to compare with") }

        for exe in exes {
            let isHostile = (exe as NSString).lastPathComponent == "Hostile"
            let args = isHostile ? ["--exit"] : []
            var times: [Kind: [Double]] = [:]
            let kinds = Kind.allCases.filter { $0 != .bwrap || bwrap != nil }
            var round = 0
            while (times[.plain]?.count ?? 0) < iterations && Interruption.received == nil {
                // Blocks in turn, the order rotating each round.
                for k in 0..<kinds.count {
                    let kind = kinds[(k + round) % kinds.count]
                    for _ in 0..<min(block, iterations - (times[kind]?.count ?? 0)) where Interruption.received == nil {
                        let ms: Double
                        switch kind {
                        case .plain: ms = try time { fd in try spawn([exe] + args, fd: fd) }
                        case .bwrap:
                            ms = try time { fd in
                                try spawn([bwrap!, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                                           exe] + args, fd: fd)
                            }
                        case .mamlab:
                            ms = try time { fd in
                                try Sandbox.launch(LaunchConfiguration(bundleID: "bench", executable: exe, arguments: args,
                                                                       containersRoot: container, brokerDescriptor: FileDescriptor(rawValue: fd),
                                                                       allowWeaker: sandbox.allowWeakerSandbox), report: { _ in }).wait
                            }
                        }
                        times[kind, default: []].append(ms)
                    }
                }
                round += 1
            }
            if Interruption.received != nil { return }
            func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }
            let base = median(times[.plain]!)
            print("\((exe as NSString).lastPathComponent) (\(iterations) launches of each kind, blocks of \(block))")
            print(String(format: "  plain spawn          %7.2f ms", base))
            let ours = median(times[.mamlab]!)
            if let wrapped = times[.bwrap].map(median) {
                print(String(format: "  bwrap --unshare-all  %7.2f ms  overhead %6.2f ms", wrapped, wrapped - base))
            }
            print(String(format: "  MAMLab sandbox       %7.2f ms  overhead %6.2f ms", ours, ours - base))
            if let wrapped = times[.bwrap].map(median) {
                print(String(format: "  MAMLab overhead / bwrap overhead: %.2f (target: at most 0.50)", (ours - base) / (wrapped - base)))
            }
        }
    }

    /// Milliseconds from the start of `launch` to the first byte on the app's end of a pair;
    /// then waits for the app (not timed) with what `launch` returned.
    private func time(_ launch: (Int32) throws -> () -> Int32) throws -> Double {
        var pair: [Int32] = [-1, -1]
        guard mam_seqpacket_pair(&pair) == 0 else { throw World.Failure(description: "socketpair: \(String(cString: strerror(errno)))") }
        defer { close(pair[0]) }
        let start = DispatchTime.now().uptimeNanoseconds
        let wait = try launch(pair[1])
        close(pair[1])
        var byte: UInt8 = 0
        _ = recv(pair[0], &byte, 1, 0)
        let end = DispatchTime.now().uptimeNanoseconds
        _ = wait()
        return Double(end - start) / 1e6
    }

    private func spawn(_ argv: [String], fd: Int32) throws -> () -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fd, 3)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        var pid: pid_t = 0
        let cArgs = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        let rc = posix_spawn(&pid, argv[0], &actions, nil, cArgs, environ)
        guard rc == 0 else { throw World.Failure(description: "posix_spawn \(argv[0]): \(String(cString: strerror(rc)))") }
        return {
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            return status
        }
    }
}
