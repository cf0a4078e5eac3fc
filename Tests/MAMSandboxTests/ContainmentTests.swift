import Foundation
import MAMSandbox
import MAMTestSupport
import Testing

/// The containment table for kernels the suite does not run on, from their features written out.
@Suite("Sandbox: containment by layers per kernel")
struct ContainmentTests {
    static func kernel(landlock: Int?, cgroups: Result<CgroupLayout, LaunchError> = .success(.v2(base: "/sys/fs/cgroup/mamlab")),
                       privileged: Bool = true) -> Containment {
        Containment(SandboxSupport(landlockABI: landlock, seccompFilter: true, seccompNotify: true, libseccompVersion: "2.5.4",
                                   privileged: privileged, namespaces: SandboxSupport.usedNamespaces, cgroups: cgroups))
    }

    func row(_ c: Containment, _ attack: String) -> Containment.Row? { c.rows.first { $0.attack == attack } }

    @Test func debian12WithLandlockABI2IsCoveredWithoutTheScopes() {
        let c = Self.kernel(landlock: 2)
        #expect(c.uncovered.isEmpty, "\(c.table)")
        #expect(c.strength == .layered)
        #expect(row(c, "abstract sockets")?.coveredBy == ["seccomp filter"])
        #expect(row(c, "signals")?.coveredBy == ["PID namespace", "seccomp notify"])
        #expect(c.table.contains("covered (absent: Landlock abstract-socket scope (ABI 6))"), "\(c.table)")
    }

    @Test func withoutLandlockTheMountNamespaceAndSeccompCoverFiles() {
        let c = Self.kernel(landlock: nil)
        #expect(c.uncovered.isEmpty, "\(c.table)")
        #expect(row(c, "files outside the grant")?.coveredBy == ["mount namespace + own uid"])
        #expect(row(c, "writes outside the container")?.coveredBy == ["seccomp notify"])
        #expect(row(c, "the broker folder")?.coveredBy == ["mount namespace"])
    }

    @Test func cgroupV1AndTheNewestKernelAreCoveredAndTheNewestFully() {
        let v1 = Self.kernel(landlock: 2, cgroups: .success(.v1(memory: "/sys/fs/cgroup/memory/mamlab", pids: "/sys/fs/cgroup/pids/mamlab",
                                                                 cpu: "/sys/fs/cgroup/cpu/mamlab")))
        #expect(v1.uncovered.isEmpty && row(v1, "resources")?.coveredBy == ["cgroups", "rlimits per uid"], "\(v1.table)")
        let newest = Self.kernel(landlock: 7)
        #expect(newest.uncovered.isEmpty && newest.strength == .full, "\(newest.table)")
    }

    @Test func aClassLeftWithNoLayerIsRefusedByNameWithWhatIsMissingAndTheRemedy() {
        let c = Containment(SandboxSupport(landlockABI: nil, seccompFilter: false, seccompNotify: false, libseccompVersion: "2.5.4",
                                           privileged: true, namespaces: SandboxSupport.usedNamespaces,
                                           cgroups: .success(.v2(base: "/sys/fs/cgroup/mamlab"))))
        #expect(c.strength == .weaker)
        let refusal = c.refusal ?? ""
        #expect(refusal.contains("new namespaces has no cover (seccomp filters (CONFIG_SECCOMP_FILTER))"), "\(refusal)")
        #expect(refusal.contains("running other programs has no cover"), "\(refusal)")
        #expect(!refusal.contains("signals"), "the PID namespace covers signals: \(refusal)")
        let unprivileged = Self.kernel(landlock: 7, privileged: false)
        #expect(unprivileged.refusal?.contains("run mamlaunch as root") == true, "\(unprivileged.table)")
    }

    /// Root without CAP_SYS_ADMIN (root in a container with the engine's default capabilities)
    /// cannot give apps namespaces or uids of their own: doctor said "full" there and every
    /// launch failed later. It now tries what a launch does, says what is missing, exits 1, and
    /// a launch is refused with the same reason.
    @Test func rootWithoutCapSysAdminIsNotTakenForPrivileged() throws {
        #expect(geteuid() == 0, "the sandbox suites run as root")
        let setpriv = "/usr/bin/setpriv"
        try #require(FileManager.default.isExecutableFile(atPath: setpriv), "setpriv (util-linux) is missing")
        let mamlaunch = Built.directory.appendingPathComponent("mamlaunch").path
        let doctor = try ChildProcess.run(setpriv, ["--bounding-set", "-sys_admin", mamlaunch, "doctor"], timeout: 120)
        #expect(doctor.status == 1, "\(doctor.out)\(doctor.err)")
        #expect(doctor.out.contains("root, but apps cannot be isolated here: missing capabilities: CAP_SYS_ADMIN"), "\(doctor.out)")
        // (Without Landlock, classes that Landlock would still cover are named first.)
        #expect(doctor.out.contains("strength: weaker") && doctor.out.contains("refused: ")
                && doctor.out.contains("other apps' processes has no cover"), "\(doctor.out)")
        let run = try ChildProcess.run(setpriv, ["--bounding-set", "-sys_admin", mamlaunch, "run", "Hostile", "--no-broker", "--", "--exit"], timeout: 120)
        #expect(run.status != 0 && run.err.contains("missing capabilities: CAP_SYS_ADMIN"), "\(run.err)")
        // With its capabilities, the same root passes the trial.
        #expect(SandboxSupport.probe().isolationProblem == nil)
    }

    /// docs/SANDBOX.md carries doctor's table for each configuration of the kernel lab, between
    /// `<!-- doctor table: NAME -->` and its strength line; the lab compares each guest's doctor
    /// with it, and this compares it with the table computed for that kernel's features.
    @Test(arguments: [
        ("host", 7, CgroupLayout.v1(memory: "/sys/fs/cgroup/memory/mamlab", pids: "/sys/fs/cgroup/pids/mamlab", cpu: "/sys/fs/cgroup/cpu/mamlab")),
        ("debian12", 2, CgroupLayout.v2(base: "/sys/fs/cgroup/mamlab")),
        ("nolandlock", nil, CgroupLayout.v2(base: "/sys/fs/cgroup/mamlab")),
        ("cgroupv1", 2, CgroupLayout.v1(memory: "/sys/fs/cgroup/memory/mamlab", pids: "/sys/fs/cgroup/pids/mamlab", cpu: "/sys/fs/cgroup/cpu/mamlab")),
    ] as [(String, Int?, CgroupLayout)])
    func theDocsCarryDoctorsTableForEachKernelOfTheLab(config: String, landlock: Int?, cgroups: CgroupLayout) throws {
        let docs = try String(contentsOfFile: BuiltProducts.root + "/docs/SANDBOX.md", encoding: .utf8)
        let lines = docs.components(separatedBy: "\n")
        let start = try #require(lines.firstIndex(of: "<!-- doctor table: \(config) -->"), "docs/SANDBOX.md has no doctor table for \(config)")
        let end = try #require(lines[start...].firstIndex { $0.hasPrefix("strength:") })
        let table = Self.kernel(landlock: landlock, cgroups: .success(cgroups)).table
        #expect(lines[(start + 1)...end].joined(separator: "\n") == table, "doctor's table for \(config):\n\(table)")
    }
}
