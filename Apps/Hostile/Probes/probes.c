#define _GNU_SOURCE
#include "probes.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <linux/openat2.h>
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
    // As process 1 of a PID namespace, the runner's orphans are ours to reap.
    while (waitpid(-1, &status, WNOHANG) > 0) {}
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

#include <linux/sched.h>
#include <linux/seccomp.h>
#include <linux/filter.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>

probe_result probe_tiocsti(void) {
    int last = ENOTTY;
    char c = '#';
    for (int fd = 0; fd <= 2; fd++) {
        if (!isatty(fd)) continue;
        if (ioctl(fd, TIOCSTI, &c) == 0) return 0;
        last = errno;
    }
    int tty = open("/dev/tty", O_RDWR | O_NOCTTY);
    if (tty < 0) return last == ENOTTY ? errno : last;
    int rc = ioctl(tty, TIOCSTI, &c);
    int e = errno;
    close(tty);
    return rc == 0 ? 0 : e;
}

probe_result probe_clear_pdeathsig(void) { return prctl(PR_SET_PDEATHSIG, 0) == 0 ? 0 : fail(); }

static int seccomp_body(void *p) {
    (void)p;
    struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog prog = { 1, &allow };
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
    return fd < 0 ? errno : 0;
}
probe_result probe_seccomp_listener(void) { return in_child(seccomp_body, NULL); }

probe_result probe_daemon(const char *name, int seconds) {
    int ready[2];
    if (pipe(ready) != 0) return fail();
    pid_t pid = fork();
    if (pid < 0) return fail();
    if (pid == 0) {
        // A grandchild in a session of its own: nothing ties it to the app any more.
        if (fork() != 0) _exit(0);
        setsid();
        prctl(PR_SET_NAME, name);
        prctl(PR_SET_PDEATHSIG, 0);
        (void)!write(ready[1], "r", 1);
        close(ready[1]);
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) { dup2(null, 0); dup2(null, 1); dup2(null, 2); }
        // Nothing inherited may keep a reader waiting for it (a pipe of whoever started the app).
        syscall(SYS_close_range, 3U, ~0U, 0U);
        sleep((unsigned)seconds);
        _exit(0);
    }
    close(ready[1]);
    waitpid(pid, NULL, 0);
    char b;
    ssize_t n = read(ready[0], &b, 1);
    close(ready[0]);
    return n == 1 ? 0 : ECHILD;
}

static int clone_body(void *p) {
    (void)p;
    long pid = syscall(SYS_clone, (unsigned long)(CLONE_NEWUSER | SIGCHLD), NULL, NULL, NULL, 0UL);
    if (pid < 0) return errno;
    if (pid == 0) _exit(0);
    waitpid((pid_t)pid, NULL, 0);
    return 0;
}
probe_result probe_clone_newuser(void) { return in_child(clone_body, NULL); }

static int clone3_body(void *p) {
    (void)p;
    struct clone_args args;
    memset(&args, 0, sizeof args);
    args.flags = CLONE_NEWUSER;
    args.exit_signal = SIGCHLD;
    long pid = syscall(SYS_clone3, &args, sizeof args);
    if (pid < 0) return errno;
    if (pid == 0) _exit(0);
    waitpid((pid_t)pid, NULL, 0);
    return 0;
}
probe_result probe_clone3_newuser(void) { return in_child(clone3_body, NULL); }

probe_result probe_sysv_shm(int key) {
    int id = shmget((key_t)key, 0, 0);
    if (id < 0) return fail();
    void *at = shmat(id, NULL, SHM_RDONLY);
    if (at == (void *)-1) return fail();
    shmdt(at);
    return 0;
}

probe_result probe_sysv_msg(int key) {
    int id = msgget((key_t)key, 0);
    if (id < 0) return fail();
    struct { long type; char text[64]; } m;
    return msgrcv(id, &m, sizeof m.text, 0, IPC_NOWAIT) < 0 ? fail() : 0;
}

probe_result probe_posix_shm(const char *name) {
    char path[256];
    snprintf(path, sizeof path, "/dev/shm/%s", name);
    return probe_open_read(path);
}

