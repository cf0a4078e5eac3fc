import Glibc

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
}
