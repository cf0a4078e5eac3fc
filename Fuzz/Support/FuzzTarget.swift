import Foundation
#if MAMLAB_FUZZ
import CLibFuzzer
#endif

/// What every fuzz target's `main` is. Built normally, the target replays the files and folders
/// named on its command line through its function and fails on the first input that breaks it;
/// built for fuzzing (`-DMAMLAB_FUZZ`, scripts/fuzz), it hands its function to libFuzzer.
public enum FuzzTarget {
    /// `LLVMFuzzerTestOneInput`'s shape: each target exports its function under that name too,
    /// so another engine (or libFuzzer's own `main`) can drive it unchanged.
    public typealias TestOneInput = @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32

    public static func main(_ testOneInput: TestOneInput) -> Never {
        #if MAMLAB_FUZZ
        // SwiftPM links `main` to the target's entry point, so libFuzzer's own `main` (which
        // would clash with it) is left out of the link and its driver is called from here.
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, testOneInput))
        #else
        exit(Replay.run(Array(CommandLine.arguments.dropFirst()), testOneInput))
        #endif
    }

    /// The input as an array (libFuzzer may pass a null pointer for the empty input).
    public static func bytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
        guard let data, size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: size))
    }
}
