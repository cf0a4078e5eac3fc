#define _GNU_SOURCE
#include "mam_sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <linux/openat2.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <sys/uio.h>
#include <unistd.h>
#include <seccomp.h>

// The kernel's Landlock interface, written out here because Debian 12's headers predate ABI 4-7.
struct mam_ll_ruleset_attr { uint64_t handled_access_fs, handled_access_net, scoped; };
struct mam_ll_path_beneath { uint64_t allowed_access; int32_t parent_fd; } __attribute__((packed));
#define MAM_LL_RULE_PATH_BENEATH 1
#define MAM_LL_CREATE_RULESET_VERSION (1U << 0)
// Rights that apply to a file (as opposed to a directory): execute, write, read, truncate, ioctl.
#define MAM_LL_FILE_RIGHTS ((1ULL << 0) | (1ULL << 1) | (1ULL << 2) | (1ULL << 14) | (1ULL << 15))

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define MAM_SECCOMP_WAIT_KILLABLE_RECV (1UL << 5)
#else
#define MAM_SECCOMP_WAIT_KILLABLE_RECV SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#endif

// Where the app's root is put together before the pivot, in its mount namespace only: a folder
// every system has (what lay there is hidden by then, and everything shown was opened before).
#define MAM_STAGE "/tmp"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

int mam_landlock_abi(void) {
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, MAM_LL_CREATE_RULESET_VERSION);
    return abi < 0 ? -errno : (int)abi;
}

