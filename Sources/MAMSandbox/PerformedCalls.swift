import CMAMSandbox
import Foundation
import Glibc

/// The confined calls and the write-opens, which the supervisor performs itself.
///
/// Answering them SECCOMP_USER_NOTIF_FLAG_CONTINUE after a check would let the kernel read the
/// path from the app's memory and look the descriptor up in its table a second time, after
/// another thread of the app has changed them (a lock on /etc/ld.so.cache, an attribute on a
/// host file: SupervisorRaceTests). So the path is read once and resolved in the app's root to
/// a descriptor, a descriptor argument is duplicated out of the app (pidfd_getfd), that file is
/// judged, and the call is made on it with the app's identity (perform.c); the app gets the
/// result, or for an open the new descriptor (SECCOMP_ADDFD_FLAG_SEND). docs/SANDBOX.md,
/// "Performed calls".
extension Supervisor {
    /// What a confined call comes to once its files are judged.
    enum Verdict {
        /// Refused: the file is outside the app's own (EACCES), reported by name.
        case outside(String)
        /// Failed as the kernel would have failed it (no such file, a bad descriptor...).
        case failed(Int32)
        /// To perform, once the call is known to stand: the result, or -errno.
        case performed(() -> Int)
        /// An open to perform: our descriptor of the file (or -errno), handed to the app.
        case opened(() -> Int, closeOnExec: Bool)
        /// A lock that may have to wait: tried again off the supervisor's thread until it is
        /// taken or the call is gone, so one waiting lock holds up no other call of the app.
        case waits(@Sendable () -> Int)
    }

    /// Descriptors a call holds while it is judged and performed.
    final class Held: @unchecked Sendable {
        var fds: [Int32] = []
        let asker = UnsafeMutablePointer<mam_asker>.allocate(capacity: 1)
        var opened = false
        func keep(_ fd: Int32) -> Int32 {
            if fd >= 0 { fds.append(fd) }
            return fd
        }
        deinit {
            fds.forEach { close($0) }
            if opened { mam_asker_close(asker) }
            asker.deallocate()
        }
    }

    struct Failure: Error { let code: Int32; let path: String? }

    func perform(_ name: String, _ n: mam_notification, pid: Int32) {
        let held = Held()
        let verdict: Verdict
        if mam_asker_open(pid, held.asker) != 0 {
            verdict = .failed(errno == ENOENT ? ESRCH : errno)
        } else {
            held.opened = true
            do {
                verdict = try judge(name, n, pid: pid, held)
            } catch let f as Failure {
                verdict = f.path.map { .outside($0) } ?? .failed(f.code)
            } catch {
                verdict = .failed(EIO)
            }
        }
        // Read and resolved for a thread that has gone (its tid may name another process by now,
        // whose identity and files were taken): no one's call, and nothing is performed.
        guard stillAsked(n) else { return }
        switch verdict {
        case let .outside(path):
            _ = mam_notify_deny(fd, n.id, EACCES)
            let opens = ["open", "openat", "openat2", "creat"].contains(name)
            violation(pid, opens ? "\(name) for writing" : name, path, .denied)
        case let .failed(code):
            _ = mam_notify_deny(fd, n.id, code)
        case let .performed(call):
            answer(n.id, call())
        case let .opened(call, cloexec):
            let file = call()
            guard file >= 0 else { return answer(n.id, file) }
            if mam_notify_send_fd(fd, n.id, Int32(file), cloexec ? 1 : 0) < 0 { _ = mam_notify_deny(fd, n.id, errno) }
            close(Int32(file))
        case let .waits(attempt):
            let listener = fd
            let id = n.id
            let t = Thread {
                _ = held  // its descriptors live until the lock is answered
                guard mam_private_fs() == 0 else { _ = mam_notify_deny(listener, id, EPERM); return }
                var pause: useconds_t = 1000
                while true {
                    let r = attempt()
                    if r != -Int(EAGAIN) && r != -Int(EACCES) {
                        _ = mam_notify_answer(listener, id, Int64(max(r, 0)), r < 0 ? Int32(-r) : 0)
                        return
                    }
                    // The app's thread gone (killed: a waiting call cannot be interrupted otherwise).
                    guard mam_notify_valid(listener, id) != 0 else { return }
                    usleep(pause)
                    pause = min(pause * 2, 50_000)
                }
            }
            t.name = "mam-lock-wait-\(pid)"
            t.start()
        }
    }