probe_result probe_chmod(const char *path) { return chmod(path, 0777) == 0 ? 0 : fail(); }
probe_result probe_setxattr(const char *path) { return setxattr(path, "user.mamlab", "x", 1, 0) == 0 ? 0 : fail(); }
probe_result probe_utimes(const char *path) { return utimensat(AT_FDCWD, path, NULL, 0) == 0 ? 0 : fail(); }
probe_result probe_stat(const char *path) { struct stat st; return stat(path, &st) == 0 ? 0 : fail(); }

probe_result probe_inotify(const char *path) {
    int fd = inotify_init1(IN_CLOEXEC);
    if (fd < 0) return fail();
    int rc = inotify_add_watch(fd, path, IN_ALL_EVENTS);
    int e = errno;
    close(fd);
    return rc < 0 ? e : 0;
}

// An exclusive lock on a file every app may read: another app that tries the same lock learns
// a bit, with no broker in between.
probe_result probe_flock(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail();
    int rc = flock(fd, LOCK_EX | LOCK_NB);
    int e = errno;
    if (rc == 0) flock(fd, LOCK_UN);
    close(fd);
    return rc == 0 ? 0 : (e ? e : EIO);
}

// A read lock, which a read-only descriptor may take: another app's F_GETLK for a write lock sees it.
probe_result probe_fcntl_lock(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail();
    struct flock lock = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
    int rc = fcntl(fd, F_SETLK, &lock);
    int e = errno;
    close(fd);
    return rc == 0 ? 0 : (e ? e : EIO);
}

probe_result probe_fanotify(void) {
    int fd = (int)syscall(SYS_fanotify_init, 0x00000200 /* FAN_REPORT_FID */, O_RDONLY);
    if (fd < 0) return fail();
    close(fd);
    return 0;
}

// Reads a small file whole; its length, or -1.
static ssize_t read_small(const char *path, char *buffer, size_t size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buffer, size - 1);
    int e = errno;
    close(fd);
    errno = e;
    if (n >= 0) buffer[n] = 0;
    return n;
}

// The host's fingerprint: the boot id and the kernel command line, the same for every process.
probe_result probe_read_fingerprint(const char *path) {
    char buffer[4096];
    ssize_t n = read_small(path, buffer, sizeof buffer);
    if (n < 0) return fail();
    return n > 0 ? 0 : ENODATA;
}

// The host's cgroup names: succeeded when /proc/self/cgroup names a cgroup other than "/".
probe_result probe_cgroup_path(void) {
    char buffer[8192];
    if (read_small("/proc/self/cgroup", buffer, sizeof buffer) < 0) return fail();
    for (char *line = strtok(buffer, "\n"); line; line = strtok(NULL, "\n")) {
        char *path = strchr(line, ':');
        path = path ? strchr(path + 1, ':') : NULL;
        if (path && strcmp(path + 1, "/") != 0) return 0;
    }
    return ENODATA;
}

// Reads a whole /proc file (a mount table can be long) into `buffer`; its length, or -1.
static ssize_t read_all(const char *path, char *buffer, size_t size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    size_t n = 0;
    for (;;) {
        ssize_t got = read(fd, buffer + n, size - 1 - n);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        n += (size_t)got;
        if (n + 1 >= size) break;
    }
    close(fd);
    buffer[n] = 0;
    return (ssize_t)n;
}

