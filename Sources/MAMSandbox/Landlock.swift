import CMAMSandbox
import Foundation
import Glibc

/// The Landlock part of a launch: which rights the kernel should police and where the app has them.
public struct LandlockPolicy: Sendable {
    // Filesystem rights (kernel uapi), with the ABI that introduced the later ones.
    public static let execute: UInt64 = 1 << 0
    public static let writeFile: UInt64 = 1 << 1
    public static let readFile: UInt64 = 1 << 2
    public static let readDir: UInt64 = 1 << 3
    public static let removeDir: UInt64 = 1 << 4
    public static let removeFile: UInt64 = 1 << 5
    public static let makeChar: UInt64 = 1 << 6
    public static let makeDir: UInt64 = 1 << 7
    public static let makeReg: UInt64 = 1 << 8
    public static let makeSock: UInt64 = 1 << 9
    public static let makeFifo: UInt64 = 1 << 10
    public static let makeBlock: UInt64 = 1 << 11
    public static let makeSym: UInt64 = 1 << 12
    public static let refer: UInt64 = 1 << 13      // ABI 2
    public static let truncate: UInt64 = 1 << 14   // ABI 3
    public static let ioctlDev: UInt64 = 1 << 15   // ABI 5
    // Network rights (ABI 4): handled with no rule, they forbid TCP bind and connect outright.
    public static let bindTCP: UInt64 = 1 << 0
    public static let connectTCP: UInt64 = 1 << 1
    // Scopes (ABI 6): no abstract Unix sockets or signals across the sandbox's edge.
    public static let scopeAbstractUnixSocket: UInt64 = 1 << 0
    public static let scopeSignal: UInt64 = 1 << 1

    public static let read = readFile | readDir
    public static let readExecute = read | execute
    public static let readWrite = read | writeFile | removeDir | removeFile | makeDir | makeReg | makeSym | makeFifo | makeSock
        | refer | truncate

    public var abi: Int
    public var rules: [(path: String, access: UInt64)]

    public static func handledFilesystem(abi: Int) -> UInt64 {
        var all: UInt64 = (1 << 13) - 1
        if abi >= 2 { all |= refer }
        if abi >= 3 { all |= truncate }
        if abi >= 5 { all |= ioctlDev }
        return all
    }

    public var handledFilesystem: UInt64 { Self.handledFilesystem(abi: abi) }
    public var handledNetwork: UInt64 { abi >= 4 ? Self.bindTCP | Self.connectTCP : 0 }
    public var scoped: UInt64 { abi >= 6 ? Self.scopeAbstractUnixSocket | Self.scopeSignal : 0 }

    /// The kernel's Landlock ABI, or nil when Landlock is off or missing.
    public static func kernelABI() -> Int? {
        let abi = mam_landlock_abi()
        return abi > 0 ? Int(abi) : nil
    }

    /// What an app needs to run and nothing else: its executable (and a script's interpreter, that
    /// one file), the Swift runtime and system libraries (read and execute; an interpreter's own
    /// modules live there too), a few read-only system files, the app's own folder (read-only), and
    /// its container (read-write).
    ///
    /// Every rule is built from a resolved path: Landlock grants whatever a path leads to, so a
    /// symbolic link planted beside the executable (`libzz.so -> /`) must never become a rule.
    /// The root directory itself is never granted.
    public static func forApp(executable: String, container: String, abi: Int, interpreter: String? = nil, appFolder: String? = nil,
                              extraReadOnly: [String] = [], libraries: [String]? = nil) -> LandlockPolicy {
        var rules: [(String, UInt64)] = []
        func grant(_ path: String, _ access: UInt64) {
            guard let real = realPath(path), real != "/" else { return }
            rules.append((real, access))
        }
        grant(executable, readExecute)
        if let interpreter { grant(interpreter, readExecute) }
        if let appFolder { grant(appFolder, read) }
        grant(container, readWrite)
        for dir in libraries ?? libraryDirectories(for: executable) { grant(dir, readExecute) }
        for path in ["/etc/ld.so.cache", "/etc/localtime", "/usr/share/zoneinfo", "/proc", "/sys/devices/system/cpu",
                     "/dev/urandom", "/dev/random"] + extraReadOnly {
            grant(path, read)
        }
        grant("/dev/null", read | writeFile)
        return LandlockPolicy(abi: abi, rules: rules)
    }

    /// The system library folders.
    static let systemLibraries = ["/lib", "/lib64", "/usr/lib", "/usr/lib64"]

    /// The system library folders, the folder of each shared library the launcher itself has
    /// mapped (the Swift runtime is found this way wherever the toolchain lives; the kernel
    /// names mapped files by their real path), and shared libraries beside the executable
    /// (SwiftPM's build folder keeps some there), each only if it resolves to a regular file in
    /// the executable's own folder or a library folder.
    static func libraryDirectories(for executable: String) -> [String] {
        var dirs = mappedLibraryDirectories
        guard let ownDir = realPath((executable as NSString).deletingLastPathComponent) else { return dirs }
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: ownDir)) ?? [] where entry.hasSuffix(".so") {
            guard let real = realPath((ownDir as NSString).appendingPathComponent(entry)), isRegularFile(real),
                  beneath(real, ownDir) || dirs.contains(where: { beneath(real, $0) }) else { continue }
            dirs.append(real)
        }
        return dirs
    }

    /// The system library folders and those of the libraries the launcher has mapped: read
    /// once, since they do not change while it runs.
    static let mappedLibraryDirectories: [String] = {
        var dirs = systemLibraries.compactMap(realPath)
        if let maps = readProcFile("/proc/self/maps") {
            for line in maps.split(separator: "\n") {
                guard let slash = line.firstIndex(of: "/") else { continue }
                let path = String(line[slash...])
                guard path.contains(".so"), isRegularFile(path) else { continue }
                let dir = (path as NSString).deletingLastPathComponent
                if dir != "/" && !dirs.contains(where: { beneath(dir, $0) }) { dirs.append(dir) }
            }
        }
        return dirs
    }()

    /// The path with every symbolic link, `.` and `..` resolved, or nil when it does not exist.
    static func realPath(_ path: String) -> String? {
        guard let c = realpath(path, nil) else { return nil }
        defer { free(c) }
        return String(cString: c)
    }

    static func isRegularFile(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
    }

    static func beneath(_ path: String, _ dir: String) -> Bool {
        path == dir || path.hasPrefix(dir == "/" ? "/" : dir + "/")
    }
}

/// A /proc file's text, read with plain read(2) until its end. Foundation's String(contentsOfFile:)
/// came back empty for /proc/self/maps on Debian 12's kernel (6.1), where the file reports size 0:
/// the launcher then granted its apps no Swift runtime, and every Swift app failed to load.
func readProcFile(_ path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = read(fd, &buffer, buffer.count)
        if n < 0 && errno == EINTR { continue }
        if n < 0 { return nil }
        if n == 0 { break }
        bytes += buffer[0..<n]
    }
    return String(decoding: bytes, as: UTF8.self)
}