    private func answer(_ id: UInt64, _ result: Int) {
        _ = mam_notify_answer(fd, id, Int64(max(result, 0)), result < 0 ? Int32(-result) : 0)
    }

    // MARK: judging

    private func judge(_ name: String, _ n: mam_notification, pid: Int32, _ held: Held) throws -> Verdict {
        let a = UnsafePointer(held.asker)
        func arg(_ i: Int) -> UInt64 { argument(n, i) }
        func int(_ i: Int) -> Int32 { Int32(truncatingIfNeeded: arg(i)) }
        func text(_ i: Int) throws -> String {
            guard arg(i) != 0, let s = string(pid, arg(i)) else { throw Failure(code: EFAULT, path: nil) }
            return s
        }
        /// The app's descriptor, duplicated, and judged.
        func descriptor(_ number: Int32, judged: Bool = true) throws -> Int32 {
            let d = held.keep(mam_asker_descriptor(a, number))
            guard d >= 0 else { throw Failure(code: EBADF, path: nil) }
            if judged { try own(d) }
            return d
        }
        /// The file a path names (from `dirfd`), judged.
        func object(_ dirfd: Int32, _ path: String, follows: Bool, resolve: UInt64 = 0) throws -> Int32 {
            let d = held.keep(mam_asker_resolve(a, dirfd, path, follows ? 1 : 0, resolve))
            guard d >= 0 else { throw unresolved(errno, path, from: dirfd, held) }
            try own(d)
            return d
        }
        /// The folder a name is made or removed in, judged; and the name.
        func folder(_ dirfd: Int32, _ path: String, dots: Int32) throws -> (Int32, String) {
            var buffer = [CChar](repeating: 0, count: 4096)
            let d = held.keep(mam_asker_parent(a, dirfd, path, 0, &buffer, buffer.count))
            guard d >= 0 else { throw errno == EINVAL ? Failure(code: dots, path: nil) : unresolved(errno, path, from: dirfd, held) }
            let leaf = cText(buffer)
            try ownFolder(d, leaf)
            return (d, leaf)
        }
        func done(_ call: @escaping @autoclosure () -> Int) -> Verdict { .performed(call) }

        switch name {
        case "flock":
            let d = try descriptor(int(0))
            let op = int(1)
            if op & LOCK_NB == 0 && op & LOCK_UN == 0 {
                return .waits { [held] in mam_do_flock(held.asker, d, op) }
            }
            return done(mam_do_flock(a, d, op))
        case "fcntl":
            return try lock(n, pid: pid, descriptor(int(0)), held)
        case "inotify_add_watch":
            let inotify = try descriptor(int(0), judged: false)
            let mask = UInt32(truncatingIfNeeded: arg(2))
            let file = try object(AT_FDCWD, text(1), follows: mask & UInt32(IN_DONT_FOLLOW) == 0)
            // A watch on a link itself cannot be placed through the descriptor's /proc link.
            if isLink(file) { return .failed(EACCES) }
            return done(mam_do_inotify(a, inotify, file, mask))
        case "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr":
            let file = name.hasPrefix("f") ? try descriptor(int(0)) : try object(AT_FDCWD, text(0), follows: !name.hasPrefix("l"))
            var attribute = [CChar](repeating: 0, count: 256)
            guard arg(1) != 0, mam_read_string(pid, arg(1), &attribute, attribute.count) >= 0 else { return .failed(EFAULT) }
            guard strlen(attribute) < 255 else { return .failed(ERANGE) }
            // Extended attributes of the user namespace are not allowed on a link; the others need
            // capabilities the app lacks.
            if isLink(file) { return .failed(EPERM) }
            if name.hasSuffix("removexattr") { return done(mam_do_xattr(a, file, attribute, nil, 0, 0, 1)) }
            let size = Int(arg(3))
            guard size <= 65536 else { return .failed(E2BIG) }
            var value = [UInt8](repeating: 0, count: size)
            if size > 0 && mam_read_memory(pid, arg(2), &value, size) < 0 { return .failed(EFAULT) }
            return done(mam_do_xattr(a, file, attribute, value, size, int(4), 0))
        case "utimensat", "futimesat", "utimes", "utime":
            return try times(name, n, pid: pid, a, object: object, descriptor: { try descriptor($0) })
        case "truncate":
            let file = try object(AT_FDCWD, text(0), follows: true)
            let length = Int64(Int(bitPattern: UInt(arg(1))))
            // The app's own file-size limit, which the supervisor does not have.
            let limit = mam_file_size_limit(pid)
            if limit >= 0 && length > limit { return .failed(EFBIG) }
            return done(mam_do_truncate(a, file, length))
        case "mkdir", "mkdirat":
            let at = name == "mkdir" ? 0 : 1
            let (dir, leaf) = try folder(at == 0 ? AT_FDCWD : int(0), text(at), dots: EEXIST)
            return done(mam_do_mkdir(a, dir, leaf, mode_t(truncatingIfNeeded: arg(at + 1))))
        case "mknod", "mknodat":
            let at = name == "mknod" ? 0 : 1
            let (dir, leaf) = try folder(at == 0 ? AT_FDCWD : int(0), text(at), dots: EEXIST)
            return done(mam_do_mknod(a, dir, leaf, mode_t(truncatingIfNeeded: arg(at + 1)), dev_t(arg(at + 2))))
        case "rmdir", "unlink", "unlinkat":
            let at = name == "unlinkat" ? 1 : 0
            let flags = name == "rmdir" ? AT_REMOVEDIR : name == "unlinkat" ? int(2) : 0
            let (dir, leaf) = try folder(at == 0 ? AT_FDCWD : int(0), text(at), dots: flags & AT_REMOVEDIR != 0 ? EINVAL : EISDIR)
            return done(mam_do_unlink(a, dir, leaf, flags))
        case "rename", "renameat", "renameat2":
            let two = name == "rename"
            let (from, fromName) = try folder(two ? AT_FDCWD : int(0), text(two ? 0 : 1), dots: EBUSY)
            let (to, toName) = try folder(two ? AT_FDCWD : int(2), text(two ? 1 : 3), dots: EBUSY)
            return done(mam_do_rename(a, from, fromName, to, toName, name == "renameat2" ? UInt32(truncatingIfNeeded: arg(4)) : 0))
        case "link", "linkat":
            let two = name == "link"
            let flags = two ? 0 : int(4)
            let oldPath = try text(two ? 0 : 1)
            let file = oldPath.isEmpty && flags & atEmptyPath != 0
                ? try descriptor(int(0))
                : try object(two ? AT_FDCWD : int(0), oldPath, follows: flags & AT_SYMLINK_FOLLOW != 0)
            let (dir, leaf) = try folder(two ? AT_FDCWD : int(2), text(two ? 1 : 3), dots: EEXIST)
            return done(mam_do_link(a, file, dir, leaf))
        case "symlink", "symlinkat":
            let target = try text(0)
            let at = name == "symlink" ? 1 : 2
            let (dir, leaf) = try folder(at == 1 ? AT_FDCWD : int(1), text(at), dots: EEXIST)
            return done(mam_do_symlink(a, target, dir, leaf))
        default:
            return try performOpen(name, n, pid: pid, held, a)
        }
    }

