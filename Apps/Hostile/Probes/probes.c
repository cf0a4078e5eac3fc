#define _GNU_SOURCE
#include "probes.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <sched.h>
#include <unistd.h>
#include <stdio.h>

static probe_result fail(void) { return errno ? errno : EIO; }

// Runs `body` in a child so a kill does not end the prober; the child's exit code is the result.
static probe_result in_child(int (*body)(void *), void *arg) {
    pid_t pid = fork();
    if (pid < 0) return fail();
    if (pid == 0) _exit(body(arg) & 0xff);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (WIFSIGNALED(status)) return -WTERMSIG(status);
    return WEXITSTATUS(status);
}

static probe_result with_socket(int domain, int type) {
    int fd = socket(domain, type, 0);
    if (fd < 0) return fail();
    close(fd);
    return 0;
}

probe_result probe_tcp_socket(void) { return with_socket(AF_INET, SOCK_STREAM); }
probe_result probe_udp_socket(void) { return with_socket(AF_INET, SOCK_DGRAM); }

probe_result probe_socketpair(void) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return fail();
    close(sv[0]); close(sv[1]);
    return 0;
}

probe_result probe_connect_unix(const char *path) {
    int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
    if (fd < 0) return fail();
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    strncpy(a.sun_path, path, sizeof a.sun_path - 1);
    int rc = connect(fd, (struct sockaddr *)&a, sizeof a);
    int e = errno;
    close(fd);
    return rc == 0 ? 0 : (e ? e : EIO);
}

// Listens on an abstract name and connects to it: abstract sockets reach across file-system
// walls, so a sandboxed app must not be able to use them at all.
probe_result probe_abstract_socket(const char *name) {
    int server = socket(AF_UNIX, SOCK_STREAM, 0);
    if (server < 0) return fail();
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    a.sun_path[0] = 0;
    strncpy(a.sun_path + 1, name, sizeof a.sun_path - 2);
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name));
    if (bind(server, (struct sockaddr *)&a, len) != 0 || listen(server, 1) != 0) { int e = errno; close(server); return e; }
    int client = socket(AF_UNIX, SOCK_STREAM, 0);
    if (client < 0) { int e = errno; close(server); return e; }
    int rc = connect(client, (struct sockaddr *)&a, len);
    int e = errno;
    close(client);
    close(server);
    return rc == 0 ? 0 : (e ? e : EIO);
}

probe_result probe_open_read(const char *path) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return fail();
    char b;
    ssize_t n = read(fd, &b, 1);
    int e = errno;
    close(fd);
    return n >= 0 ? 0 : e;
}

probe_result probe_open_write(const char *path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return fail();
    ssize_t n = write(fd, "escaped\n", 8);
    int e = errno;
    close(fd);
    return n == 8 ? 0 : e;
}

struct exec_arg { const char *path; int via_loader; };
static int exec_body(void *p) {
    struct exec_arg *a = p;
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) { dup2(null, 1); dup2(null, 2); }
    char *const env[] = { NULL };
    if (a->via_loader) {
        const char *loader = "/lib64/ld-linux-x86-64.so.2";
        char *const argv[] = { (char *)loader, (char *)a->path, "-c", "exit 0", NULL };
        execve(loader, argv, env);
    } else {
        char *const argv[] = { (char *)a->path, "-c", "exit 0", NULL };
        execve(a->path, argv, env);
    }
    return errno ? errno : EIO;
}

probe_result probe_exec(const char *path, int via_loader) {
    struct exec_arg a = { path, via_loader };
    return in_child(exec_body, &a);
}

static int ptrace_body(void *p) {
    pid_t pid = *(pid_t *)p;
    if (ptrace(PTRACE_ATTACH, pid, 0, 0) != 0) return errno;
    waitpid(pid, NULL, __WALL);
    ptrace(PTRACE_DETACH, pid, 0, 0);
    return 0;
}
probe_result probe_ptrace_attach(pid_t pid) { return in_child(ptrace_body, &pid); }

