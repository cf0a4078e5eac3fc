import Foundation
import MAMCatalog
import MAMTestSupport
import Testing

/// The Debian package (`scripts/package`), installed on this machine as an admin would install
/// it: the demo from an empty folder with the checkout and the toolchain out of sight, the man
/// page and the completions, then removed with nothing of it left.
@Suite("the Debian package")
struct PackageTests {
    static let shell = "/bin/bash"

    /// Runs a shell command, bounded, off the shared pool; the result's output and errors together.
    static func sh(_ command: String, timeout: Double, environment: [String: String]? = nil, directory: String? = nil) async throws
        -> (status: Int32, out: String, err: String) {
        let r = try await ChildProcess.runOffPool(shell, ["-c", command], environment: environment ?? ProcessInfo.processInfo.environment,
                                                  directory: directory, timeout: timeout)
        return (r.status, r.out, r.err)
    }

    static func isInstalled() async throws -> Bool {
        let r = try await sh("dpkg-query -W -f='${Status}' mamlab 2>/dev/null", timeout: 30)
        return r.out.contains("install ok installed")
    }

    /// The folder of the Swift runtime this test process loaded: the toolchain's.
    static var toolchainLibraries: String? {
        // Read to its end: the file reports a size of 0, which String(contentsOfFile:) believes.
        guard let data = FileHandle(forReadingAtPath: "/proc/self/maps")?.readDataToEndOfFile() else { return nil }
        let maps = String(decoding: data, as: UTF8.self)
        for line in maps.split(separator: "\n") {
            guard let slash = line.firstIndex(of: "/") else { continue }
            let path = String(line[slash...])
            if path.hasSuffix("/libswiftCore.so") { return (path as NSString).deletingLastPathComponent }
        }
        return nil
    }

    /// The installed layout's data folder is found only beside `PREFIX/lib/mamlab`.
    @Test func theInstalledDataFolderIsBesideTheProgramsOwn() {
        #expect(Catalog.installedData(toolFolder: "/usr/lib/mamlab") == "/usr/share/mamlab")
        #expect(Catalog.installedData(toolFolder: "/opt/lab/lib/mamlab/") == "/opt/lab/share/mamlab")
        #expect(Catalog.installedData(toolFolder: "/usr/lib") == nil)
        #expect(Catalog.installedData(toolFolder: "/usr/lib/mamlab/x") == nil)
        #expect(Catalog.installedData(toolFolder: "/work/main/.build/debug") == nil)
        #expect(Catalog.installedData(toolFolder: "/mamlab") == nil)
    }

    @Test(.timeLimit(.minutes(10)))
    func installsRunsTheDemoFromAnEmptyFolderAndRemovesCleanly() async throws {
        try #require(getuid() == 0, "installing a package takes root")
        try #require(try await !Self.isInstalled(),
                     "a mamlab package is installed on this machine already; this test installs and removes its own (apt-get purge mamlab first)")
        let toolchain = try #require(Self.toolchainLibraries, "no libswiftCore.so mapped in the test process")
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-package-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: work + "/empty", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let bin = CommandRunner.executable.deletingLastPathComponent().path
        let root = CommandRunner.root.path

        // Packaged from the programs this suite runs (no second build), uncompressed for speed.
        let built = try await Self.sh("'\(root)/scripts/package' --bin-path '\(bin)' --compression none --out '\(work)'", timeout: 300)
        try #require(built.status == 0, "scripts/package: \(built.err.suffix(3000))")
        let deb = try #require(built.out.split(separator: "\n").last.map(String.init), "no package path printed")
        #expect(deb.hasPrefix(work + "/mamlab_") && deb.hasSuffix(".deb"), "\(deb)")

        // What the package holds, and which of those paths were on the machine before.
        let listing = try await Self.sh("dpkg-deb --fsys-tarfile '\(deb)' | tar -t | sed 's|^\\./|/|; s|/$||'", timeout: 120)
        try #require(listing.status == 0, "\(listing.err)")
        let paths = listing.out.split(separator: "\n").map(String.init).filter { $0.count > 1 }
        #expect(paths.contains("/usr/lib/mamlab/mamlaunch") && paths.contains("/usr/share/mamlab/Policies/contoso/tenant.json"), "\(paths.prefix(20))")
        #expect(paths.contains("/usr/lib/mamlab/libswiftCore.so"), "the Swift runtime is carried")
        let before = Set(paths.filter { FileManager.default.fileExists(atPath: $0) })
        #expect(before.allSatisfy { !$0.contains("mamlab") }, "only shared folders exist before: \(before.filter { $0.contains("mamlab") })")

