// Hostile: an app without the SDK that tries to get out of its sandbox every way it can and
// prints one JSON line per attempt. Run sandboxed, every attempt must be blocked; run plainly,
// the harmless ones succeed, which shows the attempts are real.
//
// Targets come from the command line: --public-socket PATH --other-container DIR
// --broker-dir DIR --outside PATH --other-pid PID --readable PATH --shm-key N --msg-key N
// --posix-shm NAME --daemon NAME --world-writable PATH --host-null MAJOR:MINOR:INODE --host-name NAME; sizes: --memory-mib N --tasks N --disk-mib N --cpu-ms N;
// --prompt TEXT (a prompt, then a refused call); [--destructive] adds the attempts that would harm the machine if they worked; --race-ms N runs
// only the races against the supervisor's check (--race-dir DIR: a host folder every uid may
// write, for the races on times, write-opens and renames); --not-mine FOLDER only the calls the
// supervisor performs, on a folder of root's in the container.
import CHostileProbes
import Foundation

var options: [String: String] = [:]
var flags = Set<String>()
var rest = CommandLine.arguments.dropFirst()
while let arg = rest.popFirst() {
    if ["--destructive", "--exit", "--read-stdin"].contains(arg) { flags.insert(arg) } else if arg.hasPrefix("--"), let v = rest.popFirst() { options[arg] = v }
}
if flags.contains("--exit") {
    // For launch benchmarks: the first broker message, then stop.
    if let fd = ProcessInfo.processInfo.environment["MAMLAB_BROKER_FD"].flatMap(Int32.init) ?? (fcntl(3, F_GETFD) >= 0 ? 3 : nil) {
        _ = probe_send(fd)
    }
    exit(0)
}

if flags.contains("--read-stdin") {
    // What the launcher lets through as standard input (its own pipe or file; never a terminal).
    let input = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
    let data = try! JSONSerialization.data(withJSONObject: ["stdin": input], options: [.sortedKeys])
    print(String(decoding: data, as: UTF8.self))
}

func line(_ attempt: String, _ result: probe_result, _ detail: String = "") {
    line(attempt, outcome: result == 0 ? "succeeded" : "blocked", result, detail)
}

func line(_ attempt: String, outcome: String, _ result: probe_result, _ detail: String) {
    var why = detail
    if result > 0 { why += (why.isEmpty ? "" : "; ") + String(cString: strerror(result)) }
    if result < 0 { why += (why.isEmpty ? "" : "; ") + "killed by signal \(-result)" }
    let object: [String: String] = ["attempt": attempt, "result": outcome, "detail": why]
    let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    print(String(decoding: data, as: UTF8.self))
    fflush(nil)
}

// --prompt TEXT: a prompt left open on the terminal, then one refused call, whose report the
// launcher writes to the same terminal: the report must start a line of its own and the prompt
// be drawn again after it, as under any interactive app.
if let prompt = options["--prompt"] {
    FileHandle.standardOutput.write(Data(prompt.utf8))
    usleep(300_000)  // the relay shows the prompt before the report is written
    _ = probe_udp_socket()
    usleep(300_000)
    print("")
    exit(0)
}

