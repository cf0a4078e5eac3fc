import Foundation
import Glibc

/// The `#!` line of a script the user names as an app's executable.
///
/// The kernel runs a script by executing the interpreter its first line names, inside the same
/// `execve`: the supervisor still sees one exec, and Landlock asks for the execute right on the
/// script and on the interpreter. The launcher reads the line first, to grant that interpreter
/// (one file, nothing beside it) and to refuse what would not work or would need more: the
/// script is the app's, so hostile, and every byte of its first line is checked.
public enum Shebang {
    /// The kernel reads at most 256 bytes of a script's head; a longer line it would cut short.
    public static let maximumLine = 255

    /// The interpreter of the script at `path` (resolved to its real path), or nil when the file
    /// is not a script (it does not start with `#!`).
    public static func interpreter(of path: String) throws(LaunchError) -> String? {
        guard let named = try named(of: path) else { return nil }
        return try check(named, script: path)
    }

    /// The interpreter as the `#!` line names it (the path the kernel looks up in the app's
    /// root), checked for form only; nil for a native program.
    static func named(of path: String) throws(LaunchError) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else { throw LaunchError("\(path): cannot read: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: maximumLine + 1)
        let n = head.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n >= 0 else { throw LaunchError("\(path): cannot read: \(String(cString: strerror(errno)))") }
        return try parse(Array(head[0..<n]), script: path)
    }

    /// The interpreter path the first line names, checked for form only; nil without `#!`.
    public static func parse(_ head: [UInt8], script: String) throws(LaunchError) -> String? {
        guard head.count >= 2, head[0] == UInt8(ascii: "#"), head[1] == UInt8(ascii: "!") else { return nil }
        guard let end = head.firstIndex(of: UInt8(ascii: "\n")) else {
            throw LaunchError("\(script): the #! line is longer than \(maximumLine) bytes (or does not end); the kernel would cut it short")
        }
        let line = head[2..<end]
        for (i, b) in zip(line.indices, line) where b != UInt8(ascii: " ") && b != UInt8(ascii: "\t") && !(0x21...0x7e).contains(b) {
            throw LaunchError("\(script): the #! line has byte 0x\(String(b, radix: 16)) at byte \(i); it may hold printable ASCII only")
        }
        let words = line.split(whereSeparator: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") })
        guard let first = words.first else { throw LaunchError("\(script): the #! line names no interpreter") }
        let interpreter = String(decoding: first, as: UTF8.self)
        guard interpreter.hasPrefix("/") else {
            throw LaunchError("\(script): the #! line names \"\(interpreter)\", a relative path; name the interpreter by its absolute path (e.g. #!/usr/bin/python3)")
        }
        let components = interpreter.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard !components.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else {
            throw LaunchError("\(script): the #! line names \"\(interpreter)\"; the interpreter's path may hold no empty, \".\" or \"..\" component")
        }
        if components.last == "env" {
            throw LaunchError("\(script): the #! line runs \(interpreter), which would start a second program; the sandbox allows one exec, so name the interpreter itself (e.g. #!/usr/bin/python3)")
        }
        return interpreter
    }

    /// The interpreter resolved: an executable regular file that is not itself a script (the
    /// kernel would need one more step the sandbox does not grant).
    static func check(_ interpreter: String, script: String) throws(LaunchError) -> String {
        guard let real = LandlockPolicy.realPath(interpreter), LandlockPolicy.isRegularFile(real), access(real, X_OK) == 0 else {
            throw LaunchError("\(script): the #! line names \(interpreter), which is not an executable file")
        }
        let fd = open(real, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        var magic: [UInt8] = [0, 0]
        if fd >= 0 {
            _ = magic.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 2, 0) }
            close(fd)
        }
        if magic == [UInt8(ascii: "#"), UInt8(ascii: "!")] {
            throw LaunchError("\(script): its interpreter \(interpreter) is itself a script; the sandbox allows one exec, so name a native interpreter")
        }
        return real
    }
}

/// The folder of an app's own files, which the launcher grants read-only: the folder of the
/// executable the user named, or of the script an interpreter is asked to run.
public enum AppFolder {
    /// Folders that hold other programs or other people's files: never an app's own.
    static let system = ["/bin", "/sbin", "/usr", "/usr/bin", "/usr/sbin", "/usr/local", "/usr/local/bin", "/usr/local/sbin",
                         "/etc", "/tmp", "/var", "/var/tmp", "/home", "/root", "/dev", "/proc", "/sys", "/run", "/opt",
                         "/dev/shm"] + LandlockPolicy.systemLibraries

    /// Whether `path` (resolved) lies in a system folder: an installed interpreter or tool.
    public static func isSystem(_ path: String) -> Bool {
        let real = LandlockPolicy.realPath(path) ?? path
        let dir = (real as NSString).deletingLastPathComponent
        return dir == "/" || (["/usr", "/bin", "/sbin"] + LandlockPolicy.systemLibraries).contains { LandlockPolicy.beneath(real, $0) }
    }

    /// The app's folder for `executable` and its `arguments`, which may be rewritten: when the
    /// executable is an installed interpreter, the script is its first argument that is not an
    /// option and names a regular file; a relative script path is made absolute, since the app
    /// starts in its container. Nil when the app is a system program with no script of its own.
    public static func locate(executable: String, arguments: inout [String], currentDirectory: String) -> String? {
        guard isSystem(executable) else { return (executable as NSString).deletingLastPathComponent }
        for (i, argument) in arguments.enumerated() {
            if argument == "--" { break }
            guard !argument.hasPrefix("-") else { continue }
            let absolute = argument.hasPrefix("/") ? argument : (currentDirectory as NSString).appendingPathComponent(argument)
            guard let real = LandlockPolicy.realPath(absolute), LandlockPolicy.isRegularFile(real) else { continue }
            arguments[i] = (absolute as NSString).standardizingPath
            return (real as NSString).deletingLastPathComponent
        }
        return nil
    }

    /// Why `folder` may not be an app's folder, or nil: not a system folder, and nothing apps may
    /// not see beneath it or above it.
    static func problem(_ folder: String, hidden: [String]) -> String? {
        if folder == "/" || system.contains(folder) {
            return "\(folder) is a system folder; put your app in a folder of its own"
        }
        if let cover = hidden.first(where: { LandlockPolicy.beneath(folder, $0) || LandlockPolicy.beneath($0, folder) }) {
            return "its folder \(folder) overlaps \(cover), which apps may not see; put your app in a folder of its own"
        }
        return nil
    }
}
