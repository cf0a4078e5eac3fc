import Glibc
import Synchronization
import SystemPackage

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

    /// Writes an app's output, relayed from its pseudo-terminal, to `fd`, and remembers what it
    /// left open on the terminal's current line (a prompt such as `mail> `). The launcher's own
    /// lines to the same terminal then start on a line of their own and draw that prompt again
    /// after them, instead of trailing it. Returns whether every byte was written.
    @discardableResult
    public static func writeRelayed(_ output: FileDescriptor, _ bytes: [UInt8]) -> Bool {
        let fd = output.rawValue
        return openLine.withLock { line in
            line.fd = fd
            if let end = bytes.lastIndex(of: UInt8(ascii: "\n")) {
                line.text = Array(bytes[(end + 1)...])
            } else {
                line.text += bytes
            }
            line.trim()
            return bytes.withUnsafeBufferPointer { writeAll(fd, $0) }
        }
    }

    /// The app's unfinished line on the terminal its output is relayed to.
    struct OpenLine {
        var fd: Int32 = -1
        var text: [UInt8] = []

        /// A prompt is short; an app that never ends its line keeps only its last bytes, cut
        /// where a character begins (the relay passes whole UTF-8 characters only).
        mutating func trim() {
            guard text.count > 256 else { return }
            var cut = text.count - 256
            while cut < text.count && text[cut] & 0xc0 == 0x80 { cut += 1 }
            text.removeFirst(cut)
        }

        /// Whether a write to `other` lands on the terminal this line is open on.
        func isOpen(on other: Int32) -> Bool {
            guard !text.isEmpty, fd >= 0 else { return false }
            if fd == other { return true }
            var a = stat(), b = stat()
            guard isatty(fd) == 1, isatty(other) == 1, fstat(fd, &a) == 0, fstat(other, &b) == 0 else { return false }
            return a.st_rdev == b.st_rdev
        }
    }
    private static let openLine = Mutex(OpenLine())

    private static func writeAll(_ fd: Int32, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var done = 0
        while done < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
            if n > 0 { done += n } else if n < 0 && errno == EINTR { continue } else { return false }
        }
        return true
    }

    private static func write(_ fd: Int32, _ text: String) {
        var text = text
        let written: Bool = openLine.withLock { line in
            guard line.isOpen(on: fd) else { return text.withUTF8 { writeAll(fd, $0) } }
            // A new line under the app's prompt, the text, and the prompt drawn again.
            let lead: [UInt8] = text.hasPrefix("\n") ? [] : [UInt8(ascii: "\n")]
            return (lead + Array(text.utf8) + line.text).withUnsafeBufferPointer { writeAll(fd, $0) }
        }
        guard !written else { return }
        let handler: (@Sendable (Int32) -> Void)? = lost.withLock { l in
            guard !l.told else { return nil }
            l.told = true
            return l.handler
        }
        handler?(fd)
    }
}