    /// A path that could not be resolved. One through a /proc magic link (which could name
    /// anything) is refused as outside; one that does not exist (or is hidden from the app) is
    /// still judged, by its folder or else as written, so that an attempt outside is reported by
    /// name; anything else fails as the kernel would have failed it.
    private func unresolved(_ code: Int32, _ path: String, from dirfd: Int32, _ held: Held) -> Failure {
        if code == ELOOP || code == EXDEV { return Failure(code: EACCES, path: path) }
        guard code == ENOENT || code == EACCES || code == ENOTDIR else { return Failure(code: code, path: nil) }
        var buffer = [CChar](repeating: 0, count: 4096)
        let dir = held.keep(mam_asker_parent(held.asker, dirfd, path, 0, &buffer, buffer.count))
        if dir >= 0 {
            do { try ownFolder(dir, cText(buffer)) } catch let f as Failure { return f } catch {}
            return Failure(code: code, path: nil)
        }
        var base = "/"
        if !path.hasPrefix("/") {
            let d = dirfd == AT_FDCWD ? mam_asker_cwd(held.asker) : held.keep(mam_asker_descriptor(held.asker, dirfd))
            if d >= 0, mam_descriptor_path(d, &buffer, buffer.count) >= 0 { base = cText(buffer) }
        }
        let written = ((base as NSString).appendingPathComponent(path) as NSString).standardizingPath
        return isOwn(written) ? Failure(code: code, path: nil) : Failure(code: EACCES, path: written)
    }

