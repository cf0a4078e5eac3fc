import Foundation

/// The normal build's mode: every file given, and every file under every folder given, run
/// once through the target's function. A failure is a crash (a trap in the parser or a broken
/// `FuzzCheck`), so the process ends non-zero; each input is named on standard error before it
/// runs, so the last name printed is the input that failed, or that hung.
enum Replay {
    static func run(_ arguments: [String], _ testOneInput: FuzzTarget.TestOneInput) -> Int32 {
        guard !arguments.isEmpty, !arguments.contains(where: { $0.hasPrefix("-") }) else {
            let name = (CommandLine.arguments[0] as NSString).lastPathComponent
            FileHandle.standardError.write(Data("usage: \(name) FILE|FOLDER...  (replays each input; scripts/fuzz runs the fuzzer)\n".utf8))
            return 2
        }
        var inputs: [String] = []
        for path in arguments {
            guard let found = files(at: path) else {
                FileHandle.standardError.write(Data("replay: no such file or folder: \(path)\n".utf8))
                return 2
            }
            inputs += found
        }
        for path in inputs {
            FileHandle.standardError.write(Data("replay \(path)\n".utf8))
            guard let data = FileManager.default.contents(atPath: path) else {
                FileHandle.standardError.write(Data("replay: cannot read \(path)\n".utf8))
                return 2
            }
            let bytes = [UInt8](data)
            _ = bytes.withUnsafeBufferPointer { testOneInput($0.baseAddress, $0.count) }
        }
        print("replayed \(inputs.count) inputs: none failed")
        return 0
    }

    /// A file, or the regular files under a folder in a stable order; nil when neither exists.
    static func files(at path: String) -> [String]? {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { return nil }
        guard isFolder.boolValue else { return [path] }
        let walk = FileManager.default.enumerator(atPath: path)
        var out: [String] = []
        while let relative = walk?.nextObject() as? String {
            let full = (path as NSString).appendingPathComponent(relative)
            var sub: ObjCBool = false
            if FileManager.default.fileExists(atPath: full, isDirectory: &sub), !sub.boolValue, !relative.hasPrefix(".") {
                out.append(full)
            }
        }
        return out.sorted()
    }
}
