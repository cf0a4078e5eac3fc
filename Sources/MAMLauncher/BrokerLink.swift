import CMAMSandbox
import Glibc
import MAMSandbox
import MAMWire
import SystemPackage

/// The launcher's connection to a broker's launcher socket, and the one way an app is started
/// against it: a fresh broker connection made for the app, its end given to the sandbox, the
/// broker's end handed over with `adopt`. `mamlaunch run` and the live matrix both start apps
/// through it. Every descriptor it makes has one owner (MAMWire's `Descriptor`): the control
/// connection is this value's, each new connection's two ends are closed here on every way out.
package final class BrokerLink: Sendable {
    private let control: Descriptor

    /// The adoption was refused or could not be sent: the app was killed and reaped.
    package struct NotAdopted: Error, CustomStringConvertible {
        package var description: String
    }

    /// Connects to the launcher socket at `path`, refusing one root does not serve: another
    /// user's socket in its place would receive the apps' connections and the users' passwords.
    package init(path: String) throws(World.Failure) {
        let fd = mam_connect_seqpacket(path)
        guard fd >= 0 else { throw World.Failure(description: "cannot reach the broker at \(path): \(String(cString: strerror(errno)))") }
        control = Descriptor(adopting: fd)
        do { try TrustedPath.checkBrokerPeer(FileDescriptor(rawValue: fd), path: path) } catch {
            throw World.Failure(description: "refusing the broker at \(error)")
        }
    }

    /// The control connection, borrowed (sign-ins, violation reports, restart requests).
    package var socket: FileDescriptor { FileDescriptor(rawValue: control.rawValue) }

    /// A violation report for the broker's audit (Handoff.report).
    package func report(_ violation: Violation) { Handoff.report(socket, violation) }

    /// Starts an app: `sandbox` launches `config` with the app's end of a new broker connection
    /// (its own errors pass through as they are), then the broker adopts the other end with
    /// what `adoption` says of the running app. An app the broker did not adopt would run on a
    /// connection nobody serves: it is killed and reaped, and `NotAdopted` says why.
    package func launch(_ config: LaunchConfiguration, adoption: (SandboxedApp) -> Adoption,
                        sandbox: (LaunchConfiguration) throws -> SandboxedApp) throws -> SandboxedApp {
        var pair: [Int32] = [-1, -1]
        do { _ = try systemCall("socketpair for \(config.bundleID)'s broker connection") { mam_seqpacket_pair(&pair) } } catch {
            throw World.Failure(description: "\(error)")
        }
        let appEnd = Descriptor(adopting: pair[0])
        let brokerEnd = Descriptor(adopting: pair[1])
        var launching = config
        launching.brokerDescriptor = FileDescriptor(rawValue: appEnd.rawValue)
        let app = try sandbox(launching)
        // The app has its copy now.
        appEnd.close()
        do {
            try Handoff.send(socket, .adopt(adoption(app)), fd: FileDescriptor(rawValue: brokerEnd.rawValue))
        } catch {
            kill(app.pid, SIGKILL)
            _ = app.wait()
            throw NotAdopted(description: "\(config.bundleID) was stopped: the broker did not take its connection (\(error))")
        }
        return app
    }
}