    private func own(_ d: Int32) throws {
        var buffer = [CChar](repeating: 0, count: 4096)
        let path = mam_descriptor_path(d, &buffer, buffer.count) >= 0 ? cText(buffer) : nil
        guard isOwn(path) else { throw Failure(code: EACCES, path: path ?? "an unnamed file") }
    }

    /// A folder the app makes or removes `leaf` in (reported with it).
    private func ownFolder(_ d: Int32, _ leaf: String?) throws {
        var buffer = [CChar](repeating: 0, count: 4096)
        let path = mam_descriptor_path(d, &buffer, buffer.count) >= 0 ? cText(buffer) : nil
        guard let path, path == container || beneath(path, container) else {
            let name = leaf.map { String($0.reversed().drop { $0 == "/" }.reversed()) }
            throw Failure(code: EACCES, path: (path ?? "an unnamed folder") + (name.map { (path == "/" ? "" : "/") + $0 } ?? ""))
        }
    }

    private func isLink(_ d: Int32) -> Bool {
        var st = stat()
        return fstat(d, &st) == 0 && st.st_mode & S_IFMT == S_IFLNK
    }

    /// fcntl's record locks, taken as open-file-description locks on the app's own open file.
    ///
    /// A POSIX record lock belongs to the process that takes it, so the supervisor cannot take
    /// one for the app; and letting the kernel run the app's call (CONTINUE) would look the
    /// descriptor up again, which another thread can dup2 onto a system file. The lock is
    /// taken on the duplicate instead, which is the app's own open file description: it
    /// conflicts with other processes' locks as the app's would, and ends when the app's last
    /// descriptor of that open file closes (docs/SANDBOX.md says where this differs).
    private func lock(_ n: mam_notification, pid: Int32, _ d: Int32, _ held: Held) throws -> Verdict {
        let a = held.asker
        let command = Int32(truncatingIfNeeded: argument(n, 1))
        let address = argument(n, 2)
        var l = flock()
        guard mam_read_memory(pid, address, &l, MemoryLayout<flock>.size) >= 0 else { return .failed(EFAULT) }
        let ofd: Int32 = [5: 36, 6: 37, 7: 38][command] ?? command  // F_GETLK/F_SETLK/F_SETLKW to F_OFD_*
        switch ofd {
        case 36:
            let asked = l
            return .performed {
                var l = asked
                let r = mam_do_ofd_lock(a, d, 36, &l)
                // The holder's pid, when it is another process's record lock, is a host pid.
                if l.l_pid > 0 { l.l_pid = -1 }
                if r == 0 && mam_write_memory(pid, address, &l, MemoryLayout<flock>.size) < 0 { return -Int(EFAULT) }
                return r
            }
        case 38:
            let copy = l
            return .waits { [held] in
                var l = copy
                return mam_do_ofd_lock(held.asker, d, 37, &l)
            }
        default:
            let asked = l
            return .performed {
                var l = asked
                return mam_do_ofd_lock(a, d, 37, &l)
            }
        }
    }

