import Foundation
import Glibc

/// The encrypted documents the broker made for each receiving app that are still held
/// somewhere, so that one receiver cannot make the broker fill the machine's memory.
///
/// A ciphertext is a memfd the broker wrote: its pages are charged to the broker's cgroup, not
/// the receiver's, so the receiver's memory limit does not bound them (a receiver held 1.25 GiB
/// of them beside a 1 GiB limit). The broker keeps a read-only open of each one it made, sends
/// the receiver another, and asks the kernel whether any open but its own is left: a write
/// lease is granted only when no other read-only open (nor a mapping, which holds one) exists. What every holder
/// has let go of no longer counts; while a receiver holds more than its quota, the broker makes
/// no more ciphertext for it and says why.
///
/// Used on the crypto lane only; the lock is for tests and safety.
final class HeldCiphertexts: @unchecked Sendable {
    private struct Held {
        let fd: Int32
        let bytes: Int
    }

    let byteLimit: Int
    /// Documents per receiver, and in all: each held one costs the broker a descriptor.
    let countLimit: Int
    let totalLimit: Int
    private var held: [String: [Held]] = [:]
    private let lock = NSLock()

    init(byteLimit: Int, countLimit: Int = 64, totalLimit: Int = 512) {
        self.byteLimit = byteLimit
        self.countLimit = countLimit
        self.totalLimit = totalLimit
    }

    /// Why `app` may not be sent another ciphertext of about `size` bytes, or nil.
    func refusal(for app: String, adding size: Int) -> String? {
        lock.lock()
        defer { lock.unlock() }
        prune(app)
        let kept = held[app] ?? []
        if held.values.reduce(0, { $0 + $1.count }) >= totalLimit {
            for other in held.keys { prune(other) }
            // A full pool refuses only the apps holding their equal share of it or more: eight
            // receivers at their own limit of 64 filled all 512 and kept every other app from
            // an encrypted share (a red team's finding). The broker's descriptors stay bounded
            // by the receivers it knows times `countLimit`.
            let holders = held.count + (held[app] == nil ? 1 : 0)
            if held.values.reduce(0, { $0 + $1.count }) >= totalLimit && kept.count >= totalLimit / max(holders, 1) {
                return "the apps hold \(totalLimit) encrypted documents the broker made, \(app) \(kept.count) of them (its share is \(totalLimit / max(holders, 1))); it makes more as they close some"
            }
        }
        let bytes = kept.reduce(0) { $0 + $1.bytes }
        if kept.count >= countLimit || bytes + Self.charge(size) > byteLimit {
            return "\(app) still holds \(kept.count) encrypted document\(kept.count == 1 ? "" : "s") of \(Self.mib(bytes)) the broker made for it; "
                + "it may hold \(Self.mib(byteLimit)) (and \(countLimit) documents) at once, and gets more when it closes some"
        }
        return nil
    }

    /// Forgets what every holder of `app`'s documents has let go of.
    private func prune(_ app: String) {
        var kept: [Held] = []
        for h in held[app] ?? [] {
            if Self.isHeldElsewhere(h.fd) { kept.append(h) } else { close(h.fd) }
        }
        held[app] = kept.isEmpty ? nil : kept
    }

    /// Counts the ciphertext `fd` against `app` and returns what to send in its place: a
    /// read-only open of its own. The kernel counts read-only opens of a file (not descriptors,
    /// nor the memfd's own open, made without that count), so the broker keeps one and the
    /// receiver gets another. Returns `fd` itself, uncounted, if the file cannot be opened again.
    func keep(_ fd: Int32, for app: String) -> Int32 {
        let handle = open("/proc/self/fd/\(fd)", O_RDONLY | O_CLOEXEC)
        guard handle >= 0 else { return fd }
        let sent = open("/proc/self/fd/\(fd)", O_RDONLY | O_CLOEXEC)
        guard sent >= 0 else {
            close(handle)
            return fd
        }
        var st = stat()
        let bytes = fstat(handle, &st) == 0 ? Self.charge(Int(st.st_size)) : 0
        lock.lock()
        held[app, default: []].append(Held(fd: handle, bytes: bytes))
        lock.unlock()
        return sent
    }

    /// Whether another open file, or a mapping, refers to the file `fd` reads.
    static func isHeldElsewhere(_ fd: Int32) -> Bool {
        let F_SETLEASE: Int32 = 1024  // <fcntl.h> with _GNU_SOURCE, which Glibc's Swift module lacks
        guard fcntl(fd, F_SETLEASE, F_WRLCK) == 0 else { return errno == EAGAIN || errno == EBUSY }
        _ = fcntl(fd, F_SETLEASE, F_UNLCK)
        return false
    }

    /// Memory is given in pages: a one-byte document holds a page.
    static func charge(_ size: Int) -> Int { (max(size, 1) + 4095) / 4096 * 4096 }

    static func mib(_ bytes: Int) -> String {
        bytes >= 1 << 20 ? "\(bytes >> 20) MiB" : "\(bytes >> 10) KiB"
    }
}