// The launcher's folders in a mount table: succeeded when any table the app can read (its
// own, a thread's, the classic /proc/mounts, a child's) names one of `secrets` (the broker's
// folder, the containers' root). `where` says which table named which.
probe_result probe_mount_table(const char *const *secrets, int count, char *where, size_t size) {
    static char buffer[1 << 20];
    char child_table[64];
    pid_t child = fork();
    if (child == 0) { pause(); _exit(0); }
    snprintf(child_table, sizeof child_table, "/proc/%d/mountinfo", (int)child);
    const char *tables[] = { "/proc/self/mountinfo", "/proc/thread-self/mountinfo", "/proc/self/mounts", "/proc/mounts",
                             child > 0 ? child_table : "/proc/self/mountinfo" };
    probe_result result = ENOENT;
    int read_any = 0;
    for (size_t t = 0; t < sizeof tables / sizeof *tables && result != 0; t++) {
        if (read_all(tables[t], buffer, sizeof buffer) < 0) continue;
        read_any = 1;
        for (int i = 0; i < count; i++) {
            if (!strstr(buffer, secrets[i])) continue;
            snprintf(where, size, "%s names %s", tables[t], secrets[i]);
            result = 0;
            break;
        }
    }
    if (child > 0) { kill(child, SIGKILL); waitpid(child, NULL, 0); }
    if (result != 0) snprintf(where, size, read_any ? "no table names them" : "no table readable");
    return result;
}

// A write through openat2, whose flags a seccomp filter cannot read (they are in memory).
probe_result probe_openat2_write(const char *path) {
    struct open_how how = { .flags = O_WRONLY | O_CREAT | O_CLOEXEC, .mode = 0600 };
    int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
    if (fd < 0) return fail();
    close(fd);
    unlink(path);
    return 0;
}

probe_result probe_mkdir(const char *path) {
    if (mkdir(path, 0700) != 0) return fail();
    rmdir(path);
    return 0;
}

probe_result probe_name_to_handle(const char *path) {
    struct { struct file_handle h; unsigned char bytes[128]; } handle;
    handle.h.handle_bytes = sizeof handle.bytes;
    int mount_id;
    return name_to_handle_at(AT_FDCWD, path, &handle.h, &mount_id, 0) == 0 ? 0 : fail();
}

probe_result probe_proc_net_unix(int *listed) {
    int fd = open("/proc/net/unix", O_RDONLY);
    *listed = 0;
    if (fd < 0) return fail();
    char buffer[4096];
    ssize_t n;
    int lines = 0;
    while ((n = read(fd, buffer, sizeof buffer)) > 0) {
        for (ssize_t i = 0; i < n; i++) if (buffer[i] == '\n') lines++;
    }
    close(fd);
    *listed = lines > 0 ? lines - 1 : 0;  // the first line is the header
    return *listed > 0 ? 0 : ENOENT;
}

probe_result probe_read_cmdline(pid_t pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
    return probe_open_read(path);
}

static int memfd_target;
static int memfd_body(void *p) {
    (void)p;
    // Many memfds of 64 MiB, each under any file-size limit, mapped and touched so that the
    // pages count against this child (the one the OOM killer then picks).
    for (int mib = 0; mib < memfd_target; mib += 64) {
        int fd = memfd_create("hostile", 0);
        if (fd < 0) return errno;
        size_t size = (size_t)64 << 20;
        if (ftruncate(fd, (off_t)size) != 0) return errno;
        char *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED) return errno;
        for (size_t i = 0; i < size; i += 4096) map[i] = 1;
    }
    return 0;
}
probe_result probe_memfd(int mib, int *held) {
    memfd_target = mib;
    probe_result r = in_child(memfd_body, NULL);
    *held = r == 0 ? mib : 0;
    return r;
}

probe_result probe_fill_disk(int mib, int *written) {
    static char block[1 << 20];
    memset(block, 'x', sizeof block);
    int done = 0, e = 0, files = 0;
    char name[32];
    while (done < mib && !e) {
        snprintf(name, sizeof name, "fill-%d", files++);
        int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0) { e = errno; break; }
        for (int i = 0; i < 8 && done < mib; i++) {
            ssize_t n = write(fd, block, sizeof block);
            if (n != (ssize_t)sizeof block) { e = n < 0 ? errno : ENOSPC; break; }
            done++;
        }
        close(fd);
    }
    for (int i = 0; i < files; i++) { snprintf(name, sizeof name, "fill-%d", i); unlink(name); }
    *written = done;
    return done >= mib ? 0 : (e ? e : EIO);
}

