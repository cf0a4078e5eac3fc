import Glibc
import SystemPackage

/// An open descriptor that one owner holds: it closes when its owner lets go of it, and it
/// changes hands only by `consuming` (the compiler refuses a second owner, a use after the
/// hand-over, and a copy), where a bare `Int32` leaks, or closes twice, by a slip.
///
/// The seams between modules take and give these; the raw number is for the system call at
/// hand (`rawValue`), or leaves ownership on purpose (`release()`).
public struct Descriptor: ~Copyable, Sendable {
    public let rawValue: Int32

    /// Takes over `rawValue`: from here on it is closed by this value alone.
    public init(adopting rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// Gives up ownership without closing: the caller (or the C code it hands the number to)
    /// is now the one to close it.
    public consuming func release() -> Int32 {
        let fd = rawValue
        discard self
        return fd
    }

    /// Closes now rather than at the end of the owner's scope.
    public consuming func close() {
        _ = Glibc.close(rawValue)
        discard self
    }

    deinit { _ = Glibc.close(rawValue) }
}

/// A system call that failed: which, on what, and the `errno` it left.
public struct SystemCallError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The call and what it was about (`memfd_create`, `connect to /run/mamlab/broker.sock`).
    public var operation: String
    public var errno: Errno

    public init(_ operation: String, errno: Errno) {
        self.operation = operation
        self.errno = errno
    }

    /// `connect to /run/…: No such file or directory`.
    public var description: String { "\(operation): \(errno)" }
}

/// The one way to make a system call that answers -1 and sets `errno`: an interrupted call
/// (EINTR) is made again, a failure becomes a `SystemCallError` carrying the `errno` it read
/// at once (before anything else can overwrite it).
public func systemCall<Result: BinaryInteger>(_ operation: @autoclosure () -> String,
                                              _ call: () -> Result) throws(SystemCallError) -> Result {
    while true {
        let result = call()
        if result != -1 { return result }
        let code = Glibc.errno
        if code == EINTR { continue }
        throw SystemCallError(operation(), errno: Errno(rawValue: code))
    }
}
