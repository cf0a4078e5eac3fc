import Foundation
import Glibc
import MAMCatalog
import MAMSandbox
import MAMWire
import Synchronization
import SystemPackage

/// The launcher's messages to the broker's launcher socket: MAMWire's typed `LauncherMessage`
/// (docs/PROTOCOL.md, "Launcher hand-off").
package enum Handoff {
    /// An adoption with no program digest (a peer that is no installed app); `developer`: a
    /// program of the user's own, never given a key.
    package static func adopt(bundleID: String, pid: Int32, account: String?, developer: Bool = false,
                      personal: Bool = false) -> LauncherMessage {
        .adopt(Adoption(bundleID: bundleID, pid: pid, account: account, manifestDigest: nil,
                        executableDigest: nil, developer: developer, personal: personal))
    }

    /// The digest of the program an app runs, taken after its exec: from the descriptor the
    /// sandbox executed, whose file the kernel keeps from being written while it runs (ETXTBSY),
    /// so the bytes hashed are the bytes running. A program run by its path (a script) has none:
    /// its name could point elsewhere by the time of the exec, so it never claims an app.
    package static func digest(of program: OpenProgram?, ran config: LaunchConfiguration) -> String? {
        guard let program, config.executableDescriptor?.rawValue == program.descriptor.rawValue else { return nil }
        return LaunchedPrograms.shared.sha256(program)
    }

    /// Sends a message to the broker; a failure is the caller's to handle (an app the broker did
    /// not adopt would run on a dead connection). Both descriptors are borrowed, left open.
    package static func send(_ socket: FileDescriptor, _ message: LauncherMessage, fd: FileDescriptor? = nil) throws {
        do { try message.send(on: WireSocket(duplicating: socket), descriptor: fd) } catch {
            throw World.Failure(description: "the broker's launcher socket refused the message: \(error)")
        }
    }

    /// A violation report: the launcher has already printed it; the broker's copy is for its
    /// audit, and a broker that is gone cannot take it, which the launcher says.
    package static func report(_ socket: FileDescriptor, _ violation: Violation) {
        do { try send(socket, .violation(violation)) } catch {
            StandardStreams.writeError("mamlaunch: the broker did not take the violation report: \(error)\n")
        }
    }
}

/// The digests of the programs this launcher has run, by file: a matrix starts the same few
/// sample programs (18 MB each in a release build) dozens of times, and hashed them at every
/// launch. A file is the same bytes while its device, inode, size, modification and change
/// times are: a write changes both times, and no one can set the change time back. Taken from the
/// descriptor run, before and after hashing, so a file changed meanwhile is not remembered.
package final class LaunchedPrograms: Sendable {
    package static let shared = LaunchedPrograms()
    private let digests = Mutex<[String: String]>([:])

    /// Held while a program is hashed, one per file: a matrix launches a dozen apps of the same
    /// program at once, and each hashed it while the first was still at it; two programs are
    /// hashed at once.
    private let hashing = Mutex<[String: NSLock]>([:])

    func sha256(_ program: OpenProgram) -> String? {
        guard let before = Self.stamp(program.descriptor.rawValue) else { return program.sha256() }
        if let known = digests.withLock({ $0[before] }) { return known }
        let lock = hashing.withLock { locks in
            if let l = locks[before] { return l }
            let l = NSLock()
            locks[before] = l
            return l
        }
        lock.lock()
        defer { lock.unlock() }
        if let known = digests.withLock({ $0[before] }) { return known }
        // Hashed by an earlier run (this launcher's or a broker's), and the file unchanged since.
        if let remembered = DigestMemo.shared.recall(before) {
            digests.withLock { $0[before] = remembered }
            return remembered
        }
        let digest = program.sha256()
        if let digest, Self.stamp(program.descriptor.rawValue) == before {
            digests.withLock { $0[before] = digest }
            DigestMemo.shared.remember(before, digest)
        }
        return digest
    }

    /// Hashes the programs at `paths` now, each on a thread of its own, without waiting: a
    /// matrix does this while its broker starts, so that its apps' launches find the digests
    /// taken (tens of milliseconds of 18 MB programs, at the launches otherwise).
    package func prepare(_ paths: Set<String>) {
        for path in paths {
            let t = Thread { [self] in
                guard let program = OpenProgram(path), program.isNative else { return }
                _ = sha256(program)
            }
            t.name = "matrix-hash"
            t.start()
        }
    }

    /// Nil for a file another user can write (hashed at every launch): DigestMemo.vouches.
    static func stamp(_ fd: Int32) -> String? {
        var st = stat()
        guard fstat(fd, &st) == 0, DigestMemo.vouches(for: st) else { return nil }
        return DigestMemo.stamp(st)
    }
}