static double seconds(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}
probe_result probe_cpu(int ms, int *permille) {
    double wall0 = seconds(CLOCK_MONOTONIC), cpu0 = seconds(CLOCK_THREAD_CPUTIME_ID);
    volatile unsigned long spin = 0;
    while (seconds(CLOCK_MONOTONIC) - wall0 < ms / 1000.0) spin++;
    double wall = seconds(CLOCK_MONOTONIC) - wall0, cpu = seconds(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    *permille = (int)(cpu / wall * 1000);
    return 0;
}

// Races against the supervisor, which reads a confined call's arguments from the app's memory
// and descriptor table, judges them, and then lets the kernel run the call, which looks again.
// A second thread changes what the call names in between.
#include <pthread.h>
#include <time.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

struct descriptor_flip { volatile int stop; int number, outside, inside; pthread_t thread; };

static void *flip_descriptor(void *p) {
    struct descriptor_flip *f = p;
    while (!f->stop) { dup2(f->inside, f->number); dup2(f->outside, f->number); }
    dup2(f->inside, f->number);
    return NULL;
}

// Opens `outside` (read-only) and `inside` (made in the container) and starts flipping a third
// number between them; -1 when any of it failed (then nothing is left open or running).
static int start_flip(struct descriptor_flip *f, const char *outside, const char *inside) {
    *f = (struct descriptor_flip){ 0, -1, open(outside, O_RDONLY | O_CLOEXEC), open(inside, O_RDWR | O_CREAT | O_CLOEXEC, 0600) };
    if (f->outside >= 0 && f->inside >= 0) f->number = dup(f->inside);
    if (f->number >= 0 && pthread_create(&f->thread, NULL, flip_descriptor, f) == 0) return 0;
    int failure = errno;  // what the caller reports
    if (f->number >= 0) close(f->number);
    if (f->inside >= 0) close(f->inside);
    if (f->outside >= 0) close(f->outside);
    errno = failure;
    return -1;
}

static void stop_flip(struct descriptor_flip *f) {
    f->stop = 1;
    pthread_join(f->thread, NULL);
    close(f->number);
    close(f->inside);
    close(f->outside);
}

// flock on a descriptor number that points at a file in the container when the supervisor
// looks and at `outside` (a read-only system file) when the kernel takes the lock. Whether a
// lock went to the outside file is told without a confined call on it: then a fresh open of
// the inside file can still be locked.
probe_result probe_flock_race(const char *outside, const char *inside, int ms, int *tries) {
    struct descriptor_flip f;
    if (start_flip(&f, outside, inside) != 0) return fail();
    probe_result result = EACCES;
    double end = now_ms() + ms;
    for (*tries = 0; now_ms() < end; ++*tries) {
        if (flock(f.number, LOCK_EX | LOCK_NB) != 0) continue;
        int check = open(inside, O_RDONLY | O_CLOEXEC);
        int insideFree = check >= 0 && flock(check, LOCK_EX | LOCK_NB) == 0;
        if (check >= 0) close(check);
        flock(f.inside, LOCK_UN);
        if (insideFree) { result = 0; break; }
    }
    stop_flip(&f);
    unlink(inside);
    return result;
}

struct byte_flip { volatile int stop; volatile char *at; char a, b; };

static void *flip_byte(void *p) {
    struct byte_flip *f = p;
    while (!f->stop) { *f->at = f->a; *f->at = f->b; }
    return NULL;
}

// setxattr on a path whose first byte flips between '/' (the absolute `outside`) and 'x' (a
// relative name the probe makes in the container): one byte, so every read of the path sees
// one of the two. Judged by the test, which reads the outside file's attribute afterwards.
probe_result probe_setxattr_race(const char *outside, int ms, int *tries) {
    static char path[4096];
    size_t n = strlen(outside);
    if (outside[0] != '/' || n + 1 > sizeof path) return EINVAL;
    memcpy(path, outside, n + 1);
    // The container's twin, "x<outside without its first slash>", with its folders.
    path[0] = 'x';
    for (char *s = strchr(path, '/'); s; s = strchr(s + 1, '/')) { *s = 0; mkdir(path, 0700); *s = '/'; }
    int twin = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (twin < 0) return fail();
    close(twin);
    struct byte_flip f = { 0, path, 'x', '/' };
    pthread_t t;
    if (pthread_create(&t, NULL, flip_byte, &f) != 0) return fail();
    double end = now_ms() + ms;
    for (*tries = 0; now_ms() < end; ++*tries) setxattr(path, "user.mamlab.race", "x", 1, 0);
    f.stop = 1;
    pthread_join(t, NULL);
    return 0;
}

// A path race for any call: the path's first byte flips between '/' (the absolute `outside`)
// and 'x' (its twin in the container, "x<outside without its first slash>", made here with
// its folders; a file unless `folder`). `call` returns 1 once it can tell it reached `outside`.
typedef int (*path_call)(const char *path, void *context);

static probe_result path_race(const char *outside, int ms, int *tries, int folder, path_call call, void *context, int *won) {
    static char path[4096];
    size_t n = strlen(outside);
    if (outside[0] != '/' || n + 1 > sizeof path) return EINVAL;
    memcpy(path, outside, n + 1);
    path[0] = 'x';
    for (char *s = strchr(path, '/'); s; s = strchr(s + 1, '/')) { *s = 0; mkdir(path, 0700); *s = '/'; }
    if (folder) {
        if (mkdir(path, 0700) != 0 && errno != EEXIST) return fail();
    } else {
        int twin = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        if (twin < 0) return fail();
        close(twin);
    }
    struct byte_flip f = { 0, path, 'x', '/' };
    pthread_t t;
    if (pthread_create(&t, NULL, flip_byte, &f) != 0) return fail();
    double end = now_ms() + ms;
    *won = 0;
    for (*tries = 0; now_ms() < end && !*won; ++*tries) *won = call(path, context);
    f.stop = 1;
    pthread_join(t, NULL);
    return 0;
}

// Times set to now: allowed to any uid that may write the file (a world-writable one).
static int touch_now(const char *path, void *context) {
    (void)context;
    utimensat(AT_FDCWD, path, NULL, 0);
    return 0;
}
probe_result probe_utimensat_race(const char *outside, int ms, int *tries) {
    int won;
    return path_race(outside, ms, tries, 0, touch_now, NULL, &won);
}

static int append_line(const char *path, void *context) {
    (void)context;
    int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd >= 0) {
        if (write(fd, "raced\n", 6) < 0) { /* judged by the test */ }
        close(fd);
    }
    return 0;
}
probe_result probe_write_open_race(const char *outside, int ms, int *tries) {
    int won;
    return path_race(outside, ms, tries, 0, append_line, NULL, &won);
}

