import CMAMWire
import Glibc
import SystemPackage

/// Folders and files that root's processes (the broker, the launcher) keep their secrets in:
/// made by this process's user, or refused with the reason.
///
/// A folder another user of the machine made first is theirs: whatever they left in it (an empty
/// `state.sqlite` of theirs, a socket in `launcher.sock`'s place, a renamed container) becomes
/// part of root's state, and they can read what root writes into files they own. So a path is
/// walked from `/` one component at a time, never following a link another user could have
/// placed, and every folder on the way must be root's or this user's and writable by no one
/// else. The one exception is a parent that is sticky (`/tmp`, `/dev/shm`): its other users
/// cannot rename or remove what root makes in it, so root may make its own folder there, but
/// never use one that is already someone else's.
public enum TrustedPath {
    /// Why a path was refused: the path as given, and what is wrong with which part of it.
    public struct Refusal: Error, CustomStringConvertible, Sendable, Equatable {
        public var path: String
        public var reason: String

        public init(path: String, reason: String) {
            self.path = path
            self.reason = reason
        }

        public var description: String { "\(path): \(reason)" }
    }

    /// At most this many links are followed in one walk (the kernel's own limit).
    static let linkLimit = 40

    /// Whose folders and links this process may trust: root's and its own.
    static func isTrusted(_ uid: uid_t) -> Bool { uid == 0 || uid == geteuid() }

