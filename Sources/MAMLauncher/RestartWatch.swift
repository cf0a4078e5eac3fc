import Foundation
import Glibc
import MAMWire
import SystemPackage

/// Listens on the launcher's broker connection while the app runs, for the broker's request to
/// restart it (docs/PROTOCOL.md, "Launcher hand-off": `restart`). On a request naming this app's
/// pid it kills the app, so that `wait` returns and the launcher starts it again.
///
/// The race it closes: an app that leaves the restart to the SDK answers the broker and may exit
/// at once (a script's next step is `bye`); its exit can reach the launcher before the broker has
/// read that answer and sent the request. So once the app has exited the watch listens on until
/// the broker says it has let the app go (`ended`, sent after any `restart` for it), for at most
/// `drainLimit`: a broker that went silent cannot hold the launcher.
package final class RestartWatch: @unchecked Sendable {
    private let control: Int32
    private let pid: Int32
    private let lock = NSLock()
    private var appExited = false
    private var exitedAt = Date.distantFuture
    private var requested = false
    private var refused: String?
    private let finished = DispatchSemaphore(value: 0)
    static let drainLimit: TimeInterval = 2

    /// Watches `control`, the launcher's socket to the broker, which it borrows: the launcher
    /// closes it once the watch has stopped.
    package init(control: FileDescriptor, pid: Int32) {
        self.control = control.rawValue
        self.pid = pid
        let thread = Thread { [self] in watch() }
        thread.name = "restart-watch"
        thread.start()
    }

    /// Ends the watch once the app has exited (before it is reaped, so its pid is still its
    /// own); true when the broker asked for the restart.
    package func stop() -> Bool {
        lock.withLock {
            appExited = true
            exitedAt = Date()
        }
        finished.wait()
        return lock.withLock { requested }
    }

    /// Why the broker refused to take the app over (a typo in --user), once the watch stopped.
    package var refusal: String? { lock.withLock { refused } }

    private func watch() {
        defer { finished.signal() }
        // Its own duplicate of the borrowed socket, closed when the watch ends; none (the
        // launcher is out of descriptors) reads as a broker gone.
        let socket = try? WireSocket(duplicating: FileDescriptor(rawValue: control))
        let buffer = ReceiveBuffer()
        var sessionEnded = false
        while true {
            let (exited, since) = lock.withLock { (appExited, exitedAt) }
            if exited && (sessionEnded || Date().timeIntervalSince(since) > Self.drainLimit) { return }
            var p = pollfd(fd: control, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, exited ? 20 : 100) > 0 else { continue }
            guard let raw = socket?.receiveRaw(dontWait: true, buffer: buffer) else {
                // The broker hung up while the app runs and before it let the app go: nobody
                // serves the app's connection, so the app goes and the launch says why.
                let orphaned = lock.withLock { () -> Bool in
                    guard !appExited && !sessionEnded else { return false }
                    refused = "the broker did not take its connection, or stopped serving it (it closed the launcher connection); the app was stopped"
                    return true
                }
                if orphaned { kill(pid, SIGKILL) }
                return
            }
            if raw.wouldBlock { continue }
            // This connection sends no control messages, so a refusal answers the hand-off: the app
            // was not taken over and goes. Anything undecodable is ignored rather than trusted.
            guard raw.error == nil, let message = try? LauncherMessage.decode(raw.bytes) else { continue }
            switch message {
            case let .restart(pid) where pid == self.pid:
                lock.withLock { requested = true }
                kill(pid, SIGKILL)
                return
            case let .controlReply(false, detail):
                lock.withLock { refused = detail }
                kill(pid, SIGKILL)
                return
            case let .ended(pid) where pid == self.pid:
                // Nothing more will come for this app (while it runs: it closed its connection
                // early; its exit then ends the watch at once).
                sessionEnded = true
            default: continue
            }
        }
    }
}