static int vm_body(void *p) {
    pid_t pid = *(pid_t *)p;
    char local[16];
    // The first mapping of the target, from its maps file when readable.
    uintptr_t address = 0x400000;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", pid);
    int fd = open(path, O_RDONLY);
    if (fd >= 0) {
        char line[64] = { 0 };
        if (read(fd, line, sizeof line - 1) > 0) address = (uintptr_t)strtoull(line, NULL, 16);
        close(fd);
    }
    struct iovec l = { local, sizeof local }, r = { (void *)address, sizeof local };
    return process_vm_readv(pid, &l, 1, &r, 1, 0) < 0 ? errno : 0;
}
probe_result probe_vm_read(pid_t pid) { return in_child(vm_body, &pid); }

static int mount_body(void *p) { (void)p; return mount("none", "/tmp", "tmpfs", 0, NULL) != 0 ? errno : 0; }
probe_result probe_mount(void) { return in_child(mount_body, NULL); }

static int unshare_body(void *p) { (void)p; return unshare(CLONE_NEWUSER) != 0 ? errno : 0; }
probe_result probe_unshare(void) { return in_child(unshare_body, NULL); }

static int uring_body(void *p) {
    (void)p;
    char params[120];
    memset(params, 0, sizeof params);
    long fd = syscall(SYS_io_uring_setup, 1, params);
    if (fd < 0) return errno;
    close((int)fd);
    return 0;
}
probe_result probe_io_uring(void) { return in_child(uring_body, NULL); }

static int bpf_body(void *p) {
    (void)p;
    char attr[128];
    memset(attr, 0, sizeof attr);
    // BPF_PROG_LOAD with an empty program: refused by the kernel or by the sandbox.
    long rc = syscall(SYS_bpf, 5, attr, sizeof attr);
    return rc < 0 ? errno : 0;
}
probe_result probe_bpf(void) { return in_child(bpf_body, NULL); }

static int keyctl_body(void *p) {
    (void)p;
    // KEYCTL_GET_KEYRING_ID of the session keyring: harmless, and a door to the kernel keyring.
    long rc = syscall(SYS_keyctl, 0, -3, 0);
    return rc < 0 ? errno : 0;
}
probe_result probe_keyctl(void) { return in_child(keyctl_body, NULL); }

probe_result probe_signal(pid_t pid) { return kill(pid, 0) != 0 ? fail() : 0; }

probe_result probe_fork_bomb(int limit, int *count) {
    int pipefd[2];
    if (pipe(pipefd) != 0) return fail();
    pid_t runner = fork();
    if (runner < 0) return fail();
    if (runner == 0) {
        // In a process group of its own so that every child can be ended with one signal.
        setpgid(0, 0);
        int n = 0, e = 0;
        for (; n < limit; n++) {
            pid_t c = fork();
            if (c < 0) { e = errno; break; }
            if (c == 0) { pause(); _exit(0); }
        }
        (void)!write(pipefd[1], &n, sizeof n);
        (void)!write(pipefd[1], &e, sizeof e);
        kill(0, SIGKILL);
        _exit(0);
    }
    close(pipefd[1]);
    int n = 0, e = 0;
    (void)!read(pipefd[0], &n, sizeof n);
    (void)!read(pipefd[0], &e, sizeof e);
    close(pipefd[0]);
    int status;
    waitpid(runner, &status, 0);
    *count = n;
    return n < limit ? (e ? e : EAGAIN) : 0;
}

static int memory_limit_mib;
static int memory_body(void *p) {
    int *out = p;
    (void)out;
    for (int mib = 0; mib < memory_limit_mib; mib += 64) {
        char *block = mmap(NULL, 64 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (block == MAP_FAILED) return 100 + mib / 64 > 255 ? 255 : 100 + mib / 64;
        for (size_t i = 0; i < (64u << 20); i += 4096) block[i] = 1;
    }
    return 0;
}
probe_result probe_memory_bomb(int limit_mib, int *mib) {
    memory_limit_mib = limit_mib;
    probe_result r = in_child(memory_body, mib);
    if (r >= 100) { *mib = (r - 100) * 64; return ENOMEM; }
    *mib = r == 0 ? limit_mib : 0;
    return r;
}

probe_result probe_send(int fd) {
    char b = 0;
    return send(fd, &b, 1, MSG_NOSIGNAL) == 1 ? 0 : fail();
}
