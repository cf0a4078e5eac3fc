import Foundation
import MAMTestSupport
import Testing

/// Every committed fuzz input, the seed corpora and the crash reproducers alike, replayed
/// through its target as the normal build makes it (docs/FUZZING.md): a parser that regresses
/// on one fails here, naming the input. Each target runs as a process, so a crash fails its
/// test only, and a hang ends at the deadline.
@Suite("The fuzz inputs replay")
struct FuzzCorpusReplayTests {
    static let fuzz = BuiltProducts.root + "/Fuzz"

    /// The targets Package.swift declares (executable targets named Fuzz…), without the prefix.
    static let targets: [String] = {
        let manifest = (try? String(contentsOfFile: BuiltProducts.root + "/Package.swift", encoding: .utf8)) ?? ""
        let declaration = try! NSRegularExpression(pattern: #"executableTarget\(name: "Fuzz(\w+)""#)
        let ns = manifest as NSString
        return declaration.matches(in: manifest, range: NSRange(location: 0, length: ns.length)).map { ns.substring(with: $0.range(at: 1)) }
    }()

    static func folders(_ kind: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "\(fuzz)/\(kind)")) ?? []).sorted()
    }

    @Test(arguments: targets)
    func everyCommittedInputReplays(_ target: String) throws {
        let inputs = ["Corpus", "Regressions"].map { "\(Self.fuzz)/\($0)/\(target)" }.filter { FileManager.default.fileExists(atPath: $0) }
        let run = try ChildProcess.run(BuiltProducts.bin + "/Fuzz" + target, inputs, timeout: 120)
        // The replay names each input before it runs it: the last one named is the one that failed.
        let failed = run.err.split(separator: "\n").last { $0.hasPrefix("replay ") }.map { String($0.dropFirst(7)) } ?? "?"
        #expect(run.status == 0, "Fuzz\(target) failed on \(failed):\n\(run.err.suffix(3000))")
        #expect(run.out.hasPrefix("replayed "), "Fuzz\(target) said: \(run.out)")
    }

    @Test func everyTargetHasASeedCorpusAndEveryFolderATarget() {
        #expect(Self.targets.count >= 16, "Package.swift's fuzz targets were not read: \(Self.targets)")
        #expect(Self.folders("Corpus") == Self.targets.sorted(), "Fuzz/Corpus/ has a folder per target, and only those")
        for folder in Self.folders("Regressions") {
            #expect(Self.targets.contains(folder), "Fuzz/Regressions/\(folder) names no fuzz target")
        }
    }
}