// The child until its exec shares the launcher's memory and thread pointer (CLONE_VM without a
// TLS of its own), so `errno` is one word both write: the launcher's failed calls meanwhile
// (placing the child, polling) overwrite what the child's last call set. Wherever the child
// decides on an error it makes the call raw, and the kernel's negative error number comes back
// in a register that nothing else writes. Other architectures fall back to the C library's
// call, whose errno may then be the launcher's.
static long child_call(long number, long a, long b, long c) {
#if defined(__x86_64__)
    long result;
    __asm__ volatile ("syscall" : "=a"(result) : "0"(number), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return result;
#elif defined(__aarch64__)
    register long x8 __asm__("x8") = number;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    __asm__ volatile ("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
    return x0;
#else
    long result = syscall(number, a, b, c);
    return result < 0 ? -errno : result;
#endif
}

// Child-side failure: one line to the status pipe, then exit. Only async-signal-safe calls.
// `error` is the child's own error number where it has one (child_call); otherwise errno, which
// names the launcher's error now and then (above).
static void child_fail_with(int status_fd, const char *step, int error) {
    int saved = error;
    char line[160];
    size_t n = 0;
    for (const char *s = step; *s && n < sizeof line - 40; s++) line[n++] = *s;
    const char *sep = ": ";
    for (const char *s = sep; *s; s++) line[n++] = *s;
    const char *reason = strerrorname_np(saved);
    if (!reason) reason = "unknown error";
    for (const char *s = reason; *s && n < sizeof line - 1; s++) line[n++] = *s;
    (void)!write(status_fd, line, n);
    _exit(127);
}

static void child_fail(int status_fd, const char *step) { child_fail_with(status_fd, step, errno); }

static int move_high(int fd) {
    return fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 64);
}

// "/proc/self/fd/N" without stdio (the child must not take locks the parent may hold).
static void fd_path(int fd, char out[32]) {
    const char *prefix = "/proc/self/fd/";
    size_t n = 0;
    while (prefix[n]) { out[n] = prefix[n]; n++; }
    char digits[12];
    int d = 0;
    do { digits[d++] = (char)('0' + fd % 10); fd /= 10; } while (fd > 0 && d < 11);
    while (d > 0) out[n++] = digits[--d];
    out[n] = 0;
}

// mkdir -p in the app's mount namespace (inside an empty tmpfs that hides the real folders).
// Makes `path` and its parents in the child; 0, or the negative error number.
static int make_directories(const char *path) {
    char buffer[4096];
    size_t length = strlen(path);
    if (length >= sizeof buffer) return -ENAMETOOLONG;
    memcpy(buffer, path, length + 1);
    for (size_t i = 1; i <= length; i++) {
        if (buffer[i] != '/' && buffer[i] != 0) continue;
        char saved = buffer[i];
        buffer[i] = 0;
        long made = child_call(SYS_mkdirat, AT_FDCWD, (long)buffer, 0755);
        if (made < 0 && made != -EEXIST) return (int)made;
        buffer[i] = saved;
    }
    return 0;
}

// "/" + the new root's staging folder + `path`, for the mounts made before the pivot.
static void staged(const char *path, char out[4096], int status_fd) {
    static const char stage[] = MAM_STAGE;
    size_t a = sizeof stage - 1, b = strlen(path);
    if (a + b >= 4096) child_fail_with(status_fd, path, ENAMETOOLONG);
    memcpy(out, stage, a);
    memcpy(out + a, path, b + 1);
}

// Shows one host file or folder (opened as `fd` while the launcher's root was still in reach)
// at `target` in the new root: a bind of it, read-only on top of what the host's mount allowed
// (a noexec file system stays noexec), device nodes only where the bind says so.
static void bind_into_root(const mam_bind *b, int fd, int status_fd) {
    char target[4096];
    staged(b->target, target, status_fd);
    struct stat st;
    if (fstat(fd, &st) != 0) child_fail(status_fd, b->source);
    int made_error;
    if (S_ISDIR(st.st_mode)) {
        if ((made_error = make_directories(target)) != 0) child_fail_with(status_fd, b->target, -made_error);
    } else {
        // A file is bound onto an empty file made in its folder.
        char folder[4096];
        memcpy(folder, target, strlen(target) + 1);
        char *slash = strrchr(folder, '/');
        if (slash && slash != folder) *slash = 0;
        if ((made_error = make_directories(folder)) != 0) child_fail_with(status_fd, b->target, -made_error);
        int made = open(target, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (made < 0) child_fail(status_fd, b->target);
        close(made);
    }
    char source[32];
    fd_path(fd, source);
    if (mount(source, target, NULL, MS_BIND, NULL) != 0) child_fail(status_fd, b->target);
    struct statvfs host;
    unsigned long keep = fstatvfs(fd, &host) == 0 && (host.f_flag & ST_NOEXEC) ? MS_NOEXEC : 0;
    unsigned long flags = MS_REMOUNT | MS_BIND | MS_NOSUID | keep | (b->writable ? 0 : MS_RDONLY) | (b->device ? 0 : MS_NODEV);
    if (mount(NULL, target, NULL, flags, NULL) != 0) child_fail(status_fd, b->target);
}

// The app's own view of the file system: a root of its own (a tmpfs) holding, read-only, only
// what it runs and reads, its container (a size-bounded tmpfs, or the on-disk folder bound
// back in) at an app-side path, and a /proc of its own PID namespace. The launcher's root is
// pivoted away and detached, so no mount table the app or its children can read names the
// launcher's folders (the broker's, the containers'), and nothing else of the host is there to
// see, stat, watch or lock. The folders are made in a fresh tmpfs of mode 0755, so a checkout
// in a folder only its owner may enter (`mktemp -d`, a home of mode 0700) is no obstacle.
static void setup_root(const mam_spawn_config *c, int status_fd) {
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) child_fail(status_fd, "private mounts");
    // An on-disk container is bound in below. The launcher's descriptor names a mount of the
    // launcher's namespace, which mount(2) refuses as a source (EINVAL); so the folder is
    // opened again here, in the app's namespace, and must be the very folder the launcher
    // opened beneath its root.
    int own_container = -1;
    if (c->container && !c->container_tmpfs && c->container_fd >= 0) {
        own_container = open(c->container, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat mine, theirs;
        if (own_container < 0 || fstat(own_container, &mine) != 0 || fstat(c->container_fd, &theirs) != 0
            || mine.st_dev != theirs.st_dev || mine.st_ino != theirs.st_ino)
            child_fail(status_fd, "container changed under the launcher");
    }
    // Everything shown is opened first, while the launcher's root is in reach: the launcher
    // resolved every path, so a link here was planted since, and the launch fails.
    enum { most = 128 };
    int fds[most];
    if (c->bind_count > most) child_fail_with(status_fd, "too many paths to show the app", E2BIG);
    for (int i = 0; i < c->bind_count; i++) {
        fds[i] = open(c->binds[i].source, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fds[i] < 0) child_fail(status_fd, c->binds[i].source);
    }
    if (mount("tmpfs", MAM_STAGE, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=1m,nr_inodes=4096,mode=0755") != 0)
        child_fail(status_fd, "the app's root (a tmpfs on " MAM_STAGE ")");
    char target[4096];
    // A null device of the app's own: the host's is one inode every app could open, and locks
    // and inotify watches on it (which the supervisor allows, the app's own file) carried bits
    // between apps. A node made here is a new inode of the same device (1, 3), in a small tmpfs
    // of its own at /dev, the one mount of the root where a device node may be opened; the
    // binds of /dev/urandom and /dev/random land in it, and it is made read-only below.
    char dev[4096];
    staged("/dev", dev, status_fd);
    int dev_error = make_directories(dev);
    if (dev_error != 0) child_fail_with(status_fd, "the app's /dev", -dev_error);
    if (mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "size=4k,nr_inodes=16,mode=0755") != 0)
        child_fail(status_fd, "the app's /dev");
    char null_device[4096];
    staged("/dev/null", null_device, status_fd);
    if (mknod(null_device, S_IFCHR | 0666, makedev(1, 3)) != 0 || chmod(null_device, 0666) != 0)
        child_fail(status_fd, "the app's /dev/null");
    for (int i = 0; i < c->bind_count; i++) {
        bind_into_root(&c->binds[i], fds[i], status_fd);
        close(fds[i]);
    }
    if (mount(NULL, dev, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NOEXEC, "size=4k,nr_inodes=16,mode=0755") != 0)
        child_fail(status_fd, "the app's /dev read-only");
    for (int i = 0; i < c->link_count; i++) {
        staged(c->link_paths[i], target, status_fd);
        long linked = child_call(SYS_symlinkat, (long)c->link_targets[i], AT_FDCWD, (long)target);
        if (linked < 0 && linked != -EEXIST) child_fail_with(status_fd, c->link_paths[i], (int)-linked);
    }
    for (int i = 0; i < c->hidden_count; i++) {
        staged(c->hidden[i], target, status_fd);
        if (mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k,nr_inodes=256,mode=0755") != 0)
            child_fail(status_fd, c->hidden[i]);
    }
    if (c->clone_flags & CLONE_NEWPID) {
        staged("/proc", target, status_fd);
        int proc_error = make_directories(target);
        if (proc_error != 0) child_fail_with(status_fd, "mount /proc", -proc_error);
        if (mount("proc", target, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) child_fail(status_fd, "mount /proc");
        // The host's fingerprint, which Landlock's read of /proc grants: its boot id (the same
        // for every app, so two apps learn they share a machine and a boot), its kernel command
        // line, and the names of its disks and swap files read as empty in the app's /proc.
        static const char *const fingerprint[] = { "/proc/sys/kernel/random/boot_id", "/proc/cmdline", "/proc/partitions",
                                                   "/proc/diskstats", "/proc/swaps" };
        for (size_t i = 0; i < sizeof fingerprint / sizeof *fingerprint; i++) {
            staged(fingerprint[i], target, status_fd);
            if (access(target, F_OK) == 0 && mount(null_device, target, NULL, MS_BIND, NULL) != 0)
                child_fail(status_fd, fingerprint[i]);
        }
    }
    if (c->container) {
        staged(c->app_container, target, status_fd);
        int point_error = make_directories(target);
        if (point_error != 0) child_fail_with(status_fd, "container mount point", -point_error);
        if (c->container_tmpfs) {
            if (mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, c->container_tmpfs) != 0)
                child_fail(status_fd, "container tmpfs");
        } else if (own_container >= 0) {
            char source[32];
            fd_path(own_container, source);
            if (mount(source, target, NULL, MS_BIND, NULL) != 0) child_fail(status_fd, "container bind mount");
            if (mount(NULL, target, NULL, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
                child_fail(status_fd, "container remount");
            close(own_container);
        }
    }
    // The pivot: the new root becomes "/", the launcher's is stacked on it and detached.
    if (chdir(MAM_STAGE) != 0) child_fail(status_fd, "the app's root");
    if (syscall(SYS_pivot_root, ".", ".") != 0) child_fail(status_fd, "pivot_root");
    if (umount2(".", MNT_DETACH) != 0) child_fail(status_fd, "detaching the launcher's root");
    if (chdir("/") != 0) child_fail(status_fd, "the app's root");
    // Nothing more is made in it: its folders are mount points and links only.
    if (mount(NULL, "/", NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
        child_fail(status_fd, "the app's root read-only");
}

static void run_child(const mam_spawn_config *c, int status_fd, int notify_sock) {
    // 1. Die with the launcher, even if it is gone already (its end of the socket then hangs up).
    //    The filter refuses PR_SET_PDEATHSIG to the app, so it cannot undo this.
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) child_fail(status_fd, "parent-death signal");
    struct pollfd alive = { notify_sock, POLLOUT, 0 };
    if (poll(&alive, 1, 0) < 0 || (alive.revents & (POLLHUP | POLLERR))) _exit(127);
    // 2. A session of its own: no controlling terminal, so the launcher's terminal is out of reach
    //    (TIOCSTI needs it to be the caller's controlling terminal).
    if (setsid() < 0) child_fail(status_fd, "new session");
    // The app starts with every signal at its default and none blocked: an ignored signal and the
    // mask survive exec, and the launcher ignores and blocks the ones it takes for its own end
    // (SIGINT, SIGTERM, SIGHUP) while it runs.
    for (int s = 1; s < NSIG; s++) {
        if (s == SIGKILL || s == SIGSTOP) continue;
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        (void)sigaction(s, &dfl, NULL);
    }
    sigset_t none;
    sigemptyset(&none);
    (void)sigprocmask(SIG_SETMASK, &none, NULL);
    if (c->net_namespace_fd >= 0 && setns(c->net_namespace_fd, CLONE_NEWNET) != 0) child_fail(status_fd, "network namespace");
    if (c->clone_flags & CLONE_NEWNS) setup_root(c, status_fd);
    // The app's UTS namespace starts with the host's name: a neutral one instead, the same for
    // every app, so the app learns nothing of the machine from uname(2).
    if ((c->clone_flags & CLONE_NEWUTS) && (sethostname("mamlab", 6) != 0 || setdomainname("(none)", 6) != 0))
        child_fail(status_fd, "the app's host name");
    // 3. The app's cgroups: the launcher puts this process in them meanwhile (by pid; a move
    //    costs the kernel an RCU grace period now and then, better spent beside the mounts).
    //    Nothing the app runs starts before they bind.
    if (c->place) {
        char go = 0;
        if (read(notify_sock, &go, 1) != 1 || go != 1) _exit(127);
    }
    // (v1: the child joins its cgroups itself, cheaper than a move by pid.)
    for (int i = 0; i < c->join_count; i++) {
        if (write(c->join_fds[i], "0", 1) != 1) child_fail(status_fd, "joining the app's cgroup");
        close(c->join_fds[i]);
    }
    // The app's cgroups, once joined, become its cgroup namespace's root: /proc/self/cgroup says
    // "/" and names none of the host's cgroups (the launcher, reading from outside, still sees
    // them). After the joins, or a v1 hierarchy would show the host's path.
    if ((c->place || c->join_count > 0) && unshare(CLONE_NEWCGROUP) != 0) child_fail(status_fd, "cgroup namespace");
    // 4. Descriptors: stdio, the broker connection on its fixed number, nothing else after exec.
    int in = move_high(c->stdin_fd), out = move_high(c->stdout_fd), err = move_high(c->stderr_fd);
    int broker = move_high(c->broker_fd);
    int program = c->exec_by_fd ? move_high(c->executable_fd) : -1;
    if (c->exec_by_fd && program < 0) child_fail(status_fd, "program descriptor");
    if (in >= 0 && dup2(in, 0) < 0) child_fail(status_fd, "stdin");
    if (out >= 0 && dup2(out, 1) < 0) child_fail(status_fd, "stdout");
    if (err >= 0 && dup2(err, 2) < 0) child_fail(status_fd, "stderr");
    // A stream the launcher would share with other apps and the host (the host's /dev/null, any
    // other device, a file that is no pipe, socket or regular file) is the app's own null device
    // instead: one inode every app holds carried locks and times between them.
    if (c->own_null_streams && (c->clone_flags & CLONE_NEWNS)) {
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null < 0) child_fail(status_fd, "the app's /dev/null");
        for (int s = 0; s < 3; s++)
            if ((c->own_null_streams & (1 << s)) && dup2(null, s) < 0) child_fail(status_fd, "a standard stream");
        close(null);
    }
    if (broker >= 0 && dup2(broker, MAM_BROKER_FD) < 0) child_fail(status_fd, "broker descriptor");
    // 5. Resource limits before anything can allocate or fork on the app's behalf. The limit on
    //    descriptors waits until step 10: until exec this process still holds every descriptor of
    //    the launcher (closed at exec), and with 256 of them open the Landlock ruleset, its rules
    //    and the seccomp listener below could not be opened (EMFILE). No app code runs before then.
    for (int i = 0; i < c->rlimit_count; i++) {
        if (c->rlimits[i].resource == RLIMIT_NOFILE) continue;
        struct rlimit r = { c->rlimits[i].soft, c->rlimits[i].hard };
        if (setrlimit(c->rlimits[i].resource, &r) != 0) child_fail(status_fd, "resource limit");
    }
    const char *cwd = (c->clone_flags & CLONE_NEWNS) ? c->app_container : c->container;
    if (cwd && chdir(cwd) != 0) child_fail(status_fd, "container directory");
    // 6. Drop root to the app's own uid: limits on processes bind only without privileges, and
    //    no other app shares its files, its processes or its RLIMIT_NPROC count.
    //    Raw system calls: the C library's setuid would try to change every thread it knows of,
    //    and after a raw clone it still knows the launcher's threads, which are not here.
    if (c->change_ids) {
        if (syscall(SYS_setgroups, 0, NULL) != 0) child_fail(status_fd, "setgroups");
        if (syscall(SYS_setresgid, c->gid, c->gid, c->gid) != 0) child_fail(status_fd, "setgid");
        if (syscall(SYS_setresuid, c->uid, c->uid, c->uid) != 0) child_fail(status_fd, "setuid");
        // A change of uid clears the parent-death signal: set it again, then make sure the
        // launcher did not die in between.
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) child_fail(status_fd, "parent-death signal");
        if (poll(&alive, 1, 0) < 0 || (alive.revents & (POLLHUP | POLLERR))) _exit(127);
    }
    // 7. No new privileges: required for unprivileged Landlock and seccomp, and stops setuid binaries.
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) child_fail(status_fd, "no_new_privs");
    // 8. Landlock: what the app may read, write and execute, and (ABI 6) whom it may signal or reach.
    if (c->landlock_abi > 0) {
        struct mam_ll_ruleset_attr attr = { c->landlock_handled_fs, c->landlock_handled_net, c->landlock_scoped };
        size_t size = c->landlock_abi >= 6 ? sizeof attr : (c->landlock_abi >= 4 ? 16 : 8);
        int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
        if (ruleset < 0) child_fail(status_fd, "landlock ruleset");
        struct stat root;
        if (stat("/", &root) != 0) child_fail(status_fd, "stat /");
        for (int i = 0; i < c->landlock_rule_count; i++) {
            // The launcher resolved every path; a symbolic link here was planted since: skip it.
            int fd = open(c->landlock_rules[i].path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
            if (fd < 0) continue;  // a path that does not exist grants nothing
            struct stat st;
            if (fstat(fd, &st) != 0 || S_ISLNK(st.st_mode) || (st.st_dev == root.st_dev && st.st_ino == root.st_ino)) {
                close(fd);
                continue;  // never a link, never the whole file system
            }
            uint64_t access = c->landlock_rules[i].access & c->landlock_handled_fs;
            if (!S_ISDIR(st.st_mode)) access &= MAM_LL_FILE_RIGHTS;
            struct mam_ll_path_beneath rule = { access, fd };
            if (access && syscall(SYS_landlock_add_rule, ruleset, MAM_LL_RULE_PATH_BENEATH, &rule, 0) != 0)
                child_fail(status_fd, c->landlock_rules[i].path);
            close(fd);
        }
        if (syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) child_fail(status_fd, "landlock restrict");
        close(ruleset);
    }
    // 9. Seccomp last, so the set-up above is not itself filtered; its listener goes to the launcher.
    //    WAIT_KILLABLE_RECV: once the supervisor holds a call, only a fatal signal ends the wait, so the
    //    app cannot interrupt and replay a call while it is being judged.
    if (c->seccomp_program) {
        struct sock_fprog prog = { c->seccomp_length, (struct sock_filter *)c->seccomp_program };
        unsigned flags = SECCOMP_FILTER_FLAG_NEW_LISTENER | MAM_SECCOMP_WAIT_KILLABLE_RECV;
        long listener = child_call(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, (long)&prog);
        if (listener == -EINVAL)  // kernels before 5.19
            listener = child_call(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, (long)&prog);
        if (listener < 0) child_fail_with(status_fd, "seccomp filter", (int)-listener);
        char byte = 0;
        if (mam_send_with_fd(notify_sock, &byte, 1, (int)listener) != 0) child_fail(status_fd, "send listener");
        close((int)listener);
    }
    close(notify_sock);
    // 10. The limit on descriptors (step 5 says why it comes now); everything above descriptor 3
    //     closes at exec (the status pipe too, which tells the launcher).
    for (int i = 0; i < c->rlimit_count; i++) {
        if (c->rlimits[i].resource != RLIMIT_NOFILE) continue;
        struct rlimit r = { c->rlimits[i].soft, c->rlimits[i].hard };
        if (setrlimit(RLIMIT_NOFILE, &r) != 0) child_fail(status_fd, "resource limit");
    }
    if (syscall(SYS_close_range, MAM_BROKER_FD + 1, ~0U, CLOSE_RANGE_CLOEXEC) != 0) child_fail(status_fd, "close descriptors");
    if (c->broker_fd < 0) close(MAM_BROKER_FD);
    if (program >= 0)
        syscall(SYS_execveat, program, "", c->argv, c->envp, AT_EMPTY_PATH);
    else
        execve(c->executable, c->argv, c->envp);
    child_fail(status_fd, "exec");
}

struct child_start { const mam_spawn_config *c; int status_fd; int notify_sock; };

static int child_main(void *arg) {
    const struct child_start *start = arg;
    run_child(start->c, start->status_fd, start->notify_sock);
    return 127;
}

// The child runs on a stack of its own in the launcher's memory until its exec.
enum { child_stack_size = 256 * 1024, guard_size = 4096 };

// Reads what the child writes to the status pipe until the pipe closes (its exec, or its end),
// or until the child is gone: a write end held elsewhere must not keep the launcher waiting on
// an app that has already exited (bench-launch hung so now and then).
static size_t read_status(int status_fd, int pidfd, char *message, size_t size) {
    size_t n = 0;
    int gone = 0;
    for (;;) {
        if (!gone) {
            struct pollfd fds[2] = { { status_fd, POLLIN, 0 }, { pidfd, POLLIN, 0 } };
            if (poll(fds, pidfd >= 0 ? 2 : 1, -1) < 0) {
                if (errno == EINTR) continue;
                return n;
            }
            if (pidfd >= 0 && (fds[1].revents & POLLIN)) {
                // What the child wrote is in the pipe by now; read it without waiting for an EOF.
                gone = 1;
                fcntl(status_fd, F_SETFL, fcntl(status_fd, F_GETFL) | O_NONBLOCK);
            } else if (!(fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
                continue;
            }
        }
        char buffer[256];
        ssize_t got = read(status_fd, buffer, sizeof buffer);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return n;
        for (ssize_t i = 0; i < got && n + 1 < size; i++) message[n++] = buffer[i];
        message[n] = 0;
    }
}

int mam_spawn(const mam_spawn_config *c, mam_spawn_result *r, char *error, size_t error_size) {
    int status[2], sock[2];
    if (error_size) error[0] = 0;
    r->pid = -1;
    r->notify_fd = -1;
    if (pipe2(status, O_CLOEXEC) != 0) { snprintf(error, error_size, "pipe: %s", strerror(errno)); return -1; }
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sock) != 0) {
        snprintf(error, error_size, "socketpair: %s", strerror(errno));
        close(status[0]); close(status[1]);
        return -1;
    }
    char *stack = mmap(NULL, child_stack_size + guard_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED) {
        snprintf(error, error_size, "child stack: %s", strerror(errno));
        close(status[0]); close(status[1]); close(sock[0]); close(sock[1]);
        return -1;
    }
    (void)mprotect(stack, guard_size, PROT_NONE);
    // Like posix_spawn, the child shares the launcher's memory (CLONE_VM) rather than copying
    // it: a fork copied and then tore down the launcher's page tables at every launch, most of
    // the launch's own cost (perf: clone and the page faults after it). Unlike posix_spawn it
    // does not suspend the launcher (no CLONE_VFORK): the launcher must answer the child's exec
    // and, on cgroup v2, place it meanwhile. The child only makes system calls and writes to its
    // own stack; it reads `c`, which stays valid because this waits for the exec before it
    // returns. (It shares this thread's errno too, and its failed calls write it: until the
    // exec the launcher's `place` decides on return values alone, and a failure message's error
    // name may, in a rare race, be the child's.) Every signal is blocked across the clone so
    // that no handler of the launcher runs on the child's stack; the child resets them and
    // unblocks (run_child).
    // Straight into the app's new namespaces: in its own PID namespace the app is process 1,
    // and when it ends the kernel kills everything it started.
    struct child_start start = { c, status[1], sock[1] };
    sigset_t all, saved;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &saved);
    int pidfd = -1;
    pid_t pid = clone(child_main, stack + child_stack_size + guard_size,
                      c->clone_flags | CLONE_VM | CLONE_PIDFD | SIGCHLD, &start, &pidfd);
    int cloneErrno = errno;
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    close(status[1]);
    close(sock[1]);
    if (pid < 0) {
        snprintf(error, error_size, "clone: %s", strerror(cloneErrno));
        close(status[0]); close(sock[0]);
        munmap(stack, child_stack_size + guard_size);
        return -1;
    }
    r->pid = pid;
    int result = 0;
    if (c->place) {
        char go = 1;
        if (c->place(c->place_context, pid, error, error_size) != 0) {
            if (!error[0]) snprintf(error, error_size, "cgroup: %s", strerror(errno));
            kill(pid, SIGKILL);
            result = -1;
        } else if (send(sock[0], &go, 1, MSG_NOSIGNAL) != 1) {
            // The child is gone before it was told to go on: it wrote why to the status pipe
            // (read below); a bare "Broken pipe" would hide it.
            int sendErrno = errno;
            kill(pid, SIGKILL);
            char why[200] = { 0 };
            if (read_status(status[0], pidfd, why, sizeof why) > 0) snprintf(error, error_size, "%s", why);
            else snprintf(error, error_size, "the app's process ended before it was placed in its cgroup (%s)", strerror(sendErrno));
            result = -1;
        }
    }
    if (result == 0 && c->seccomp_program) {
        // Wait for the listener, or for the child to report why it could not get that far.
        struct pollfd fds[3] = { { sock[0], POLLIN, 0 }, { status[0], POLLIN, 0 }, { pidfd, POLLIN, 0 } };
        int ready;
        while ((ready = poll(fds, 3, -1)) < 0 && errno == EINTR) {}
        char byte;
        int listener = -1;
        if (ready > 0 && (fds[0].revents & POLLIN) && mam_receive_with_fd(sock[0], &byte, 1, &listener) == 1 && listener >= 0) {
            r->notify_fd = listener;
            if (c->serve_first) c->serve_first(c->serve_context, pid, listener, pidfd);
        }
    }
    close(sock[0]);
    // The status pipe closes at the exec; anything written to it is why there was none.
    char message[256] = { 0 };
    size_t said = read_status(status[0], pidfd, message, sizeof message);
    close(status[0]);
    if (result == 0 && said > 0) {
        snprintf(error, error_size, "%s", message);
        result = 1;
    }
    // The child has exec'd or ended: its stack is free.
    munmap(stack, child_stack_size + guard_size);
    if (result != 0) {
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
        r->pid = -1;
    }
    if (pidfd >= 0) close(pidfd);
    return result;
}

int mam_open_beneath(int root_fd, const char *name, int create) {
    if (create && mkdirat(root_fd, name, 0700) != 0 && errno != EEXIST) return -1;
    struct open_how how = { 0 };
    how.flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
    return (int)syscall(SYS_openat2, root_fd, name, &how, sizeof how);
}

int mam_remove_contents(int fd) {
    int dir = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir < 0) return -1;
    char buffer[8192];
    int result = 0;
    for (;;) {
        long n = syscall(SYS_getdents64, dir, buffer, sizeof buffer);
        if (n < 0) { result = -1; break; }
        if (n == 0) break;
        int removed = 0;
        for (long at = 0; at < n;) {
            struct { uint64_t ino; int64_t off; unsigned short reclen; unsigned char type; char name[]; } *e = (void *)(buffer + at);
            at += e->reclen;
            if (strcmp(e->name, ".") == 0 || strcmp(e->name, "..") == 0) continue;
            if (unlinkat(dir, e->name, 0) == 0) { removed++; continue; }
            if (errno != EISDIR) { result = -1; continue; }
            // A directory: empty it through a descriptor opened without following anything.
            int sub = openat(dir, e->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0 || mam_remove_contents(sub) != 0 || unlinkat(dir, e->name, AT_REMOVEDIR) != 0) result = -1;
            else removed++;
            if (sub >= 0) close(sub);
        }
        if (removed) lseek(dir, 0, SEEK_SET);  // entries moved under us: read the folder again
        if (result != 0) break;
    }
    close(dir);
    return result;
}

int mam_notify_receive(int fd, mam_notification *out) { return mam_notify_receive_or_exit(fd, -1, out); }

int mam_notify_receive_or_exit(int fd, int pidfd, mam_notification *out) {
    // Once every process under the filter has gone the listener hangs up; report that as ESRCH
    // instead of letting the caller spin on ENOENT. A process that has ended but not been
    // reaped still counts: `pidfd` says when it has ended.
    struct pollfd p[2] = { { fd, POLLIN, 0 }, { pidfd, POLLIN, 0 } };
    while (poll(p, pidfd >= 0 ? 2 : 1, -1) < 0) { if (errno != EINTR) return -1; }
    if ((p[0].revents & (POLLHUP | POLLERR | POLLNVAL)) && !(p[0].revents & POLLIN)) { errno = ESRCH; return -1; }
    if (!(p[0].revents & POLLIN)) { errno = ESRCH; return -1; }
    struct seccomp_notif req;
    memset(&req, 0, sizeof req);
    if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) return -1;
    out->id = req.id;
    out->pid = req.pid;
    out->nr = req.data.nr;
    for (int i = 0; i < 6; i++) out->args[i] = req.data.args[i];
    return 0;
}

static int respond(int fd, uint64_t id, int error, uint32_t flags) {
    struct seccomp_notif_resp resp = { 0 };
    resp.id = id;
    resp.error = error ? -error : 0;
    resp.val = 0;
    resp.flags = flags;
    return ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

int mam_notify_continue(int fd, uint64_t id) { return respond(fd, id, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE); }
int mam_notify_deny(int fd, uint64_t id, int error) { return respond(fd, id, error, 0); }
int mam_notify_valid(int fd, uint64_t id) { return ioctl(fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0; }

ssize_t mam_read_string(pid_t pid, uint64_t address, char *buffer, size_t size) {
    struct iovec local = { buffer, size - 1 }, remote = { (void *)(uintptr_t)address, size - 1 };
    ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (n < 0) {
        // The string may end near a page boundary: fall back to /proc/PID/mem.
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/mem", pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) return -1;
        n = pread(fd, buffer, size - 1, (off_t)address);
        close(fd);
        if (n < 0) return -1;
    }
    buffer[n] = 0;
    return (ssize_t)strnlen(buffer, (size_t)n);
}

int mam_seccomp_export(void *ctx, void **buffer, size_t *length) {
    int fd = memfd_create("mam-seccomp", MFD_CLOEXEC);
    if (fd < 0) return -errno;
    int rc = seccomp_export_bpf((scmp_filter_ctx)ctx, fd);
    if (rc != 0) { close(fd); return rc; }
    off_t size = lseek(fd, 0, SEEK_END);
    void *buf = malloc((size_t)size);
    if (!buf || pread(fd, buf, (size_t)size, 0) != size) { free(buf); close(fd); return -EIO; }
    close(fd);
    *buffer = buf;
    *length = (size_t)size;
    return 0;
}

const void *mam_seccomp_version(void) { return seccomp_version(); }
unsigned int mam_seccomp_api_level(void) { return seccomp_api_get(); }

int mam_seccomp_filters_supported(void) { return prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0; }

#include <sys/un.h>

int mam_connect_seqpacket(const char *path) {
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    if (strlen(path) >= sizeof a.sun_path) { close(fd); errno = ENAMETOOLONG; return -1; }
    strcpy(a.sun_path, path);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) { int e = errno; close(fd); errno = e; return -1; }
    return fd;
}

int mam_send_with_fd(int sock, const void *bytes, size_t length, int fd) {
    struct iovec iov = { (void *)bytes, length };
    union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } u;
    struct msghdr msg = { 0 };
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (fd >= 0) {
        msg.msg_control = u.buf;
        msg.msg_controllen = sizeof u.buf;
        struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &fd, sizeof(int));
    }
    return sendmsg(sock, &msg, MSG_NOSIGNAL) == (ssize_t)length ? 0 : -1;
}

