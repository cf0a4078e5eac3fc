import MAMSandbox
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
}
