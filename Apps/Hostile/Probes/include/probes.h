// Escape attempts, written in C because several of them are raw system calls Swift cannot make
// (ptrace and syscall are variadic), and because the dangerous ones run in a forked child whose
// fate is the answer.
#ifndef HOSTILE_PROBES_H
#define HOSTILE_PROBES_H
#include <sys/types.h>

/// The outcome of one attempt: 0 it worked, > 0 it failed with that errno, < 0 the process that
/// made it was killed by that signal.
typedef int probe_result;

probe_result probe_tcp_socket(void);
probe_result probe_udp_socket(void);
probe_result probe_socketpair(void);
probe_result probe_connect_unix(const char *path);
probe_result probe_abstract_socket(const char *name);
probe_result probe_open_read(const char *path);
probe_result probe_open_write(const char *path);
probe_result probe_exec(const char *path, int via_loader);
probe_result probe_ptrace_attach(pid_t pid);
probe_result probe_vm_read(pid_t pid);
probe_result probe_mount(void);
probe_result probe_unshare(void);
probe_result probe_io_uring(void);
probe_result probe_bpf(void);
probe_result probe_keyctl(void);
probe_result probe_signal(pid_t pid);
/// Forks until it fails or `limit` children run; returns how many ran in `count`.
probe_result probe_fork_bomb(int limit, int *count);
/// Allocates and touches memory until it fails or `limit_mib` is reached; returns MiB in `mib`.
probe_result probe_memory_bomb(int limit_mib, int *mib);
/// Sends one byte on descriptor `fd` (the broker connection): the way out that is allowed.
probe_result probe_send(int fd);

// The launcher's terminal (issue: TIOCSTI typed commands into the shell that ran mamlaunch).
/// Pushes one character into the input of each terminal among descriptors 0-2 and /dev/tty.
probe_result probe_tiocsti(void);

// Process lifetime.
probe_result probe_clear_pdeathsig(void);
/// Installs a seccomp filter with a listener of its own (in a child).
probe_result probe_seccomp_listener(void);
/// Starts a child in a session of its own named `name` (comm) that sleeps `seconds`; 0 once it runs.
probe_result probe_daemon(const char *name, int seconds);

// Namespaces through clone and clone3 (in a child).
probe_result probe_clone_newuser(void);
probe_result probe_clone3_newuser(void);

// Side channels between apps.
probe_result probe_sysv_shm(int key);
probe_result probe_sysv_msg(int key);
probe_result probe_posix_shm(const char *name);
probe_result probe_chmod(const char *path);
probe_result probe_setxattr(const char *path);
probe_result probe_utimes(const char *path);
probe_result probe_stat(const char *path);
probe_result probe_inotify(const char *path);
probe_result probe_flock(const char *path);
/// dnotify (fcntl F_NOTIFY) on a folder the app may only read: told of every read in it.
probe_result probe_dnotify(const char *path);
/// The identity of the app's /dev/null node ("device:inode") and whether the host's matches it
/// (`host`, the same form): one node shared carries locks and watches between apps.
probe_result probe_null_device(const char *host, char *out, size_t size);
/// The host name uname(2) gives the app, and whether it is the host's own (`host`).
probe_result probe_host_name(const char *host, char *out, size_t size);
probe_result probe_flock_race(const char *outside, const char *inside, int ms, int *tries);
probe_result probe_setxattr_race(const char *outside, int ms, int *tries);
probe_result probe_utimensat_race(const char *outside, int ms, int *tries);
probe_result probe_write_open_race(const char *outside, int ms, int *tries);
probe_result probe_rename_race(const char *outside, int ms, int *tries);
probe_result probe_inotify_race(const char *outside, int ms, int *tries);
probe_result probe_fcntl_lock_race(const char *outside, const char *inside, int ms, int *tries);
probe_result probe_performed_setxattr(const char *path);
probe_result probe_performed_touch(const char *path);
probe_result probe_performed_truncate(const char *path);
probe_result probe_performed_mkdir(const char *path);
probe_result probe_performed_unlink(const char *path);
probe_result probe_fanotify(void);
probe_result probe_fcntl_lock(const char *path);
probe_result probe_openat2_write(const char *path);
probe_result probe_mkdir(const char *path);
probe_result probe_read_fingerprint(const char *path);
probe_result probe_cgroup_path(void);
/// Succeeded when a mount table the app can read names one of `secrets`; `where` says which.
probe_result probe_mount_table(const char *const *secrets, int count, char *where, size_t size);
probe_result probe_name_to_handle(const char *path);
/// Reads /proc/net/unix; 0 when it lists at least one socket, else ENOENT.
probe_result probe_proc_net_unix(int *listed);
probe_result probe_read_cmdline(pid_t pid);

// Limits (in a child, so that a kill by the OOM killer is the answer).
/// Holds `mib` MiB in a memfd (mapped and touched); `held` says how much it got.
probe_result probe_memfd(int mib, int *held);
/// Writes `mib` MiB into files in the current folder (removed after); `written` says how much.
probe_result probe_fill_disk(int mib, int *written);
/// Spins for `ms` ms; `permille` is CPU time over wall time, in thousandths.
probe_result probe_cpu(int ms, int *permille);
#endif
