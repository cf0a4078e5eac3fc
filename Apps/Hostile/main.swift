// Hostile: an app without the SDK that tries to get out of its sandbox every way it can and
// prints one JSON line per attempt. Run sandboxed, every attempt must be blocked; run plainly,
// the harmless ones succeed, which shows the attempts are real.
//
// Targets come from the command line: --public-socket PATH --other-container DIR
// --broker-dir DIR --outside PATH --other-pid PID [--destructive]
import CHostileProbes
import Foundation

var options: [String: String] = [:]
var flags = Set<String>()
var rest = CommandLine.arguments.dropFirst()
while let arg = rest.popFirst() {
    if arg == "--destructive" || arg == "--exit" { flags.insert(arg) } else if arg.hasPrefix("--"), let v = rest.popFirst() { options[arg] = v }
}
if flags.contains("--exit") {
    // For launch benchmarks: the first broker message, then stop.
    if let fd = ProcessInfo.processInfo.environment["MAMLAB_BROKER_FD"].flatMap(Int32.init) ?? (fcntl(3, F_GETFD) >= 0 ? 3 : nil) {
        _ = probe_send(fd)
    }
    exit(0)
}

func line(_ attempt: String, _ result: probe_result, _ detail: String = "") {
    let outcome = result == 0 ? "succeeded" : "blocked"
    var why = detail
    if result > 0 { why += (why.isEmpty ? "" : "; ") + String(cString: strerror(result)) }
    if result < 0 { why += (why.isEmpty ? "" : "; ") + "killed by signal \(-result)" }
    let object: [String: String] = ["attempt": attempt, "result": outcome, "detail": why]
    let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    print(String(decoding: data, as: UTF8.self))
    fflush(nil)
}

let container = FileManager.default.currentDirectoryPath
let publicSocket = options["--public-socket"] ?? "/run/mambroker.sock"
let otherContainer = options["--other-container"] ?? "/tmp"
let brokerDir = options["--broker-dir"] ?? "/var/lib/mambroker"
let outside = options["--outside"] ?? "/tmp/hostile-escape"
let otherPID = pid_t(options["--other-pid"] ?? "1") ?? 1
let parent = getppid()

line("tcp_socket", probe_tcp_socket())
line("udp_socket", probe_udp_socket())
line("unix_socketpair", probe_socketpair())
line("connect_broker_public_socket", probe_connect_unix(publicSocket), publicSocket)
line("connect_abstract_socket", probe_abstract_socket("mamlab-hostile-test"), "@mamlab-hostile-test")
line("read_other_container", probe_open_read(otherContainer + "/secret.txt"), otherContainer + "/secret.txt")
line("read_broker_state", probe_open_read(brokerDir + "/state.sqlite"), brokerDir + "/state.sqlite")
line("read_broker_audit", probe_open_read(brokerDir + "/audit.jsonl"), brokerDir + "/audit.jsonl")
line("write_outside_container", probe_open_write(outside), outside)
line("exec_shell", probe_exec("/bin/sh", 0), "/bin/sh")
line("exec_shell_via_loader", probe_exec("/bin/sh", 1), "ld.so /bin/sh")
line("signal_other_app", probe_signal(otherPID), "pid \(otherPID)")
line("io_uring_setup", probe_io_uring())
line("keyctl", probe_keyctl())
line("process_vm_readv_parent", probe_vm_read(parent), "pid \(parent)")
line("unshare_user_namespace", probe_unshare())
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
// Not escapes: what the app may do must still work, or the sandbox is merely broken.
let own = container + "/own.txt"
print(#"{"check": "write_own_container", "result": "\#(probe_open_write(own) == 0 ? "ok" : "failed")"}"#)
if let fd = ProcessInfo.processInfo.environment["MAMLAB_BROKER_FD"].flatMap(Int32.init) {
    // Not an escape: the one channel the app is given still works.
    let r = probe_send(fd)
    print(#"{"channel": "broker", "result": "\#(r == 0 ? "open" : "closed")"}"#)
}
print(#"{"container": "\#(container)", "done": true}"#)