    private func times(_ name: String, _ n: mam_notification, pid: Int32, _ a: UnsafePointer<mam_asker>,
                       object: (Int32, String, Bool, UInt64) throws -> Int32, descriptor: (Int32) throws -> Int32) throws -> Verdict {
        func arg(_ i: Int) -> UInt64 { argument(n, i) }
        let at = name == "utimensat" || name == "futimesat"
        let pathArg = at ? 1 : 0
        let flags = name == "utimensat" ? Int32(truncatingIfNeeded: arg(3)) : 0
        let file: Int32
        let path = arg(pathArg) == 0 ? nil : string(pid, arg(pathArg))
        if at && (arg(pathArg) == 0 || (path == "" && flags & atEmptyPath != 0)) {
            // utimensat(fd, NULL, ...) is futimens: the descriptor's own file.
            file = try descriptor(Int32(truncatingIfNeeded: arg(0)))
        } else {
            guard let path else { return .failed(EFAULT) }
            file = try object(at ? Int32(truncatingIfNeeded: arg(0)) : AT_FDCWD, path, flags & AT_SYMLINK_NOFOLLOW == 0, 0)
        }
        let address = arg(at ? 2 : 1)
        guard address != 0 else { return .performed { mam_do_utimens(a, file, nil) } }
        var t = [timespec(), timespec()]
        switch name {
        case "utimensat":
            guard mam_read_memory(pid, address, &t, 2 * MemoryLayout<timespec>.size) >= 0 else { return .failed(EFAULT) }
        case "utime":
            var b = [Int](repeating: 0, count: 2)  // struct utimbuf: access and modification seconds
            guard mam_read_memory(pid, address, &b, 2 * MemoryLayout<Int>.size) >= 0 else { return .failed(EFAULT) }
            t = b.map { timespec(tv_sec: $0, tv_nsec: 0) }
        default:
            var v = [timeval(), timeval()]
            guard mam_read_memory(pid, address, &v, 2 * MemoryLayout<timeval>.size) >= 0 else { return .failed(EFAULT) }
            guard v.allSatisfy({ $0.tv_usec >= 0 && $0.tv_usec < 1_000_000 }) else { return .failed(EINVAL) }
            t = v.map { timespec(tv_sec: $0.tv_sec, tv_nsec: $0.tv_usec * 1000) }
        }
        let times = t
        return .performed {
            var t = times
            return mam_do_utimens(a, file, &t)
        }
    }
}

