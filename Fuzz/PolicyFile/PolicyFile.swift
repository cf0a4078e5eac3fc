import Foundation
import MAMFuzzing
import MAMPolicy

/// A standalone policy file (`mamlaunch explain --policy`, an experiment's policies, a tenant's
/// `$ref`): Graph JSON, or the debug form as an XML or binary property list. What loads, written
/// back in its own form and read again, is the same policy.
@_cdecl("LLVMFuzzerTestOneInput")
public func policyFile(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = FuzzTarget.bytes(data, size)
    let text = SourceText(bytes)
    let loaded: [PolicyFile.Loaded]
    do {
        loaded = try PolicyFile.load(Data(bytes), file: "policy", knownGroups: ["sales", "finance"])
    } catch {
        FuzzCheck.failure(error, file: "policy", in: text)
        return 0
    }
    for item in loaded {
        FuzzCheck.warnings(item.warnings)
        let p = item.policy
        var log = DiagnosticLog()
        // Each form says some things the other cannot: a policy goes back into the form it came in.
        if p.origin.path.hasPrefix("$") {
            let again = GraphPolicy.read(Located(GraphPolicy.write(p), path: "$", file: "written"), knownGroups: ["sales", "finance"], log: &log)
            FuzzCheck.require(again != nil, "a policy written as Graph JSON does not load again: \(log.items)")
            if let again {
                FuzzCheck.require(again.settings == p.settings, "settings changed through Graph JSON: \(p.settings) became \(again.settings)")
                FuzzCheck.require(again.targetedApps == p.targetedApps && again.includedGroups == p.includedGroups
                                  && again.excludedGroups == p.excludedGroups && again.allUsers == p.allUsers,
                                  "targeting changed through Graph JSON")
            }
        } else {
            let settings = DebugSettings.read(Located(DebugSettings.write(p.settings), path: "", file: "written"), log: &log)
            FuzzCheck.require(settings == p.settings, "settings changed through the debug form: \(p.settings) became \(String(describing: settings)); \(log.items)")
        }
    }
    return 0
}

@main enum PolicyFileFuzz {
    static func main() { FuzzTarget.main(policyFile) }
}
