import ArgumentParser
import Dispatch
import Foundation
import Glibc
import Logging
import MAMBroker

@main
struct MAMBrokerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mambroker",
        abstract: "The broker: the only channel between sandboxed apps.",
        discussion: """
            Serves apps on a public SOCK_SEQPACKET socket (a process that connects by itself is an unknown, \
            unmanaged app) and takes apps from the launcher on the launcher socket, with their bundle id and pid. \
            Routes URL opens, the pasteboard, Open-in and share, and storage locations; asks the policy engine \
            for every decision and appends each to DIR/audit.jsonl. What must survive a restart lives in \
            DIR/state.sqlite; saved files live under DIR/locations.

            SIGHUP reloads the tenant atomically (an invalid file keeps the old policy and logs why); SIGTERM and \
            SIGINT shut down cleanly. An invalid tenant at start refuses to start with the file, path and reason.
            """
    )

    @Option(help: ArgumentHelp("The tenant file.", valueName: "FILE"))
    var tenant: String

    @Option(help: ArgumentHelp("The device directory: state, audit log, storage locations, sockets.", valueName: "DIR"))
    var device: String

    @Option(help: ArgumentHelp("The public socket (default: DIR/mambroker.sock).", valueName: "PATH"))
    var socket: String?

    @Option(help: ArgumentHelp("The launcher socket (default: DIR/launcher.sock).", valueName: "PATH"))
    var launcherSocket: String?

    @Option(help: ArgumentHelp("Folder of app manifests (default: the project's Apps/).", valueName: "DIR"))
    var apps: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    func run() throws {
        // Signals are taken by sigwait on the main thread, not by handlers: block them before
        // any thread starts, so every thread inherits the mask and none is lost before the loop.
        var signals = sigset_t()
        sigemptyset(&signals)
        for s in [SIGHUP, SIGTERM, SIGINT] { sigaddset(&signals, s) }
        pthread_sigmask(SIG_BLOCK, &signals, nil)

        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var h = StreamLogHandler.standardError(label: label)
            h.logLevel = level
            return h
        }
        let logger = Logger(label: "mambroker")
        let broker: Broker
        do {
            broker = try Broker(Broker.Configuration(tenantPath: tenant, deviceDirectory: device, publicSocket: socket,
                                                     launcherSocket: launcherSocket, appsDirectory: apps), logger: logger)
            try broker.start()
        } catch {
            FileHandle.standardError.write(Data("mambroker: \(error)\n".utf8))
            throw ExitCode(1)
        }
        print("ready \(broker.configuration.publicSocket) \(broker.configuration.launcherSocket)")
        fflush(nil)
        while true {
            var received: Int32 = 0
            guard sigwait(&signals, &received) == 0 else { continue }
            if received == SIGHUP {
                _ = broker.reload()
            } else {
                broker.stop()
                return
            }
        }
    }
}