extension Supervisor {
    /// An open that may write, create or truncate: the file it names (or, for a new file, the
    /// folder it is made in) is judged, and then opened or created by the supervisor with the
    /// app's identity and umask, and the descriptor handed over. Nothing on the way is taken
    /// from the app's memory a second time.
    func performOpen(_ name: String, _ n: mam_notification, pid: Int32, _ held: Held, _ a: UnsafePointer<mam_asker>) throws -> Verdict {
        func arg(_ i: Int) -> UInt64 { argument(n, i) }
        func int(_ i: Int) -> Int32 { Int32(truncatingIfNeeded: arg(i)) }
        let pathArg = name == "openat" || name == "openat2" ? 1 : 0
        guard arg(pathArg) != 0, var path = string(pid, arg(pathArg)) else { return .failed(EFAULT) }
        let dirfd = pathArg == 1 ? int(0) : AT_FDCWD
        var flags: Int32
        var mode: mode_t
        var resolve: UInt64 = 0
        switch name {
        case "creat": (flags, mode) = (O_CREAT | O_WRONLY | O_TRUNC, mode_t(truncatingIfNeeded: arg(1)))
        case "open": (flags, mode) = (int(1), mode_t(truncatingIfNeeded: arg(2)))
        case "openat": (flags, mode) = (int(2), mode_t(truncatingIfNeeded: arg(3)))
        default:
            // struct open_how, read once: flags, mode, resolve.
            guard arg(3) >= 24 else { return .failed(EINVAL) }
            var how = [UInt64](repeating: 0, count: 3)
            guard mam_read_memory(pid, arg(2), &how, 24) >= 0 else { return .failed(EFAULT) }
            guard how[0] >> 32 == 0 else { return .failed(EINVAL) }
            (flags, mode, resolve) = (Int32(truncatingIfNeeded: how[0]), mode_t(truncatingIfNeeded: how[1]), how[2])
        }
        guard !path.isEmpty else { return .failed(ENOENT) }
        let cloexec = flags & O_CLOEXEC != 0
        func opened(_ call: @escaping @autoclosure () -> Int) -> Verdict { .opened(call, closeOnExec: cloexec) }
        if flags & 0o20_000_000 != 0 {  // __O_TMPFILE: an unnamed file in the folder named
            let d = held.keep(mam_asker_resolve(a, dirfd, path, 1, resolve))
            guard d >= 0 else { throw unresolved(errno, path, from: dirfd, held) }
            try ownFolder(d, nil)
            return opened(mam_do_reopen(a, d, flags, mode))
        }
        let creates = flags & O_CREAT != 0
        let exclusive = creates && flags & O_EXCL != 0
        let follows = flags & O_NOFOLLOW == 0 && !exclusive
        var base: Int32?  // after a dangling link: the link's folder
        for _ in 0..<8 {
            let d = held.keep(base.map { mam_asker_resolve_at(a, $0, path, follows ? 1 : 0, resolve) }
                              ?? mam_asker_resolve(a, dirfd, path, follows ? 1 : 0, resolve))
            if d >= 0 {
                if exclusive { return .failed(EEXIST) }
                if isLink(d) && flags & oPath == 0 { return .failed(ELOOP) }
                try own(d)
                return opened(mam_do_reopen(a, d, flags, mode))
            }
            let code = errno
            guard code == ENOENT && creates else { throw base == nil ? unresolved(code, path, from: dirfd, held) : Failure(code: code, path: nil) }
            var buffer = [CChar](repeating: 0, count: 4096)
            let dir = held.keep(base.map { mam_asker_parent_at(a, $0, path, resolve, &buffer, buffer.count) }
                                ?? mam_asker_parent(a, dirfd, path, resolve, &buffer, buffer.count))
            guard dir >= 0 else {
                let code = errno
                if code == EINVAL { throw Failure(code: EISDIR, path: nil) }
                throw base == nil ? unresolved(code, path, from: dirfd, held) : Failure(code: code, path: nil)
            }
            let leaf = cText(buffer)
            try ownFolder(dir, leaf)
            // A dangling link at the name, which the kernel follows to create its target: its
            // target is taken from the link's folder, and judged again. (One made there after
            // this look makes the creation fail ELOOP: no link is followed then.)
            var target = [CChar](repeating: 0, count: 4096)
            let length = follows ? readlinkat(dir, leaf, &target, target.count - 1) : -1
            guard length > 0 else { return opened(mam_do_create(a, dir, leaf, flags, mode)) }
            path = cText(target)
            base = dir
        }
        return .failed(ELOOP)
    }
}
