import Foundation
import Glibc
import MAMScript
import MAMTestSupport
import MAMWire
import Testing

/// The launcher's `reloadTenant` (docs/PROTOCOL.md) and the scripted `refresh`: how `mamlaunch
/// matrix` moves one broker and its running apps from one policy to the next.
@Suite("a broker switched to another policy while its apps run", .serialized, .timeLimit(.minutes(2)))
struct PolicyReloadTests {
    /// The contoso tenant in a folder of its own, every policy entry pointing at `policy`.
    static func tenant(in dir: String, policy: String) throws {
        var json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: TestBroker.root + "/Policies/contoso/tenant.json"))) as! [String: Any]
        json["policies"] = (json["policies"] as! [[String: Any]]).map { entry in
            var e = entry
            e["$ref"] = TestBroker.root + "/Policies/contoso/policies/\(policy).json"
            e["displayName"] = nil
            return e
        }
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: dir + "/tenant.json"))
    }

    /// One control message on a launcher connection of its own, and the broker's answer (waited
    /// for up to 10 s).
    static func control(_ socketPath: String, _ message: LauncherMessage) throws -> (ok: Bool, detail: String) {
        let socket = try WireSocket.connect(socketPath)
        defer { socket.close() }
        try message.send(on: socket)
        var p = pollfd(fd: socket.descriptor.rawValue, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, 10_000) > 0, let raw = socket.receiveRaw(), case let .controlReply(ok, detail) = try LauncherMessage.decode(raw.bytes) else {
            throw KitTestError("no control reply within 10 s")
        }
        return (ok, detail)
    }

    @Test("reloadTenant answers once the new policy decides; the app's own policy follows at its refresh; a broken file keeps the old one")
    func switchedPolicyDecidesAtOnceAndReachesTheAppAtItsRefresh() throws {
        let dir = "/tmp/mamkit-reload-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.tenant(in: dir, policy: "allow-all")
        let b = try KitBroker(tenant: dir + "/tenant.json")
        defer { b.stop() }
        let mail = try b.launch("Mail", user: "adele@contoso.com")
        #expect(try mail.send("identity", "adele@contoso.com")["result"]?.string == "success")
        func saved(_ name: String) throws -> Bool? {
            try mail.send("save", "localDrive", "-", name, "Q3 forecast")["decision"]?["allowed"]?.bool
        }
        func printing() throws -> Bool? { try mail.send("policy", "adele@contoso.com")["policy"]?["isPrintingAllowed"]?.bool }
        #expect(try saved("before.txt") == true, "allow-all lets adele's document be saved on the device")
        #expect(try printing() == true)
        let first = try mail.send("refresh")
        let revision = Int(first["revision"]?.number ?? -1)
        #expect(revision >= 0 && first["managed"]?.bool == true, "\(first)")

        try Self.tenant(in: dir, policy: "locked-down")
        let reply = try Self.control(b.launcherSocket, .reloadTenant)
        #expect(reply.ok && reply.detail == "tenant reloaded: revision \(revision + 1)", "\(reply)")
        // The broker's next decision is the new policy's, with no wait and no signal.
        #expect(try saved("after.txt") == false, "locked-down blocks saving adele's document")
        // What the app answers in its own process is its snapshot's, until it asks again.
        #expect(try printing() == true)
        let refreshed = try mail.send("refresh")
        #expect(refreshed["revision"]?.number == Double(revision + 1) && refreshed["managed"]?.bool == true, "\(refreshed)")
        #expect(try printing() == false)

        // A file that no longer loads: refused with the file's error, the policy in force kept.
        try Data("{\"name\": ".utf8).write(to: URL(fileURLWithPath: dir + "/tenant.json"))
        let broken = try Self.control(b.launcherSocket, .reloadTenant)
        #expect(!broken.ok && broken.detail.contains("tenant reload refused; the previous policy stays") && broken.detail.contains("tenant.json"), "\(broken)")
        #expect(try saved("still.txt") == false)
        #expect(try mail.send("refresh")["revision"]?.number == Double(revision + 1))
    }
}
