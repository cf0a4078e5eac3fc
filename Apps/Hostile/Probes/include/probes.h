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
#endif