int mam_seqpacket_pair(int fds[2]) { return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds); }

int mam_listen_seqpacket(const char *path, int backlog) {
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    if (strlen(path) >= sizeof a.sun_path) { close(fd); errno = ENAMETOOLONG; return -1; }
    strcpy(a.sun_path, path);
    unlink(path);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, backlog) != 0) { int e = errno; close(fd); errno = e; return -1; }
    return fd;
}

ssize_t mam_receive_with_fd(int sock, void *buffer, size_t size, int *fd) {
    struct iovec iov = { buffer, size };
    union { char buf[CMSG_SPACE(sizeof(int) * 4)]; struct cmsghdr align; } u;
    struct msghdr msg = { 0 };
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = u.buf;
    msg.msg_controllen = sizeof u.buf;
    *fd = -1;
    ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0) return -1;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
            int count = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            int fds[4];
            memcpy(fds, CMSG_DATA(cm), sizeof(int) * (size_t)(count > 4 ? 4 : count));
            for (int i = 0; i < count && i < 4; i++) { if (i == 0) *fd = fds[0]; else close(fds[i]); }
        }
    }
    return n;
}

int mam_open_pty(int *primary, int *secondary) {
    int p = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (p < 0) return -1;
    int unlock = 0;
    // TIOCGPTPEER opens the secondary side from the primary, with no path lookup to race.
    int s = ioctl(p, TIOCSPTLCK, &unlock) == 0 ? ioctl(p, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC) : -1;
    if (s < 0) { int e = errno; close(p); errno = e; return -1; }
    *primary = p;
    *secondary = s;
    return 0;
}

