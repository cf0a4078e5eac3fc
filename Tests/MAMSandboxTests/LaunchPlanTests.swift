import CMAMSandbox
@testable import MAMSandbox
import Testing

/// The launch as values: what the child does, in order, for a given app, without a process.
@Suite("Sandbox: the launch plan")
struct LaunchPlanTests {
    static let root = AppRoot(binds: [AppRoot.Bind(source: "/opt/app/bin", target: "/opt/app/bin")],
                              links: [AppRoot.Link(path: "/lib64", target: "usr/lib64")], hidden: [])
    static let landlock = LandlockPolicy(abi: 6, rules: [(path: "/container", access: LandlockPolicy.readWrite)])
    static let limits = [LaunchPlan.Limit(resource: mam_rlimit_nproc, value: 64), LaunchPlan.Limit(resource: mam_rlimit_nofile, value: 256),
                         LaunchPlan.Limit(resource: mam_rlimit_core, value: 0)]

    @Test func anIsolatedNativeAppOnCgroupV1() {
        let plan = LaunchPlan.make(
            namespaces: [.pid, .mount, .ipc, .uts], joinsNetwork: true, root: Self.root, container: "/var/lib/c/com.example.app",
            containerInApp: "/container", containerTmpfs: "size=1024", cgroups: .joinedByChild(count: 3), broker: true,
            limits: Self.limits, identity: (uid: 1_800_000_001, gid: 1_800_000_001), landlock: Self.landlock,
            seccompInstructions: 300, program: .descriptor, arguments: ["/opt/app/bin/app"], environment: ["HOME=/container"])
        #expect(plan.steps == [
            .clone([.pid, .mount, .ipc, .uts]), .dieWithLauncher, .ownSession, .joinNetwork,
            .ownRoot(Self.root, container: .tmpfs(options: "size=1024"), at: "/container"),
            .cgroups(.joinedByChild(count: 3)), .cgroupNamespace, .standardDescriptors(broker: true),
            .resourceLimits([Self.limits[0], Self.limits[2]]), .workingDirectory("/container"),
            .identity(uid: 1_800_000_001, gid: 1_800_000_001), .noNewPrivileges, .landlock(Self.landlock),
            .seccomp(instructions: 300), .openFilesLimit(256), .closeOtherDescriptors,
            .exec(.descriptor, arguments: ["/opt/app/bin/app"], environment: ["HOME=/container"]),
        ])
        // Named, not numbers: the flags are the kernel's.
        #expect(Namespaces([.pid, .mount, .ipc, .uts]).rawValue == 0x2000_0000 | 0x0002_0000 | 0x0800_0000 | 0x0400_0000)
    }

    @Test func aScriptRunByTheInvokingUserWithoutIsolation() {
        let plan = LaunchPlan.make(
            namespaces: [], joinsNetwork: false, root: AppRoot(), container: "/tmp/c/com.example.py", containerInApp: "/tmp/c/com.example.py",
            containerTmpfs: nil, cgroups: nil, broker: false, limits: [], identity: nil, landlock: nil, seccompInstructions: 300,
            program: .path("/opt/app/run.py"), arguments: ["/opt/app/run.py"], environment: [])
        #expect(plan.steps == [
            .clone([]), .dieWithLauncher, .ownSession, .standardDescriptors(broker: false), .resourceLimits([]),
            .workingDirectory("/tmp/c/com.example.py"), .noNewPrivileges, .seccomp(instructions: 300), .closeOtherDescriptors,
            .exec(.path("/opt/app/run.py"), arguments: ["/opt/app/run.py"], environment: []),
        ])
    }
}
