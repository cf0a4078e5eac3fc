import MAMTestSupport
import Testing

/// mambroker's options that take one of a few words: a word outside them is refused before
/// anything starts, and the refusal lists the words it takes.
@Suite("mambroker's command line")
struct BrokerCommandLineTests {
    static func mambroker(_ arguments: [String]) throws -> (status: Int32, err: String) {
        let r = try ChildProcess.run(BuiltProducts.bin + "/mambroker", arguments, timeout: 30)
        return (r.status, r.err)
    }

    @Test func aClockOutsideRealAndVirtualIsRefusedNamingBoth() throws {
        let r = try Self.mambroker(["--tenant", "/nonexistent/tenant.json", "--clock", "sideways"])
        #expect(r.status != 0 && r.err.contains("sideways") && r.err.contains("'real'") && r.err.contains("'virtual'"), "\(r.err)")
    }

    @Test func aLogLevelOutsideSwiftLogsIsRefusedNamingThem() throws {
        let r = try Self.mambroker(["--tenant", "/nonexistent/tenant.json", "--log-level", "loud"])
        #expect(r.status != 0 && r.err.contains("loud") && r.err.contains("critical"), "\(r.err)")
    }
}
