import Foundation
import Glibc
import MAMScript
import MAMTestSupport
import Testing

/// Issue 19, item 3's race: the launcher hashed the program by its name and then executed that
/// name again, so a program renamed over it in between ran under the installed app's identity.
/// The attacker here watches the program with inotify and swaps it the moment the launcher has
/// read it through once (its first close), which lands between the hash and the exec.
@Suite("Installed identity: the program hashed is the program run (issue 19)", .serialized, .timeLimit(.minutes(2)))
struct ProgramSwapTests {
    static let adele = "adele@contoso.com"

    @Test func aProgramSwappedInAfterTheHashDoesNotRunAsTheInstalledApp() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let folder = "/tmp/mamkit-swap-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let program = folder + "/Mail", impostor = folder + "/impostor"
        try FileManager.default.copyItem(atPath: KitBroker.bin + "/Mail", toPath: program)
        try FileManager.default.copyItem(atPath: KitBroker.bin + "/Courier", toPath: impostor)
        let swapper = try Swapper(watching: program) { rename(impostor, program) == 0 }
        let p = try ScriptedProcess(KitBroker.bin + "/mamlaunch", ["run", "--manifest", KitBroker.root + "/Apps/Mail/Info.plist",
                                                                 "--broker", b.launcherSocket, "--containers", b.device + "-containers",
                                                                 "--user", Self.adele, "--", program,
                                                                 "hello", "enroll", Self.adele, "key", Self.adele, "bye"])
        let lines = p.courierLines()
        #expect(try swapper.swapped(within: 10), "the attacker never saw the launcher read the program")
        // Whatever ran, a program other than the one built for Mail is not Mail and holds no key.
        let hello = lines.first { $0["step"]?.string == "hello" }
        if let hello { #expect(hello["bundleId"]?.string != "com.contoso.mail", "\(lines)") }
        #expect(!lines.contains { $0["step"]?.string == "key" && $0["key"] != nil }, "\(lines)")
    }
}

/// Renames a file over another the first time the watched file is closed after a read.
final class Swapper: @unchecked Sendable {
    private let fd: Int32
    private let done = DispatchSemaphore(value: 0)
    private var result = false

    init(watching path: String, swap: @escaping @Sendable () -> Bool) throws {
        fd = inotify_init1(Int32(IN_CLOEXEC))
        guard fd >= 0, inotify_add_watch(fd, path, UInt32(IN_CLOSE_NOWRITE)) >= 0 else {
            throw KitTestError("inotify on \(path): \(String(cString: strerror(errno)))")
        }
        let thread = Thread { [self] in
            var event = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            // A deadline: a launcher that never reads the program leaves the swap undone.
            if poll(&event, 1, 20_000) == 1 { result = swap() }
            done.signal()
        }
        thread.start()
    }

    /// Whether the swap happened, waiting at most `seconds` for the watcher to finish.
    func swapped(within seconds: Int) throws -> Bool {
        guard done.wait(timeout: .now() + .seconds(seconds)) == .success else { throw KitTestError("the swapper did not finish within \(seconds) s") }
        close(fd)
        return result
    }
}
