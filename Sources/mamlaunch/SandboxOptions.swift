import ArgumentParser
import Foundation
import MAMLauncher
import MAMSandbox
import MAMWire

/// The one decision on the sandbox's strength that every command launching apps shares (run,
/// matrix, the bench commands, and mambroker's app starts through `run`), and the one flag to
/// accept less.
struct SandboxOptions: ParsableArguments {
    @Flag(help: "Run even when an attack class has no cover on this kernel (mamlaunch doctor names it); stated at every launch.")
    var allowWeakerSandbox = false

    /// The containment on this kernel, or the refusal (every uncovered class named, with what the
    /// kernel lacks and the remedy) when a class has no cover and the user did not insist.
    func decide(_ what: String) throws -> Containment {
        let containment = SandboxSupport.current.containment
        if let refusal = containment.refusal {
            guard allowWeakerSandbox else {
                throw World.Failure(description: "cannot \(what): \(refusal); pass --allow-weaker-sandbox to run with less")
            }
            StandardStreams.writeError("mamlaunch: warning: \(what) with a weaker sandbox: \(refusal)\n")
        }
        return containment
    }
}

extension Containment {
    /// How the summary lines and reports state it: "sandbox layered (absent: …)".
    var statement: String {
        let absent = Set(rows.flatMap { $0.layers.filter { !$0.present }.map(\.name) }).sorted()
        switch strength {
        case .full: return "sandbox full"
        case .layered: return "sandbox layered (every class covered; absent: \(absent.joined(separator: ", ")))"
        case .weaker: return "sandbox WEAKER (uncovered: \(uncovered.map(\.attack).joined(separator: ", ")))"
        }
    }
}
