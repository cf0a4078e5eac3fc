import Foundation
import Glibc
import MAMWire

/// Listens on the launcher's broker connection while the app runs, for the broker's request to
/// restart it (docs/PROTOCOL.md, "Launcher hand-off": `restart`). On a request naming this app's
/// pid it kills the app, so that `wait` returns and the launcher starts it again.
final class RestartWatch: @unchecked Sendable {
    private let control: Int32
    private let pid: Int32
    private let lock = NSLock()
    private var stopping = false
    private var requested = false
    private let finished = DispatchSemaphore(value: 0)

    init(control: Int32, pid: Int32) {
        self.control = control
        self.pid = pid
        let thread = Thread { [self] in watch() }
        thread.name = "restart-watch"
        thread.start()
    }

    /// Ends the watch once the app has exited; true when the broker asked for the restart.
    func stop() -> Bool {
        lock.withLock { stopping = true }
        finished.wait()
        return lock.withLock { requested }
    }

    private func watch() {
        defer { finished.signal() }
        let socket = WireSocket(fd: control)
        let buffer = ReceiveBuffer()
        while !lock.withLock({ stopping }) {
            var p = pollfd(fd: control, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 100) > 0 else { continue }
            guard let raw = socket.receiveRaw(dontWait: true, buffer: buffer) else { return }
            if raw.wouldBlock { continue }
            raw.descriptor.map { _ = close($0) }
            // Replies to control messages are not for this launcher; anything undecodable is
            // ignored rather than trusted.
            guard raw.error == nil, case let .restart(pid)? = try? LauncherMessage.decode(raw.bytes), pid == self.pid else { continue }
            lock.withLock { requested = true }
            kill(pid, SIGKILL)
        }
    }
}
