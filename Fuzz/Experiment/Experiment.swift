import Foundation
import MAMFuzzing
import MAMMatrix
import MAMPolicy

/// A sharing-matrix experiment file in JSON (docs/MATRIX.md), as `mamlaunch matrix` (root)
/// loads it: a refusal points into the file, and what loads hangs together.
@_cdecl("LLVMFuzzerTestOneInput")
public func experiment(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    ExperimentCheck.load(FuzzTarget.bytes(data, size), file: "experiment.json", text: { SourceText($0) })
    return 0
}

/// The checks on a loaded experiment.
enum ExperimentCheck {
    static let apps: Set<String> = ["mail", "docs", "notes", "chat", "edge", "dialer", "com.contoso.mail", "com.contoso.docs", "com.example.notes"]

    static func load(_ bytes: [UInt8], file: String, text: ([UInt8]) -> SourceText) {
        let experiment: Experiment
        do {
            experiment = try ExperimentFile.load(Data(bytes), file: file, knownApp: { apps.contains($0.lowercased()) },
                                                 policy: { $0.contains("missing") ? .failure(.init("no such policy")) : .success($0) })
        } catch {
            FuzzCheck.failure(error, file: file, in: text(bytes))
            return
        }
        let names = experiment.parties.map(\.name)
        FuzzCheck.require(Set(names).count == names.count, "two parties share a name: \(names)")
        for cell in experiment.cells {
            FuzzCheck.require(names.contains(cell.source) && (cell.target.map(names.contains) ?? true),
                              "a cell names a party the experiment does not have: \(cell)")
        }
        FuzzCheck.require(!experiment.channels.isEmpty || !experiment.cells.isEmpty || experiment.policyApps, "an experiment with nothing to run")
    }
}

@main enum ExperimentFuzz {
    static func main() { FuzzTarget.main(experiment) }
}