// A flood of refused calls (issue 21): the reports about them must stay bounded.
if let n = options["--refusal-flood"].flatMap(Int.init) {
    for _ in 0..<n { _ = probe_udp_socket() }
    print(#"{"flood": \#(n)}"#)
}

// --race-ms N: only the races against the supervisor's check (each for N ms), then stop. A
// confined call named a file in the container when the supervisor looked and another when the
// kernel ran it: the probe wins if the outside file was touched.
if let ms = options["--race-ms"].flatMap(Int32.init) {
    var tries: Int32 = 0
    let inside = FileManager.default.currentDirectoryPath + "/race-lock"
    line("flock_race_system_file", probe_flock_race("/etc/ld.so.cache", inside, ms, &tries), "/etc/ld.so.cache, \(tries) tries")
    if let target = options["--world-writable"] {
        tries = 0
        let r = probe_setxattr_race(target, ms, &tries)
        // The probe cannot read the attribute back unconfined; the test reads it.
        line("setxattr_race_host_file", outcome: r == 0 ? "tried" : "failed", r, "\(target), \(tries) tries")
    }
    let system = "/etc/ld.so.cache"
    tries = 0
    line("inotify_race_system_file", probe_inotify_race(system, ms, &tries), "\(system), \(tries) tries")
    tries = 0
    line("fcntl_lock_race_system_file", probe_fcntl_lock_race(system, inside + "-fcntl", ms, &tries), "\(system), \(tries) tries")
    // In a host folder every uid may write (as /tmp): times.txt and write.txt, and a new name.
    if let folder = options["--race-dir"] {
        for (attempt, probe, file) in [("utimensat_race_host_file", probe_utimensat_race, "times.txt"),
                                       ("write_open_race_host_file", probe_write_open_race, "write.txt"),
                                       ("rename_race_host_folder", probe_rename_race, "escaped-rename.txt")] {
            tries = 0
            let r = probe(folder + "/" + file, ms, &tries)
            line(attempt, outcome: r == 0 ? "tried" : "failed", r, "\(folder)/\(file), \(tries) tries")
        }
    }
    exit(0)
}

// --not-mine FOLDER: a folder of root's in the container, holding root.txt (mode 0644) and
// locked/open.txt (mode 0666 in a folder of mode 0700). The supervisor performs these calls for
// the app; each must fail as it would for the app's uid.
if let folder = options["--not-mine"] {
    let file = folder + "/root.txt"
    line("performed_setxattr_not_mine", probe_performed_setxattr(file), file)
    line("performed_touch_not_mine", probe_performed_touch(file), file)
    line("performed_truncate_not_mine", probe_performed_truncate(file), file)
    line("performed_mkdir_not_mine", probe_performed_mkdir(folder + "/new"), folder + "/new")
    line("performed_unlink_not_mine", probe_performed_unlink(file), file)
    // A file any uid may write, in a folder of root's the app's uid may not search (0700).
    let behind = folder + "/locked/open.txt"
    line("performed_write_behind_locked_folder", probe_open_write(behind), behind)
    line("performed_setxattr_behind_locked_folder", probe_performed_setxattr(behind), behind)
    exit(0)
}

let container = FileManager.default.currentDirectoryPath
let publicSocket = options["--public-socket"] ?? "/run/mambroker.sock"
// Probes aimed at another app need a real one (scripts/hostile-pair starts one): a default would
// aim at the app itself (pid 1 of its own namespace) or at a shared folder, and "succeed".
let otherContainer = options["--other-container"]
let brokerDir = options["--broker-dir"] ?? "/var/lib/mambroker"
let outside = options["--outside"] ?? "/tmp/hostile-escape"
let otherPID = options["--other-pid"].flatMap { pid_t($0) }

/// A probe aimed at another app, or a line saying it was not tried and how to give it a target.
func aimed<T>(_ attempt: String, _ target: T?, option: String, _ probe: (T) -> Void) {
    if let target { probe(target); return }
    let object = ["attempt": attempt, "result": "not tried", "detail": "no \(option): give another app's (scripts/hostile-pair runs one)"]
    print(String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self))
}
let parent = getppid()

