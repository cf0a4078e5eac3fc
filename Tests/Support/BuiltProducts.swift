import Foundation

/// The project and its built tools, as process tests find them: the repository root (from this
/// file's place in it) and the build folder that holds `mambroker`, `mamlaunch` and the apps.
public enum BuiltProducts {
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    public static var bin: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = (exe as NSString).deletingLastPathComponent
        for _ in 0..<4 where !FileManager.default.isExecutableFile(atPath: dir + "/mambroker") { dir = (dir as NSString).deletingLastPathComponent }
        return dir
    }
}
