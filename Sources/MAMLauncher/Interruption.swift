import Dispatch
import Foundation
import Glibc
import MAMWire

/// What a command started must not outlive it. A command that starts processes registers a
/// stopper for each (its broker, its apps); SIGINT, SIGTERM or SIGHUP (Ctrl-C, `kill`, a closed
/// terminal) says "interrupted" and runs the stoppers, and the command then unwinds the way it
/// does on a normal exit: it reaps its apps (which removes their cgroups), stops its broker and
/// removes its folders in its own `defer`s, and `MAMLaunch.main` exits with 128 + the signal.
///
/// The signals are taken from a dispatch source rather than a handler, so a stopper may lock,
/// allocate and write; exiting from the handler instead would leave the folders and cgroups the
/// unwinding removes.
package enum Interruption {
    private struct State {
        var signal: Int32?
        var stoppers: [Int: @Sendable () -> Void] = [:]
        var next = 0
    }

    private static let state = Locked(State())
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []

    package static let signals = [SIGINT, SIGTERM, SIGHUP]

    /// Takes the three signals for the life of the command. Called once, before anything starts.
    package static func install(_ command: String) {
        guard sources.isEmpty else { return }
        // A terminal closed under the command fails its next write (EIO) before, or instead of,
        // the hangup reaching it; a reader of its output that went away fails it too (EPIPE).
        // Either ends the run as a hangup does, everything it started stopped.
        StandardStreams.whenLost { _ in interrupt(SIGHUP, command: command) }
        for sig in signals {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { interrupt(sig, command: command) }
            source.resume()
            sources.append(source)
        }
    }

    /// Records `sig` as the command's interruption without the stoppers (a command that stops its
    /// own children, as the broker bench does), so `MAMLaunch.main` still exits 128 + the signal
    /// when the command's thread fails because of it before the handler has exited.
    package static func note(_ sig: Int32) {
        state.update { s in if s.signal == nil { s.signal = sig } }
    }

    /// The signal that interrupted the command, if one did.
    package static var received: Int32? { state.value.signal }

    /// The first signal stops everything; a later one finds nothing left to stop.
    private static func interrupt(_ sig: Int32, command: String) {
        var stoppers: [@Sendable () -> Void] = []
        var first = false
        state.update { s in
            guard s.signal == nil else { return }
            first = true
            s.signal = sig
            stoppers = s.stoppers.sorted { $0.key > $1.key }.map(\.value)
        }
        guard first else { return }
        StandardStreams.writeError("\n\(command): interrupted (\(name(sig))); stopping what it started\n")
        // Last started, first stopped: apps before the broker they talk to.
        for stop in stoppers { stop() }
    }

    /// Registers `stop` until `release`: it is run on an interruption, at once if one has come.
    /// Released before the process it stops is reaped, so it never signals a reused pid.
    package static func own(_ stop: @escaping @Sendable () -> Void) -> Int {
        var token = 0
        var late = false
        state.update { s in
            s.next += 1
            token = s.next
            if s.signal != nil { late = true } else { s.stoppers[token] = stop }
        }
        if late { stop() }
        return token
    }

    package static func release(_ token: Int) {
        state.update { $0.stoppers[token] = nil }
    }

    package static func name(_ sig: Int32) -> String {
        switch sig {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        case SIGHUP: "SIGHUP"
        default: "signal \(sig)"
        }
    }

    /// The command's exit status when it was interrupted: 128 + the signal, as a shell reports it.
    package static func exitIfInterrupted() {
        if let sig = received { Foundation.exit(128 + sig) }
    }
}
