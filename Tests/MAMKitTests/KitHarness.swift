import Foundation
import Glibc
import MAMScript
import MAMTestSupport
import Testing

/// A real broker on a throwaway device directory (MAMTestSupport's TestBroker), and sample apps
/// launched against it in their sandboxes (`mamlaunch run NAME -- --script`), driven line by line
/// through their scripted mode.
final class KitBroker: TestBroker, @unchecked Sendable {
    init(device: String? = nil, tenant: String = TestBroker.root + "/Policies/contoso/tenant.json", extraArguments: [String] = []) throws {
        try super.init(device: device, prefix: "mamkit-broker", tenant: tenant, extraArguments: extraArguments)
    }

    var audit: String { auditPath }

    /// Starts a sample app (an Apps/ name) in scripted mode.
    /// `keepContainer`: the on-disk container instead of a tmpfs that goes with the app, so what
    /// the app kept there survives a kill (as an iOS app's container does).
    func launch(_ app: String, user: String? = nil, keepContainer: Bool = false) throws -> ScriptedProcess {
        var arguments = ["run", app, "--broker", launcherSocket, "--containers", containers]
        if keepContainer { arguments += ["--limit", "disk=none"] }
        if let user { arguments += ["--user", user] }
        return try ScriptedProcess(Self.bin + "/mamlaunch", arguments + ["--", "--script"])
    }

    /// Starts Courier under another app's manifest (an app without MAMKit, e.g. Notes).
    /// `user`: the account the user signs in with (`--user`); none by default. Courier is not
    /// the program built for the app: it runs as the app only with `--developer` (no key ever),
    /// as an unknown app without it (`developer: false`).
    func courier(_ app: String, user: String? = nil, developer: Bool = true, _ steps: [String]) throws -> ScriptedProcess {
        try ScriptedProcess(Self.bin + "/mamlaunch", ["run", "--manifest", "\(Self.root)/Apps/\(app)/Info.plist", "--broker", launcherSocket,
                                                     "--containers", containers] + (developer ? ["--developer"] : [])
                                                     + (user.map { ["--user", $0] } ?? [])
                                                     + ["--", Self.bin + "/Courier"] + steps)
    }

    /// `mamlaunch wipe --user ACCOUNT`: the admin's selective wipe, for every app.
    func wipe(_ account: String) throws {
        let run = try ChildProcess.run(Self.bin + "/mamlaunch", ["wipe", "--user", account, "--broker", launcherSocket], timeout: 30)
        guard run.status == 0 else { throw KitTestError("mamlaunch wipe --user \(account) exited \(run.status): \(run.err)") }
    }
}

struct KitTestError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// The shared line-driven app process (MAMTestSupport), under this test target's name for it.
typealias ScriptedProcess = MAMTestSupport.ScriptedProcess

extension ScriptedProcess {
    /// A process under the project's root (apps started by name find their manifests there).
    convenience init(_ executable: String, _ arguments: [String]) throws {
        try self.init(executable, arguments, environment: ProcessInfo.processInfo.environment.merging(["MAMLAB_ROOT": KitBroker.root]) { _, b in b })
    }

    /// For Courier: everything it printed.
    func courierLines() -> [JSONValue] { allLines() }
}

extension JSONValue {
    var outcome: String? { self["decision"]?["outcome"]?.string }
    var rule: String? { self["decision"]?["rule"]?.string }
    var ruleName: String? { self["decision"]?["ruleName"]?.string }
    var decidedAt: String? { self["decision"]?["decidedAt"]?.string }
}
