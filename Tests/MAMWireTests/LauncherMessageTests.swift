import MAMWire
import Testing

@Suite("Launcher hand-off messages")
struct LauncherMessageTests {
    static let samples: [LauncherMessage] = [
        .adopt(Adoption(bundleID: "com.contoso.mail", pid: 4242, account: "adele@contoso.com")),
        .adopt(Adoption(bundleID: "com.example.notes", pid: 1, account: nil)),
        .violation(SandboxViolation(bundleID: "com.example.hostile", pid: 77, syscall: "ptrace", detail: nil, action: .killed, time: "2026-11-22T19:00:00Z")),
        .advanceClock(milliseconds: 86_400_000 * 400), .sync, .wipe(account: "adele@contoso.com", app: nil),
        .wipe(account: "ben@contoso.com", app: "com.contoso.mail"), .controlReply(ok: false, detail: "no"),
        .restart(pid: 31337), .restart(pid: -1), .ended(pid: 31337), .reloadTenant,
        .setDevice(change: #"{"jailbroken":true,"offlineFor":721}"#), .setDevice(change: ""),
    ]

    @Test(arguments: samples) func roundTrips(_ m: LauncherMessage) throws {
        #expect(try LauncherMessage.decode(m.encode()) == m)
    }

    @Test(arguments: samples) func everyShorterPacketIsRefused(_ m: LauncherMessage) {
        let bytes = m.encode()
        for n in 0..<bytes.count {
            #expect(throws: WireError.self) { try LauncherMessage.decode(Array(bytes.prefix(n))) }
        }
        #expect(throws: WireError.self) { try LauncherMessage.decode(bytes + [0]) }
    }
}
