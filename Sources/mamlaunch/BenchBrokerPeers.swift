import CMAMBench
import CMAMSandbox
import Foundation
import Glibc
import MAMCatalog
import MAMLauncher
import MAMWire
import SystemPackage

/// The mambroker bench-broker talks to, reached as the launcher reaches it.
struct BrokerUnderTest {
    let pid: Int32
    let launcher: Int32

    /// An app handed to the broker as the launcher would hand it: returns our end of its
    /// connection, past hello.
    func adopt(_ bundle: String, account: String? = nil) throws -> WireSocket {
        let (mine, theirs) = try WireSocket.pair()
        // The bench itself, not the built app: it says so (--developer), keeping the bundle id.
        do { try Handoff.send(FileDescriptor(rawValue: launcher), Handoff.adopt(bundleID: bundle, pid: getpid(), account: account, developer: true), fd: theirs.descriptor) } catch {
            theirs.close()
            mine.close()
            throw BenchError("the broker did not take \(bundle)'s connection: \(error)")
        }
        theirs.close()
        try mine.send(Frame(id: 1, .hello(minVersion: Wire.version, maxVersion: Wire.version, integratesSDK: true)))
        guard let answer = mine.receive(), case .success(let frame) = answer.frame, case .welcome = frame.message else {
            mine.close()
            throw BenchError("the broker did not welcome \(bundle)")
        }
        return mine
    }

    func close() { _ = Glibc.close(launcher) }
}

/// Starting the processes bench-broker measures, each under `processes`, which stops them.
enum BenchBrokerPeers {
    /// `requestsPerSecond` nil keeps the broker's own per-app budget.
    static func startBroker(_ processes: BenchProcesses, tenant: String, requestsPerSecond: Int? = 1_000_000_000,
                            extraArguments: [String] = []) throws -> BrokerUnderTest {
        let mambroker = Catalog.toolDirectory + "/mambroker"
        guard FileManager.default.isExecutableFile(atPath: mambroker) else {
            throw BenchError("mambroker is not built beside mamlaunch (\(Catalog.toolDirectory)); build it with `swift build --product mambroker`")
        }
        let device = processes.directory + "/device"
        // The round-trip bench measures the broker's speed, not its flood limit.
        let budget = requestsPerSecond.map { ["--requests-per-second", String($0)] } ?? []
        let process = try processes.start("mambroker", ["guard", mambroker, "--tenant", tenant, "--device", device, "--log-level", "error"]
                                              + budget + extraArguments,
                                          readOutput: true)
        let line = try processes.firstLine(of: process, name: "mambroker")
        guard line.hasPrefix("ready") else { throw BenchError("mambroker did not start: it said \"\(line)\"") }
        let launcher = mam_connect_seqpacket(device + "/launcher.sock")
        guard launcher >= 0 else { throw BenchError("cannot reach the broker's launcher socket: \(String(cString: strerror(errno)))") }
        return BrokerUnderTest(pid: process.processIdentifier, launcher: launcher)
    }

    /// A bus of our own: dbus-daemon on a socket in the scratch directory, with the session bus's
    /// policy (anyone of our uid may own a name and call anything), and the echo service on it.
    /// Returns a connected client; close it with `mam_bench_dbus_close`.
    static func startBus(_ processes: BenchProcesses, dbusDaemon: String) throws -> OpaquePointer {
        let config = processes.directory + "/bus.conf"
        let xml = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(processes.directory)/bus</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>

            """
        do { try xml.write(toFile: config, atomically: false, encoding: .utf8) } catch {
            throw BenchError("cannot write \(config): \(error)")
        }
        let daemon = try processes.start("dbus-daemon", ["guard", dbusDaemon, "--config-file=" + config, "--print-address", "--nofork"],
                                         readOutput: true)
        let address = try processes.firstLine(of: daemon, name: "dbus-daemon")
        let service = try processes.start("dbus-echo", ["dbus-echo", address], readOutput: true)
        let line = try processes.firstLine(of: service, name: "dbus-echo")
        guard line == "ready" else { throw BenchError("the D-Bus echo service did not start: it said \"\(line)\"") }
        var why = [CChar](repeating: 0, count: 256)
        guard let client = mam_bench_dbus_open(address, &why, why.count) else {
            throw BenchError("cannot join the private bus at \(address): \(text(why))")
        }
        return client
    }

    /// A process holding the other end of a SOCK_SEQPACKET pair (its standard input) that
    /// answers every packet with `answer`: the bare ping-pong, moving the bytes the broker does.
    static func startEcho(_ processes: BenchProcesses, answer: [UInt8]) throws -> WireSocket {
        let (mine, theirs) = try WireSocket.pair()
        defer { theirs.close() }
        do {
            _ = try processes.start("seqpacket-answer", ["seqpacket-answer"], input: theirs.descriptor.rawValue)
            // Its first packet is the answer it gives; it is not answered itself.
            try mine.sendRaw(answer)
        } catch {
            mine.close()
            throw error
        }
        return mine
    }
}
