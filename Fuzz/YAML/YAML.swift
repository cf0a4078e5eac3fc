import Foundation
import MAMFuzzing
import MAMMatrix
import MAMPolicy

/// The YAML an experiment file may be written in (docs/MATRIX.md), reached as `mamlaunch matrix`
/// reaches it: through the experiment loader, which picks the YAML reader by the file's name.
/// The reader's positions carry a line and column, no byte offset.
@_cdecl("LLVMFuzzerTestOneInput")
public func yaml(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = FuzzTarget.bytes(data, size)
    do {
        let experiment = try ExperimentFile.load(Data(bytes), file: "experiment.yaml", knownApp: { _ in true })
        let names = experiment.parties.map(\.name)
        FuzzCheck.require(Set(names).count == names.count, "two parties share a name: \(names)")
    } catch {
        FuzzCheck.failure(error, file: "experiment.yaml", in: SourceText(bytes, offsets: false))
    }
    return 0
}

@main enum YAMLFuzz {
    static func main() { FuzzTarget.main(yaml) }
}