    /// "uid 1000 (alice)", for refusals.
    public static func describe(uid: uid_t) -> String {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return "uid \(uid)" }
        return "uid \(uid) (\(String(cString: name)))"
    }

    /// Opens the folder at `path`, making it (mode `mode`) and its missing parents (mode 0755)
    /// when `create` is set, after checking that no user but root and this one can change it or
    /// any folder on its way. The folder itself must be this user's.
    public static func folder(_ path: String, mode: mode_t = 0o755, create: Bool = true) throws(Refusal) -> Descriptor {
        try walk(path, mode: mode, create: create, asParent: false)
    }

    /// `asParent`: the folder is only where a folder of this user's is made with a fresh name
    /// (`uniqueFolder`), so it may be a sticky one everyone writes (`/tmp`, `/dev/shm`) and
    /// root's rather than this user's, as any folder on the way may.
    private static func walk(_ path: String, mode: mode_t, create: Bool, asParent: Bool) throws(Refusal) -> Descriptor {
        var pending = try components(of: path)
        var current = try open("/", parent: AT_FDCWD, shown: path)
        var links = 0
        var walked: [String] = []
        while let name = pending.first {
            pending.removeFirst()
            let isLast = pending.isEmpty
            var madeHere = false
            if create, mkdirat(current.rawValue, name, isLast ? mode : 0o755) == 0 {
                madeHere = true
            }
            let here = "/" + (walked + [name]).joined(separator: "/")
            let fd = openat(current.rawValue, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if fd < 0 {
                let code = errno
                guard code == ELOOP || code == ENOTDIR else {
                    throw Refusal(path: path, reason: code == ENOENT ? "\(here) does not exist" : "cannot open \(here): \(String(cString: strerror(code)))")
                }
                // A link: followed only when this user or root made it, in a folder where no one
                // else could have replaced it (a sticky folder keeps another user from renaming it).
                var linkStat = stat()
                guard fstatat(current.rawValue, name, &linkStat, AT_SYMLINK_NOFOLLOW) == 0, linkStat.st_mode & S_IFMT == S_IFLNK else {
                    throw Refusal(path: path, reason: "\(here) is not a folder")
                }
                guard isTrusted(linkStat.st_uid) else {
                    throw Refusal(path: path, reason: "\(here) is a link made by \(describe(uid: linkStat.st_uid)); root follows no other user's link")
                }
                links += 1
                guard links <= linkLimit else { throw Refusal(path: path, reason: "more than \(linkLimit) links on the way") }
                let target = try readLink(current.rawValue, name, shown: here, in: path)
                // Walked again from "/": every folder on the way so far was checked and is no
                // link, so ".." in the target climbs exactly as the kernel would.
                var resolved = target.hasPrefix("/") ? [] : walked
                for part in target.split(separator: "/", omittingEmptySubsequences: true) where part != "." {
                    if part == ".." { _ = resolved.popLast() } else { resolved.append(String(part)) }
                }
                current.close()
                current = try open("/", parent: AT_FDCWD, shown: path)
                walked = []
                pending = resolved + pending
                continue
            }
            let next = Descriptor(adopting: fd)
            var st = try status(next.rawValue, shown: here, in: path)
            if madeHere {
                // The process's umask had its say at mkdirat: the folder gets the mode asked for.
                _ = fchmod(next.rawValue, isLast ? mode : 0o755)
                st = try status(next.rawValue, shown: here, in: path)
            }
            if isLast && !asParent {
                guard st.st_uid == geteuid() else {
                    throw Refusal(path: path, reason: "the folder belongs to \(describe(uid: st.st_uid)), not to \(describe(uid: geteuid())); "
                        + "another user's folder may hold files of theirs that would become this one's state. Remove it, or choose a folder of your own")
                }
                guard st.st_mode & 0o022 == 0 else {
                    throw Refusal(path: path, reason: "the folder may be written by others (mode \(String(st.st_mode & 0o7777, radix: 8))); "
                        + "anything in it could be another user's. Make it writable by its owner alone, or choose another")
                }
            } else {
                guard isTrusted(st.st_uid) else {
                    throw Refusal(path: path, reason: "\(here) belongs to \(describe(uid: st.st_uid)), who could replace what is beneath it")
                }
                guard st.st_mode & 0o022 == 0 || st.st_mode & S_ISVTX != 0 else {
                    throw Refusal(path: path, reason: "\(here) may be written by others (mode \(String(st.st_mode & 0o7777, radix: 8))) and is not sticky: "
                        + "anyone could replace what is beneath it")
                }
            }
            current.close()
            current = next
            walked.append(name)
        }
        // "/" itself, when nothing follows it.
        if walked.isEmpty {
            let st = try status(current.rawValue, shown: "/", in: path)
            guard st.st_uid == geteuid(), st.st_mode & 0o022 == 0 else {
                throw Refusal(path: path, reason: "/ is not this user's alone")
            }
        }
        return current
    }

    /// Checks the folder that holds `path` (a socket root binds, say) as `uniqueFolder` checks
    /// its parent: no user but root and this one can change it or any folder on its way, though
    /// it may be a sticky one everyone writes. In another user's folder, they could swap the new
    /// name for a link between root's bind and its chmod, and have root chmod any file.
    public static func checkFolder(holding path: String) throws(Refusal) {
        let parts = try components(of: path)
        try walk("/" + parts.dropLast().joined(separator: "/"), mode: 0o755, create: false, asParent: true).close()
    }

    /// Makes a new folder of mode `mode` with an unguessable name starting with `prefix` in the
    /// trusted folder `parent` (made if missing), and returns its path. Nobody can have made it
    /// first: the name is random and `mkdirat` fails on a name that exists.
    public static func uniqueFolder(in parent: String, prefix: String, mode: mode_t = 0o700) throws(Refusal) -> String {
        let base = try walk(parent, mode: 0o755, create: true, asParent: true).release()
        defer { Glibc.close(base) }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<64 {
            let name = prefix + String(generator.next() as UInt64, radix: 16)
            if mkdirat(base, name, mode) == 0 {
                let fd = openat(base, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                if fd >= 0 {
                    _ = fchmod(fd, mode)
                    Glibc.close(fd)
                }
                return parent.hasSuffix("/") ? parent + name : parent + "/" + name
            }
            guard errno == EEXIST else {
                throw Refusal(path: parent, reason: "cannot make a folder in it: \(String(cString: strerror(errno)))")
            }
        }
        throw Refusal(path: parent, reason: "cannot find a free name for a new folder")
    }

    /// Checks a file root's process opened to keep state in: a regular file of this user's, one
    /// link, writable by no one else. A file another user made, or linked in, is refused.
    public static func checkOwnFile(_ fd: FileDescriptor, shown: String) throws(Refusal) {
        let st = try status(fd.rawValue, shown: shown, in: shown)
        guard st.st_mode & S_IFMT == S_IFREG else { throw Refusal(path: shown, reason: "not a regular file") }
        guard st.st_uid == geteuid() else {
            throw Refusal(path: shown, reason: "the file belongs to \(describe(uid: st.st_uid)), not to \(describe(uid: geteuid())); "
                + "what is written to it would be theirs to read. Remove it")
        }
        guard st.st_nlink == 1 else { throw Refusal(path: shown, reason: "the file has \(st.st_nlink) names (a hard link); remove it") }
        guard st.st_mode & 0o022 == 0 else {
            throw Refusal(path: shown, reason: "the file may be written by others (mode \(String(st.st_mode & 0o7777, radix: 8)))")
        }
    }

    /// The socket's peer's uid (`SO_PEERCRED`), nil when the kernel does not say.
    public static func peerUID(_ socket: FileDescriptor) -> uid_t? {
        let uid = mam_peer_uid(socket.rawValue)
        return uid < 0 ? nil : uid_t(uid)
    }

    /// Refuses a broker socket served by anyone but root or this user: a socket another user
    /// placed at the path would receive the passwords and apps' connections the launcher sends.
    public static func checkBrokerPeer(_ socket: FileDescriptor, path: String) throws(Refusal) {
        guard let uid = peerUID(socket) else {
            throw Refusal(path: path, reason: "cannot tell who serves this socket (SO_PEERCRED: \(String(cString: strerror(errno))))")
        }
        guard isTrusted(uid) else {
            throw Refusal(path: path, reason: "the socket is served by \(describe(uid: uid)), not by root: not a broker of this machine's "
                + "administrator; nothing was sent to it")
        }
    }

    // MARK: - Parts

    /// The path's components, absolute (a relative path is taken from the working folder);
    /// "." and empty components dropped, ".." refused (it would climb out of a checked folder).
    static func components(of path: String) throws(Refusal) -> [String] {
        guard !path.isEmpty, !path.utf8.contains(0) else { throw Refusal(path: path, reason: "not a path") }
        var absolute = path
        if !path.hasPrefix("/") {
            guard let cwd = getcwd(nil, 0) else { throw Refusal(path: path, reason: "cannot tell the working folder") }
            defer { free(cwd) }
            absolute = String(cString: cwd) + "/" + path
        }
        var parts: [String] = []
        for part in absolute.split(separator: "/", omittingEmptySubsequences: true) where part != "." {
            guard part != ".." else { throw Refusal(path: path, reason: "\"..\" is not taken in a path root keeps its state in; give the folder's own path") }
            parts.append(String(part))
        }
        return parts
    }

    private static func open(_ name: String, parent: Int32, shown: String) throws(Refusal) -> Descriptor {
        let fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw Refusal(path: shown, reason: "cannot open \(name): \(String(cString: strerror(errno)))") }
        return Descriptor(adopting: fd)
    }

    private static func status(_ fd: Int32, shown: String, in path: String) throws(Refusal) -> stat {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw Refusal(path: path, reason: "cannot examine \(shown): \(String(cString: strerror(errno)))") }
        return st
    }

    private static func readLink(_ parent: Int32, _ name: String, shown: String, in path: String) throws(Refusal) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlinkat(parent, name, &buffer, buffer.count - 1)
        guard n > 0 else { throw Refusal(path: path, reason: "cannot read the link \(shown): \(String(cString: strerror(errno)))") }
        return String(decoding: buffer.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