line("tcp_socket", probe_tcp_socket())
line("udp_socket", probe_udp_socket())
line("unix_socketpair", probe_socketpair())
line("connect_broker_public_socket", probe_connect_unix(publicSocket), publicSocket)
line("connect_abstract_socket", probe_abstract_socket("mamlab-hostile-test"), "@mamlab-hostile-test")
aimed("read_other_container", otherContainer, option: "--other-container") { line("read_other_container", probe_open_read($0 + "/secret.txt"), $0 + "/secret.txt") }
line("read_broker_state", probe_open_read(brokerDir + "/state.sqlite"), brokerDir + "/state.sqlite")
line("read_broker_audit", probe_open_read(brokerDir + "/audit.jsonl"), brokerDir + "/audit.jsonl")
line("write_outside_container", probe_open_write(outside), outside)
line("exec_shell", probe_exec("/bin/sh", 0), "/bin/sh")
line("exec_shell_via_loader", probe_exec("/bin/sh", 1), "ld.so /bin/sh")
aimed("signal_other_app", otherPID, option: "--other-pid") { line("signal_other_app", probe_signal($0), "pid \($0)") }
line("io_uring_setup", probe_io_uring())
line("keyctl", probe_keyctl())
line("process_vm_readv_parent", probe_vm_read(parent), "pid \(parent)")
line("unshare_user_namespace", probe_unshare())
// The launcher's terminal: typing into it would run commands in the shell that started mamlaunch.
line("tiocsti_terminal", probe_tiocsti())
// Escape sequences to the terminal (retitle the window); the launcher's relay must defuse them.
print(#"{"escape": "\#u{1b}]0;hostile\#u{07}\#u{1b}[2J"}"#)
// The same in 8-bit form: a raw 0x9B byte is CSI to a terminal not in UTF-8 mode.
fflush(nil)
FileHandle.standardOutput.write(Data(#"{"c1": ""#.utf8) + Data([0x9b]) + Data(#"2J"}"#.utf8) + Data("\n".utf8))
// Outliving the app and the launcher.
line("clear_parent_death_signal", probe_clear_pdeathsig())
line("seccomp_own_listener", probe_seccomp_listener())
if let name = options["--daemon"] { line("setsid_daemon", probe_daemon(name, 20), "\(name), judged by whether it outlives the app") }
// Namespaces through clone and clone3.
line("clone_new_user_namespace", probe_clone_newuser())
line("clone3_new_user_namespace", probe_clone3_newuser())
// Reads the grant should not cover (a symlink beside the executable must not widen it).
if let readable = options["--readable"] { line("read_outside_grant", probe_open_read(readable), readable) }
// Side channels between apps.
if let key = options["--shm-key"].flatMap(Int32.init) { line("sysv_shm_other_app", probe_sysv_shm(key), "key \(key)") }
if let key = options["--msg-key"].flatMap(Int32.init) { line("sysv_msg_other_app", probe_sysv_msg(key), "key \(key)") }
if let name = options["--posix-shm"] { line("posix_shm_other_app", probe_posix_shm(name), "/dev/shm/\(name)") }
aimed("chmod_other_container", otherContainer, option: "--other-container") { line("chmod_other_container", probe_chmod($0), $0) }
aimed("setxattr_other_container", otherContainer, option: "--other-container") { line("setxattr_other_container", probe_setxattr($0), $0) }
aimed("utimes_other_container", otherContainer, option: "--other-container") { line("utimes_other_container", probe_utimes($0), $0) }
aimed("stat_other_container", otherContainer, option: "--other-container") { line("stat_other_container", probe_stat($0), $0) }
line("stat_broker_folder", probe_stat(brokerDir), brokerDir)
line("inotify_broker_folder", probe_inotify(brokerDir), brokerDir)
aimed("name_to_handle_other_container", otherContainer, option: "--other-container") { line("name_to_handle_other_container", probe_name_to_handle($0), $0) }
// Issue 21: channels and traces Landlock has no right for. A lock on a file every app reads,
// a watch on a host folder (new names in it), fanotify, attributes and times of a host file
// the app's uid may write.
line("flock_system_file", probe_flock("/etc/ld.so.cache"), "/etc/ld.so.cache")
line("fcntl_lock_system_file", probe_fcntl_lock("/etc/ld.so.cache"), "/etc/ld.so.cache")
let hostFolder = (outside as NSString).deletingLastPathComponent
line("inotify_host_folder", probe_inotify(hostFolder), hostFolder)
line("fanotify_init", probe_fanotify())
// The folder of time zones is bound from the host into every app's root, the same inode.
line("dnotify_shared_folder", probe_dnotify("/usr/share/zoneinfo"), "/usr/share/zoneinfo")
// The inodes every app could reach: its null device and its host name must be its own.
aimed("null_device_shared", options["--host-null"], option: "--host-null") { host in
    var seen = [CChar](repeating: 0, count: 64)
    let r = probe_null_device(host, &seen, seen.count)
    line("null_device_shared", r, "app's /dev/null \(String(cString: seen)), host's \(host)")
}
aimed("host_name_shown", options["--host-name"], option: "--host-name") { host in
    var seen = [CChar](repeating: 0, count: 128)
    let r = probe_host_name(host, &seen, seen.count)
    line("host_name_shown", r, "the app is told \"\(String(cString: seen))\"")
}
// Writes Landlock refuses on its own, silently: they must be reported too.
line("openat2_write_outside", probe_openat2_write(hostFolder + "/escaped-openat2.txt"), hostFolder + "/escaped-openat2.txt")
line("mkdir_outside", probe_mkdir(hostFolder + "/escaped-folder"), hostFolder + "/escaped-folder")
aimed("setxattr_host_file", options["--world-writable"], option: "--world-writable") { line("setxattr_host_file", probe_setxattr($0), $0) }
aimed("utimes_host_file", options["--world-writable"], option: "--world-writable") { line("utimes_host_file", probe_utimes($0), $0) }
// The same through a link in the container, which may be a tmpfs only the app's namespace shows.
aimed("setxattr_via_container_link", options["--world-writable"], option: "--world-writable") { target in
    let link = FileManager.default.currentDirectoryPath + "/to-host"
    unlink(link)
    symlink(target, link)
    line("setxattr_via_container_link", probe_setxattr(link), "\(link) -> \(target)")
    unlink(link)
    // A link to a folder, then "..": the kernel takes the link first, a lexical reading does not.
    let folder = (target as NSString).deletingLastPathComponent
    symlink(folder, link)
    let around = "to-host/../\((folder as NSString).lastPathComponent)/\((target as NSString).lastPathComponent)"
    line("setxattr_via_link_and_dotdot", probe_setxattr(around), around)
    // And a write the same way.
    let write = "to-host/../\((folder as NSString).lastPathComponent)/escaped-dotdot.txt"
    line("write_via_link_and_dotdot", probe_open_write(write), write)
    unlink(link)
}
// The host's fingerprint and cgroup names (issue 21).
line("read_boot_id", probe_read_fingerprint("/proc/sys/kernel/random/boot_id"), "/proc/sys/kernel/random/boot_id")
line("read_kernel_cmdline", probe_read_fingerprint("/proc/cmdline"), "/proc/cmdline")
line("read_host_cgroup_path", probe_cgroup_path(), "/proc/self/cgroup")
// The launcher's folders named in a mount table (issue 21): the broker's and the containers'.
do {
    let secrets = [brokerDir] + (otherContainer.map { [($0 as NSString).deletingLastPathComponent] } ?? [])
    var where_ = [CChar](repeating: 0, count: 512)
    let found = withCStringArray(secrets) { probe_mount_table($0, Int32(secrets.count), &where_, where_.count) }
    line("read_mount_table_host_paths", found, String(decoding: where_.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
}
var listed: Int32 = 0
line("read_proc_net_unix", probe_proc_net_unix(&listed), "\(listed) sockets listed")
aimed("read_other_cmdline", otherPID, option: "--other-pid") { line("read_other_cmdline", probe_read_cmdline($0), "pid \($0)") }
// Limits that must bind for the app as a whole.
let memoryMiB = Int32(options["--memory-mib"] ?? "") ?? 2048
var held: Int32 = 0
let memfd = probe_memfd(memoryMiB, &held)
line("memfd_hold", memfd, "\(held) of \(memoryMiB) MiB")
let tasks = Int32(options["--tasks"] ?? "") ?? 1000
var forked: Int32 = 0
let fork = probe_fork_bomb(tasks, &forked)
line("many_tasks", fork, "\(forked) of \(tasks) processes")
let diskMiB = Int32(options["--disk-mib"] ?? "") ?? 2048
var written: Int32 = 0
let disk = probe_fill_disk(diskMiB, &written)
line("fill_container", disk, "\(written) of \(diskMiB) MiB")
var permille: Int32 = 0
_ = probe_cpu(Int32(options["--cpu-ms"] ?? "") ?? 600, &permille)
// A CPU-bound thread on a machine with a free core gets most of it; under the limit it cannot.
line("cpu_time", outcome: permille >= 300 ? "succeeded" : "blocked", 0, "\(permille / 10)% of one CPU")
if flags.contains("--destructive") {
    // These would harm the machine if they worked; they run only when asked (in the sandbox).
    line("ptrace_parent", probe_ptrace_attach(parent), "pid \(parent)")
    line("mount_tmpfs", probe_mount())
    line("bpf_prog_load", probe_bpf())
    var count: Int32 = 0
    let bomb = probe_fork_bomb(5000, &count)
    line("fork_bomb", bomb, "\(count) processes")
    var mib: Int32 = 0
    let memory = probe_memory_bomb(16384, &mib)
    line("memory_bomb", memory, "\(mib) MiB")
}
// Who the app runs as, and how its container is kept.
var st = stat()
_ = stat(container, &st)
print(#"{"identity": {"uid": \#(getuid()), "pid": \#(getpid()), "container_mode": "\#(String(st.st_mode & 0o777, radix: 8))"}}"#)
// Not escapes: what the app may do must still work, or the sandbox is merely broken.
let own = container + "/own.txt"
print(#"{"check": "write_own_container", "result": "\#(probe_open_write(own) == 0 ? "ok" : "failed")"}"#)
if let fd = ProcessInfo.processInfo.environment["MAMLAB_BROKER_FD"].flatMap(Int32.init) {
    // Not an escape: the one channel the app is given still works.
    let r = probe_send(fd)
    print(#"{"channel": "broker", "result": "\#(r == 0 ? "open" : "closed")"}"#)
}
print(#"{"container": "\#(container)", "done": true}"#)
fflush(nil)
// For tests that end the launcher while the app runs, or run two apps at once.
if let seconds = options["--linger"].flatMap(UInt32.init) { sleep(seconds) }

/// Calls `body` with the strings as a C array of C strings.
func withCStringArray<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let copies = strings.map { UnsafePointer(strdup($0)) }
    defer { copies.forEach { free(UnsafeMutablePointer(mutating: $0)) } }
    return copies.withUnsafeBufferPointer { body($0.baseAddress!) }
}