        let aptEnv = ProcessInfo.processInfo.environment.merging(["DEBIAN_FRONTEND": "noninteractive"]) { _, b in b }
        var removed = false
        defer {
            // Never leave the package behind, whatever failed.
            if !removed { _ = try? ChildProcess.run(Self.shell, ["-c", "apt-get purge -y mamlab"], environment: aptEnv, timeout: 120) }
        }
        let install = try await Self.sh("apt-get install -y --no-install-recommends '\(deb)'", timeout: 300, environment: aptEnv)
        try #require(install.status == 0, "apt-get install: \(install.out.suffix(2000)) \(install.err.suffix(2000))")

        // The demo from an empty folder: no MAMLAB_ROOT, a plain PATH, and the checkout's build
        // folder and the toolchain's runtime covered by empty folders in a mount namespace of
        // its own, so the installed programs can lean on neither.
        let hidden = work + "/hidden"
        try FileManager.default.createDirectory(atPath: hidden, withIntermediateDirectories: true)
        let demo = try await Self.sh(
            "exec unshare --mount sh -c 'mount --bind \"$1\" \"$2\" && mount --bind \"$1\" \"$3\" && exec env -i PATH=/usr/bin:/bin HOME=/root mamlab-demo' demo '\(hidden)' '\(toolchain)' '\(bin)'",
            timeout: 240, directory: work + "/empty")
        #expect(demo.status == 0, "mamlab-demo: \(demo.err.suffix(3000))")
        #expect(demo.err.contains("cells (live)") && demo.err.contains("all passed, 0 leaks"), "\(demo.err.suffix(1500))")
        #expect(FileManager.default.fileExists(atPath: work + "/empty/matrix.html"), "the report is written in the working folder")
        #expect(demo.out.contains("/usr/share/mamlab/Policies/contoso/policies/managed-only-filtered.json"), "\(demo.out.prefix(2000))")
        #expect(demo.out.contains("ENCRYPTED  send") && demo.out.contains("BLOCKED"), "the explained decisions: \(demo.out.suffix(1500))")

        // man mamlaunch, and the completion bash loads for it.
        let man = try await Self.sh("man -w mamlaunch && MANPAGER=cat MANWIDTH=100 man mamlaunch", timeout: 60)
        #expect(man.status == 0 && man.out.hasPrefix("/usr/share/man/man1/mamlaunch.1.gz"), "\(man.out.prefix(300)) \(man.err)")
        #expect(man.out.contains("SYNOPSIS") && man.out.contains("sharing-matrix experiment"), "\(man.out.prefix(1500))")
        #expect(!man.err.contains("mdoc warning"), "\(man.err.prefix(500))")
        let completion = try await Self.sh("""
            source /usr/share/bash-completion/completions/mamlaunch
            COMP_WORDS=(mamlaunch ma); COMP_CWORD=1; COMP_LINE='mamlaunch ma'; COMP_POINT=${#COMP_LINE}
            _mamlaunch; printf '%s\\n' "${COMPREPLY[@]}"
            """, timeout: 60)
        #expect(completion.status == 0 && completion.out.split(separator: "\n").contains("matrix"), "\(completion.out) \(completion.err)")
        for (file, first) in [("/usr/share/zsh/vendor-completions/_mamlaunch", "#compdef mamlaunch"),
                              ("/usr/share/fish/vendor_completions.d/mamlaunch.fish", "")] {
            let text = try String(contentsOfFile: file, encoding: .utf8)
            #expect(text.hasPrefix(first) && text.contains("matrix"), "\(file)")
        }

        let purge = try await Self.sh("apt-get purge -y mamlab", timeout: 300, environment: aptEnv)
        removed = purge.status == 0
        #expect(purge.status == 0, "apt-get purge: \(purge.err.suffix(2000))")
        #expect(try await !Self.isInstalled())
        let left = paths.filter { !before.contains($0) && Self.isThere($0) }
        #expect(left.isEmpty, "left behind: \(left.prefix(20))")
    }

    /// Whether anything is at the path, a dangling link included.
    static func isThere(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }
}