int mam_is_net_namespace(int fd) {
    // NS_GET_NSTYPE: the namespace type of an nsfs descriptor (fails on an ordinary file).
    return ioctl(fd, _IO(0xb7, 0x3)) == CLONE_NEWNET;
}

int mam_pin_empty_net_namespace(const char *path) {
    int ready[2], go[2];
    if (pipe2(ready, O_CLOEXEC) != 0) return -1;
    if (pipe2(go, O_CLOEXEC) != 0) { close(ready[0]); close(ready[1]); return -1; }
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        // The namespace lives while this child does; the parent binds it to `path` meanwhile.
        close(ready[0]);
        close(go[1]);
        char result = unshare(CLONE_NEWNET) == 0 ? 1 : 0;
        (void)!write(ready[1], &result, 1);
        char b;
        (void)!read(go[0], &b, 1);
        _exit(0);
    }
    close(ready[1]);
    close(go[0]);
    char result = 0;
    int rc = -1, saved = EIO;
    if (read(ready[0], &result, 1) == 1 && result == 1) {
        char source[64];
        snprintf(source, sizeof source, "/proc/%d/ns/net", pid);
        rc = mount(source, path, NULL, MS_BIND, NULL);
        saved = errno;
    }
    close(ready[0]);
    close(go[1]);
    waitpid(pid, NULL, 0);
    errno = saved;
    return rc;
}