// A file of the container renamed to a name that flips between the container and `outside`
// (a new name in a host folder every uid may write, as /tmp): it would leave the container.
static int rename_out(const char *path, void *context) {
    (void)context;
    int fd = open("race-rename-source", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) close(fd);
    rename("race-rename-source", path);
    return 0;
}
probe_result probe_rename_race(const char *outside, int ms, int *tries) {
    int won;
    probe_result r = path_race(outside, ms, tries, 0, rename_out, NULL, &won);
    unlink("race-rename-source");
    return r;
}

// A watch for opens of a path that flips between a twin in the container and `outside` (a
// read-only system file). The twin is never opened afterwards, so an open event after opening
// `outside` means the watch landed on it: the probe tells on its own.
static int watch_then_open(const char *path, void *context) {
    int inotify = *(int *)context;
    const char *outside = (const char *)((int *)context + 2);
    int wd = inotify_add_watch(inotify, path, IN_OPEN);
    if (wd < 0) return 0;
    int fd = open(outside, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) close(fd);
    char events[4096] __attribute__((aligned(8)));
    ssize_t n = read(inotify, events, sizeof events);
    int opened = 0;
    for (ssize_t at = 0; n > 0 && at < n;) {
        struct inotify_event *e = (struct inotify_event *)(events + at);
        if (e->wd == wd && (e->mask & IN_OPEN)) opened = 1;
        at += (ssize_t)(sizeof *e + e->len);
    }
    inotify_rm_watch(inotify, wd);
    // What the removal queued (IN_IGNORED) is read now, so it is not taken for an open later.
    while (read(inotify, events, sizeof events) > 0) {}
    return opened;
}
probe_result probe_inotify_race(const char *outside, int ms, int *tries) {
    struct { int inotify, pad; char outside[4096]; } context;
    context.inotify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (context.inotify < 0) return fail();
    snprintf(context.outside, sizeof context.outside, "%s", outside);
    int won = 0;
    probe_result r = path_race(outside, ms, tries, 0, watch_then_open, &context, &won);
    close(context.inotify);
    return r != 0 ? r : won ? 0 : EACCES;
}

