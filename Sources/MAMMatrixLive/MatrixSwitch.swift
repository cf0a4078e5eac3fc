import Foundation
import Glibc
import MAMLauncher
import MAMScript
import MAMWire

/// Switching a running broker and its apps to the next policy of the experiment, instead of a
/// broker and a set of apps started afresh for each one (LiveMatrix.stints: only between policies
/// that target the same apps for the same users).
extension PolicyRun {
    /// The broker reads its tenant file again, rewritten with `next`'s settings (as SIGHUP does,
    /// answered once the new policy decides); then every running app with the SDK asks for its
    /// policy again, as at a check-in, so that what it decides in its own process (the identity
    /// it shows a document under, an identity switch) is the new policy's too.
    func switchPolicy(to next: String) throws {
        _ = try Self.writeTenant(setup, policy: next, to: tenantPath)
        let (ok, detail) = try control(.reloadTenant)
        guard ok else { throw LiveMatrix.Failure(description: "the broker did not take policy \(next): \(detail)") }
        policy = next
        policies.append(next)
        let sdk = apps.values.filter { (try? entry($0.bundleID).manifest.integratesSDK) ?? false }
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: sdk.count) { i in
            let app = sdk[i]
            do {
                let r = try app.call(ScriptCommand("refresh"))
                if let e = r["error"]?.string { throw LiveMatrix.Failure(description: e) }
                // What the app acts under now (a single-identity app's follows its enrollment).
                app.identity = r["identity"].flatMap { $0.string.map { $0.isEmpty ? "personal" : $0 } }
            } catch {
                failures.update { $0.append("\(app.bundleID): \(error)") }
            }
        }
        if let first = failures.value.first {
            throw LiveMatrix.Failure(description: "after the switch to policy \(next), an app did not take the new policy: \(first)")
        }
    }

    /// A control message to the broker on a connection of its own, and its `controlReply`.
    func control(_ message: LauncherMessage, timeout: Double = 30) throws -> (ok: Bool, detail: String) {
        let path = device + "/launcher.sock"
        let socket: WireSocket
        do { socket = try WireSocket.connect(path) } catch { throw LiveMatrix.Failure(description: "cannot reach the broker at \(path): \(error)") }
        defer { socket.close() }
        do { try message.send(on: socket) } catch {
            throw LiveMatrix.Failure(description: "the broker's launcher socket refused the message: \(error)")
        }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            var p = pollfd(fd: socket.descriptor.rawValue, events: Int16(POLLIN), revents: 0)
            let left = Int32(max(0, deadline.timeIntervalSinceNow * 1000))
            guard left > 0, poll(&p, 1, left) > 0, let raw = socket.receiveRaw() else {
                throw LiveMatrix.Failure(description: "the broker did not answer within \(Int(timeout)) s")
            }
            guard case let .controlReply(ok, detail)? = try? LauncherMessage.decode(raw.bytes) else { continue }
            return (ok, detail)
        }
    }
}
