import CMAMSandbox
import Foundation
import Glibc
import MAMWire
import Synchronization
import SystemPackage

/// A pseudo-terminal the launcher owns, for an app run from a terminal.
///
/// The app never holds the user's terminal: a terminal descriptor lets a process type into the
/// shell that reads it (TIOCSTI) or rewrite the screen with escape sequences. The app gets the
/// secondary side of a fresh pseudo-terminal instead (not as its controlling terminal); the
/// launcher copies the user's input to it and the app's output, sanitised, to its own output.
public final class TerminalRelay: @unchecked Sendable {
    /// The secondary side: the app's standard input, output and error, the relay's own until
    /// `closeAppSide()` (a launch borrows it; the child gets its own copies).
    public var appSide: FileDescriptor { FileDescriptor(rawValue: secondary.load(ordering: .relaxed)) }
    /// -1 once closed.
    private let secondary: Atomic<Int32>
    private let primary: Int32
    private var output: Thread?
    private let done = DispatchSemaphore(value: 0)

    public init() throws {
        var p: Int32 = -1, a: Int32 = -1
        guard mam_open_pty(&p, &a) == 0 else {
            throw LaunchError("cannot open a pseudo-terminal for the app: \(String(cString: strerror(errno)))")
        }
        primary = p
        secondary = Atomic(a)
        // The user's terminal already echoes and edits lines; the app's side must not echo them
        // again, nor turn "\n" into "\r\n".
        var t = termios()
        tcgetattr(a, &t)
        t.c_lflag &= ~tcflag_t(ECHO | ECHONL)
        t.c_oflag &= ~tcflag_t(OPOST)
        tcsetattr(a, TCSANOW, &t)
    }

    /// Closes the relay's copy of the app's side, once (the launcher keeps it for restarts):
    /// when the app's copies are gone too, the relay sees the end.
    public func closeAppSide() {
        let a = secondary.exchange(-1, ordering: .acquiringAndReleasing)
        if a >= 0 { _ = close(a) }
    }

    /// Starts copying: `input` to the app (nil: the app's input is not this terminal), the app's
    /// output to `output`. Call once the app runs and the launcher has closed its copy of `appSide`.
    /// Both are borrowed for as long as the app runs and never closed here.
    public func start(input: FileDescriptor? = .standardInput, output: FileDescriptor = .standardOutput) {
        if let input { feed(from: input.rawValue) }
        let out = output.rawValue
        let primary = self.primary
        let done = self.done
        let relay = Thread {
            var sanitizer = OutputSanitizer()
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = read(primary, &buffer, buffer.count)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }  // EIO: every holder of the app's side has closed it
                StandardStreams.writeRelayed(FileDescriptor(rawValue: out), sanitizer.clean(buffer[0..<n]))
            }
            done.signal()
        }
        self.output = relay
        relay.start()
    }

    private func feed(from input: Int32) {
        let primary = self.primary
        let feeder = Thread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = read(input, &buffer, buffer.count)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 {
                    // End of the user's input: an end-of-file character for the app's side.
                    var eof: UInt8 = 4
                    _ = write(primary, &eof, 1)
                    return
                }
                if !writeAll(primary, buffer[0..<n]) { return }
            }
        }
        feeder.start()
    }

    /// Waits until the app's side is closed by everything that held it and the output is copied.
    public func finish() {
        closeAppSide()
        if output != nil { done.wait() }
        close(primary)
    }
}

private func writeAll(_ fd: Int32, _ bytes: some Collection<UInt8>) -> Bool {
    var rest = Array(bytes)[...]
    while !rest.isEmpty {
        let n = rest.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { return false }
        rest = rest.dropFirst(n)
    }
    return true
}

/// Makes an app's output safe to show on a terminal: every control character but newline and
/// tab, DEL, and the C1 controls become `?` — both their UTF-8 form (U+0080–U+009F) and the raw
/// 8-bit bytes 0x80–0x9F, which a terminal not in UTF-8 mode obeys (0x9B is CSI). An escape
/// sequence can move the cursor, retitle the window, rewrite what the user sees, or on some
/// terminals answer back into their input. So the output is read as UTF-8: a byte that is not
/// part of a well-formed character becomes `?`, and only whole characters pass.
public struct OutputSanitizer: Sendable {
    /// The bytes of a character begun at the end of the previous chunk.
    private var pending: [UInt8] = []
    /// How many continuation bytes the pending character still needs.
    private var needed = 0

    public init() {}

    public mutating func clean(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        let question = UInt8(ascii: "?")
        for b in bytes {
            if needed > 0 {
                if (0x80...0xbf).contains(b) {
                    pending.append(b)
                    needed -= 1
                    if needed == 0 {
                        // U+0080–U+009F: a C1 control in its UTF-8 form.
                        out += pending[0] == 0xc2 && pending[1] <= 0x9f ? [question] : pending
                        pending.removeAll()
                    }
                    continue
                }
                // A character cut short: its bytes are not text.
                out.append(question)
                pending.removeAll()
                needed = 0
            }
            switch b {
            case 0x0a, 0x09: out.append(b)
            case 0x00..<0x20, 0x7f: out.append(question)
            case 0x20..<0x7f: out.append(b)
            case 0xc2...0xdf: pending = [b]; needed = 1
            case 0xe0...0xef: pending = [b]; needed = 2
            case 0xf0...0xf4: pending = [b]; needed = 3
            // Raw 0x80–0x9F (8-bit C1 controls), a continuation byte with no lead, or a byte UTF-8 never uses.
            default: out.append(question)
            }
        }
        return out
    }
}
