import Glibc
import Synchronization

/// The standard streams of a root process that runs apps.
public enum StandardStreams {
    /// Opens the null device on each of descriptors 0, 1 and 2 that is closed, before anything
    /// else opens a file. A program started with one closed (`mamlaunch run … 0<&-`) would
    /// otherwise give that number to the next file it opens (libdispatch's epoll), and whatever
    /// later hands "standard input" on, to an app among others, would hand that file instead:
    /// an app given the launcher's epoll could add its own descriptors to it with data the
    /// launcher's libdispatch then follows as a pointer.
    public static func ensureOpen() {
        for fd in Int32(0)...2 where fcntl(fd, F_GETFD) < 0 && errno == EBADF {
            let null = open("/dev/null", O_RDWR)
            // open returns the lowest free number: this one, the ones below being open.
            if null >= 0 && null != fd {
                dup2(null, fd)
                close(null)
            }
        }
    }

    /// Writes `text` to standard error, whoever reads it or not. A terminal that has gone (EIO),
    /// a reader that has gone (EPIPE; the commands ignore SIGPIPE) or a full device fails the
    /// write, and it is dropped: Foundation's `FileHandle.write` would end the process there,
    /// before it stopped what it started. The first failure is told to `whenLost`.
    public static func writeError(_ text: String) { write(2, text) }

    /// The same for standard output.
    public static func writeOutput(_ text: String) { write(1, text) }

    /// Called once, with the descriptor, when a write to a standard stream first fails: the
    /// launcher takes its terminal going away as a hangup.
    public static func whenLost(_ handler: @escaping @Sendable (Int32) -> Void) {
        lost.withLock { $0.handler = handler }
    }

    private struct Lost { var handler: (@Sendable (Int32) -> Void)?; var told = false }
    private static let lost = Mutex(Lost())

    private static func write(_ fd: Int32, _ text: String) {
        var text = text
        let failed: Bool = text.withUTF8 { bytes in
            var done = 0
            while done < bytes.count {
                let n = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
                if n > 0 { done += n } else if n < 0 && errno == EINTR { continue } else { return true }
            }
            return false
        }
        guard failed else { return }
        let handler: (@Sendable (Int32) -> Void)? = lost.withLock { l in
            guard !l.told else { return nil }
            l.told = true
            return l.handler
        }
        handler?(fd)
    }
}