// fcntl's record lock (a read lock: a read-only descriptor may take one) on a descriptor number
// that flips between a container file and `outside`. Told as flock's race is, from a child (a
// process's own record locks never conflict with each other): the inside file still free to a
// write lock means the lock went to `outside`.
probe_result probe_fcntl_lock_race(const char *outside, const char *inside, int ms, int *tries) {
    struct descriptor_flip f;
    if (start_flip(&f, outside, inside) != 0) return fail();
    probe_result result = EACCES;
    double end = now_ms() + ms;
    for (*tries = 0; now_ms() < end; ++*tries) {
        struct flock lock = { .l_type = F_RDLCK, .l_whence = SEEK_SET };
        if (fcntl(f.number, F_SETLK, &lock) != 0) continue;
        pid_t child = fork();
        if (child == 0) {
            int check = open(inside, O_RDWR | O_CLOEXEC);
            struct flock w = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
            _exit(check >= 0 && fcntl(check, F_SETLK, &w) == 0 ? 0 : 1);
        }
        int status = 1;
        if (child > 0) waitpid(child, &status, 0);
        struct flock un = { .l_type = F_UNLCK, .l_whence = SEEK_SET };
        fcntl(f.inside, F_SETLK, &un);
        if (child > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) { result = 0; break; }
    }
    stop_flip(&f);
    unlink(inside);
    return result;
}

// Calls the supervisor performs for the app on files in its container that its uid may not
// change (root's, mode 0644, in a folder of root's): each must fail as it would for the app.
probe_result probe_performed_setxattr(const char *path) { return setxattr(path, "user.mamlab.perm", "x", 1, 0) == 0 ? 0 : fail(); }
probe_result probe_performed_touch(const char *path) { return utimensat(AT_FDCWD, path, NULL, 0) == 0 ? 0 : fail(); }
probe_result probe_performed_truncate(const char *path) { return truncate(path, 0) == 0 ? 0 : fail(); }
probe_result probe_performed_mkdir(const char *path) { return mkdir(path, 0700) == 0 ? 0 : fail(); }
probe_result probe_performed_unlink(const char *path) { return unlink(path) == 0 ? 0 : fail(); }

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>

// A dnotify watch with DN_ACCESS on a shared read-only folder: every read of a file in it, by
// any app, is an event here. Success means the watch was set.
probe_result probe_dnotify(const char *path) {
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return fail();
    int rc = fcntl(fd, F_NOTIFY, DN_ACCESS | DN_CREATE | DN_MULTISHOT);
    int e = errno;
    close(fd);
    return rc < 0 ? e : 0;
}

// The escape succeeds when the app's null device is the host's node.
probe_result probe_null_device(const char *host, char *out, size_t size) {
    struct stat st;
    if (stat("/dev/null", &st) != 0) return fail();
    snprintf(out, size, "%u:%u:%lu", major(st.st_dev), minor(st.st_dev), (unsigned long)st.st_ino);
    return host && strcmp(host, out) == 0 ? 0 : EPERM;
}

// The escape succeeds when uname(2) tells the app the host's own name.
probe_result probe_host_name(const char *host, char *out, size_t size) {
    struct utsname u;
    if (uname(&u) != 0) return fail();
    snprintf(out, size, "%s", u.nodename);
    return host && strcmp(host, out) == 0 ? 0 : EPERM;
}
