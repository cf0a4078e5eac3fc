#define _GNU_SOURCE
#include "mam_sandbox.h"
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <unistd.h>

// The supervisor performs a confined call itself, on the very file it judged, instead of
// letting the kernel run the app's call (SECCOMP_USER_NOTIF_FLAG_CONTINUE), which would read the
// path from the app's memory and the descriptor from its table a second time: another thread
// of the app changes them in between (docs/SANDBOX.md, "Performed calls").

static _Thread_local int private_fs;

// The supervisor's own identity on this thread, kept while it acts as the app (below).
typedef struct identity {
    int fsuid, fsgid, ngroups;
    gid_t groups[MAM_ASKER_GROUPS];
    struct __user_cap_header_struct header;
    struct __user_cap_data_struct caps[2];
} identity;
static int become(const mam_asker *a, identity *saved);
static void unbecome(identity *saved);

int mam_private_fs(void) {
    // umask (and cwd) become this thread's own: the app's umask is set here for each call
    // without touching the launcher's other threads.
    if (!private_fs && unshare(CLONE_FS) != 0) return -1;
    private_fs = 1;
    return 0;
}

int mam_asker_open(pid_t tid, mam_asker *a) {
    memset(a, 0, sizeof *a);
    a->pidfd = a->root = a->cwd = -1;
    a->tid = tid;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
    FILE *f = fopen(path, "re");
    if (!f) return -1;
    char line[1024];
    int seen = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned r, e, s, fs;
        if (sscanf(line, "Tgid: %d", &a->tgid) == 1) seen |= 1;
        else if (sscanf(line, "Uid: %u %u %u %u", &r, &e, &s, &fs) == 4) { a->fsuid = fs; seen |= 2; }
        else if (sscanf(line, "Gid: %u %u %u %u", &r, &e, &s, &fs) == 4) { a->fsgid = fs; seen |= 4; }
        else if (sscanf(line, "Umask: %o", &r) == 1) { a->umask = r & 0777; seen |= 8; }
        else if (strncmp(line, "Groups:", 7) == 0) {
            char *p = line + 7, *end;
            for (unsigned long g = strtoul(p, &end, 10); end != p; g = strtoul(p, &end, 10)) {
                if (a->ngroups == MAM_ASKER_GROUPS) { fclose(f); errno = E2BIG; return -1; }
                a->groups[a->ngroups++] = (gid_t)g;
                p = end;
            }
            seen |= 16;
        }
    }
    fclose(f);
    if (seen != 31) { errno = ESRCH; return -1; }
    return 0;
}

// The process, root and cwd are opened when a call first needs them (each costs a system call
// or two, and most calls need one of them), always with the supervisor's own rights: the /proc
// links of another process are not the app's identity's to follow.
static int opened_pidfd(const mam_asker *a) {
    mam_asker *m = (mam_asker *)a;
    if (m->pidfd < 0) m->pidfd = (int)syscall(SYS_pidfd_open, m->tgid, 0);
    return m->pidfd;
}

static int opened_link(const mam_asker *a, int *slot, const char *name) {
    if (*slot < 0) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/%s", (int)a->tid, name);
        *slot = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    }
    return *slot;
}

int mam_asker_cwd(const mam_asker *a) { return opened_link(a, &((mam_asker *)a)->cwd, "cwd"); }
static int opened_root(const mam_asker *a) { return opened_link(a, &((mam_asker *)a)->root, "root"); }

void mam_asker_close(mam_asker *a) {
    if (a->pidfd >= 0) close(a->pidfd);
    if (a->root >= 0) close(a->root);
    if (a->cwd >= 0) close(a->cwd);
    a->pidfd = a->root = a->cwd = -1;
}

int mam_asker_descriptor(const mam_asker *a, int number) {
    if (number < 0) { errno = EBADF; return -1; }
    if (opened_pidfd(a) < 0) return -1;
    return (int)syscall(SYS_pidfd_getfd, a->pidfd, number, 0);
}

ssize_t mam_descriptor_path(int fd, char *out, size_t size) {
    char self[64];
    snprintf(self, sizeof self, "/proc/thread-self/fd/%d", fd);
    ssize_t n = readlink(self, out, size - 1);
    if (n < 0) return -1;
    out[n] = 0;
    return n;
}

// A relative path is taken from `base` as the app's kernel would: "..", and links inside, stay
// beneath it in the common case; one that climbs above it or meets an absolute link is joined
// to the base's path and taken from the app's root instead. Either way the answer is a file
// that cannot change, and the caller judges that file, not the path. `resolve`: an openat2
// caller's own RESOLVE_* flags, kept (a scoped one, BENEATH or IN_ROOT, from `base` alone).
static int resolve_from(const mam_asker *a, int base, const char *path, int follow, uint64_t resolve) {
    struct open_how how = { .flags = O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW),
                            .resolve = resolve | RESOLVE_NO_MAGICLINKS };
    if (resolve & (RESOLVE_BENEATH | RESOLVE_IN_ROOT)) return (int)syscall(SYS_openat2, base, *path ? path : ".", &how, sizeof how);
    if (path[0] == '/') {
        how.resolve |= RESOLVE_IN_ROOT;
        return (int)syscall(SYS_openat2, a->root, path, &how, sizeof how);
    }
    how.resolve |= RESOLVE_BENEATH;
    int fd = (int)syscall(SYS_openat2, base, *path ? path : ".", &how, sizeof how);
    if (fd >= 0 || errno != EXDEV) return fd;
    char joined[8192];
    ssize_t n = mam_descriptor_path(base, joined, 4096);
    if (n < 0) return -1;
    snprintf(joined + n, sizeof joined - (size_t)n, "/%s", path);
    how.resolve = resolve | RESOLVE_NO_MAGICLINKS | RESOLVE_IN_ROOT;
    return (int)syscall(SYS_openat2, a->root, joined, &how, sizeof how);
}

// The base a path of the app's is taken from: its descriptor `dirfd` (a duplicate, closed by the
// caller) or its working directory (the asker's, not to be closed).
static int base_of(const mam_asker *a, int dirfd, const char *path, uint64_t resolve, int *owned) {
    *owned = 0;
    if (dirfd == AT_FDCWD || (path[0] == '/' && !(resolve & (RESOLVE_BENEATH | RESOLVE_IN_ROOT)))) return mam_asker_cwd(a);
    *owned = 1;
    return mam_asker_descriptor(a, dirfd);
}

// Every lookup is made with the app's identity: a folder its uid may not search (root's, mode
// 0700, even inside its container) stops the walk as it would stop the app's own call. Only
// the starting points (its root, cwd, descriptors) are taken with the supervisor's rights.
static int resolve_as_app(const mam_asker *a, int base, const char *path, int follow, uint64_t resolve) {
    if (opened_root(a) < 0) return -1;
    identity saved;
    if (become(a, &saved) != 0) return -1;
    int fd = resolve_from(a, base, path, follow, resolve);
    unbecome(&saved);
    return fd;
}

int mam_asker_resolve_at(const mam_asker *a, int base, const char *path, int follow, uint64_t resolve) {
    return resolve_as_app(a, base, path, follow, resolve);
}

int mam_asker_resolve(const mam_asker *a, int dirfd, const char *path, int follow, uint64_t resolve) {
    int owned;
    int base = base_of(a, dirfd, path, resolve, &owned);
    if (base < 0) return -1;
    int fd = resolve_as_app(a, base, path, follow, resolve);
    int e = errno;
    if (owned) close(base);
    errno = e;
    return fd;
}

int mam_asker_parent_at(const mam_asker *a, int base, const char *path, uint64_t resolve, char *name, size_t size) {
    size_t n = strlen(path);
    size_t end = n;
    while (end > 0 && path[end - 1] == '/') end--;
    if (end == 0) { errno = path[0] ? EBUSY : ENOENT; return -1; }  // "/" or ""
    size_t start = end;
    while (start > 0 && path[start - 1] != '/') start--;
    // The name keeps its trailing slashes: the kernel then refuses a non-directory as it would.
    if (n - start + 1 > size) { errno = ENAMETOOLONG; return -1; }
    memcpy(name, path + start, n - start);
    name[n - start] = 0;
    size_t last = end - start;
    if ((last == 1 && path[start] == '.') || (last == 2 && path[start] == '.' && path[start + 1] == '.')) {
        errno = EINVAL;
        return -1;
    }
    char folder[4096];
    if (start >= sizeof folder) { errno = ENAMETOOLONG; return -1; }
    memcpy(folder, path, start);
    folder[start] = 0;
    int fd = resolve_as_app(a, base, start ? folder : ".", 1, resolve);
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode)) { close(fd); errno = ENOTDIR; return -1; }
    return fd;
}

int mam_asker_parent(const mam_asker *a, int dirfd, const char *path, uint64_t resolve, char *name, size_t size) {
    int owned;
    int base = base_of(a, dirfd, path, resolve, &owned);
    if (base < 0) return -1;
    int fd = mam_asker_parent_at(a, base, path, resolve, name, size);
    int e = errno;
    if (owned) close(base);
    errno = e;
    return fd;
}

// The app's identity on this thread alone (the system calls, not the C library's wrappers,
// which would apply setgroups to every thread): its file-system uid and gid, its groups, no
// effective capability (a uid-0 app's DAC overrides included), and its umask.

static int become(const mam_asker *a, identity *saved) {
    if (!private_fs) { errno = EPERM; return -1; }
    saved->header = (struct __user_cap_header_struct){ _LINUX_CAPABILITY_VERSION_3, 0 };
    if (syscall(SYS_capget, &saved->header, saved->caps) != 0) return -1;
    saved->ngroups = (int)syscall(SYS_getgroups, MAM_ASKER_GROUPS, saved->groups);
    if (saved->ngroups < 0) return -1;
    saved->fsuid = (int)syscall(SYS_setfsuid, -1);
    saved->fsgid = (int)syscall(SYS_setfsgid, -1);
    syscall(SYS_setgroups, a->ngroups, a->groups);
    syscall(SYS_setfsgid, a->fsgid);
    syscall(SYS_setfsuid, a->fsuid);
    struct __user_cap_data_struct none[2];
    memcpy(none, saved->caps, sizeof none);
    none[0].effective = none[1].effective = 0;
    struct __user_cap_header_struct h = saved->header;
    int changed = syscall(SYS_capset, &h, none) == 0;
    // Whatever could not be changed (an unprivileged launcher cannot set groups) must already
    // be the app's, or nothing is done for it.
    gid_t now[MAM_ASKER_GROUPS];
    int n = (int)syscall(SYS_getgroups, MAM_ASKER_GROUPS, now);
    int same = changed && n == a->ngroups && memcmp(now, a->groups, (size_t)n * sizeof(gid_t)) == 0
        && (uid_t)syscall(SYS_setfsuid, -1) == a->fsuid && (gid_t)syscall(SYS_setfsgid, -1) == a->fsgid;
    umask(a->umask);
    if (!same) {
        identity copy = *saved;
        syscall(SYS_capset, &copy.header, copy.caps);
        syscall(SYS_setfsuid, saved->fsuid);
        syscall(SYS_setfsgid, saved->fsgid);
        syscall(SYS_setgroups, saved->ngroups, saved->groups);
        errno = EPERM;
        return -1;
    }
    return 0;
}

static void unbecome(identity *saved) {
    int e = errno;
    syscall(SYS_capset, &saved->header, saved->caps);
    syscall(SYS_setfsuid, saved->fsuid);
    syscall(SYS_setfsgid, saved->fsgid);
    syscall(SYS_setgroups, saved->ngroups, saved->groups);
    errno = e;
}

#define AS_APP(a, call)                                   \
    do {                                                  \
        identity saved_;                                  \
        if (become((a), &saved_) != 0) return -errno;     \
        long r_ = (long)(call);                           \
        int e_ = errno;                                   \
        unbecome(&saved_);                                \
        return r_ < 0 ? -e_ : r_;                         \
    } while (0)

static void magic(char *out, size_t size, int fd) { snprintf(out, size, "/proc/thread-self/fd/%d", fd); }

long mam_do_flock(const mam_asker *a, int fd, int operation) { AS_APP(a, flock(fd, operation | LOCK_NB)); }

long mam_do_ofd_lock(const mam_asker *a, int fd, int command, struct flock *lock) {
    lock->l_pid = 0;  // an open file description lock has no owner process
    AS_APP(a, fcntl(fd, command, lock));
}

long mam_do_xattr(const mam_asker *a, int fd, const char *name, const void *value, size_t size, int flags, int remove) {
    char p[64];
    magic(p, sizeof p, fd);
    if (remove) AS_APP(a, removexattr(p, name));
    AS_APP(a, setxattr(p, name, value, size, flags));
}

long mam_do_utimens(const mam_asker *a, int fd, const struct timespec *times) {
    char p[64];
    magic(p, sizeof p, fd);
    AS_APP(a, utimensat(AT_FDCWD, p, times, 0));
}

long mam_do_inotify(const mam_asker *a, int inotify, int fd, uint32_t mask) {
    char p[64];
    magic(p, sizeof p, fd);
    AS_APP(a, inotify_add_watch(inotify, p, mask & ~(uint32_t)IN_DONT_FOLLOW));
}

long mam_do_truncate(const mam_asker *a, int fd, long long length) {
    struct stat st;
    if (fstat(fd, &st) != 0) return -errno;
    if (S_ISDIR(st.st_mode)) return -EISDIR;
    if (!S_ISREG(st.st_mode)) return -EINVAL;
    char p[64];
    magic(p, sizeof p, fd);
    identity saved;
    if (become(a, &saved) != 0) return -errno;
    int w = open(p, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
    long r = w < 0 ? -1 : ftruncate(w, (off_t)length);
    int e = errno;
    unbecome(&saved);
    if (w >= 0) close(w);
    return r < 0 ? -e : 0;
}

long mam_do_mkdir(const mam_asker *a, int parent, const char *name, mode_t mode) { AS_APP(a, mkdirat(parent, name, mode)); }
long mam_do_mknod(const mam_asker *a, int parent, const char *name, mode_t mode, dev_t dev) { AS_APP(a, mknodat(parent, name, mode, dev)); }
long mam_do_unlink(const mam_asker *a, int parent, const char *name, int flags) { AS_APP(a, unlinkat(parent, name, flags)); }
long mam_do_rename(const mam_asker *a, int from, const char *fromName, int to, const char *toName, unsigned flags) {
    AS_APP(a, syscall(SYS_renameat2, from, fromName, to, toName, flags));
}
long mam_do_symlink(const mam_asker *a, const char *target, int parent, const char *name) { AS_APP(a, symlinkat(target, parent, name)); }
long mam_do_link(const mam_asker *a, int file, int parent, const char *name) {
    // Through the descriptor's /proc link, followed: the very file judged, and no
    // CAP_DAC_READ_SEARCH needed, as AT_EMPTY_PATH would.
    char p[64];
    magic(p, sizeof p, file);
    AS_APP(a, linkat(AT_FDCWD, p, parent, name, AT_SYMLINK_FOLLOW));
}

// Opens the judged file again with the app's flags: the /proc link reaches that file whatever
// its name has become, with the permission check made for the app's identity. A FIFO is opened
// without waiting (a writer would otherwise hold the supervisor until a reader came).
long mam_do_reopen(const mam_asker *a, int fd, int flags, mode_t mode) {
    struct stat st;
    if (fstat(fd, &st) != 0) return -errno;
    int wait = S_ISFIFO(st.st_mode) && !(flags & O_NONBLOCK);
    char p[64];
    magic(p, sizeof p, fd);
    identity saved;
    if (become(a, &saved) != 0) return -errno;
    int r = open(p, (flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW)) | O_CLOEXEC | (wait ? O_NONBLOCK : 0), mode);
    int e = errno;
    unbecome(&saved);
    if (r < 0) return -e;
    if (wait) fcntl(r, F_SETFL, fcntl(r, F_GETFL) & ~O_NONBLOCK);
    return r;
}

// Creates `name` in the judged folder: no link followed at the name (one put there since the
// check answers ELOOP), nothing beneath another folder.
long mam_do_create(const mam_asker *a, int parent, const char *name, int flags, mode_t mode) {
    struct open_how how = { .flags = (uint64_t)(unsigned)(flags | O_CLOEXEC), .mode = mode,
                            .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
    AS_APP(a, syscall(SYS_openat2, parent, name, &how, sizeof how));
}

int mam_notify_answer(int fd, uint64_t id, int64_t value, int error) {
    struct seccomp_notif_resp resp = { 0 };
    resp.id = id;
    resp.error = error ? -error : 0;
    resp.val = error ? 0 : value;
    return ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

int mam_notify_send_fd(int fd, uint64_t id, int file, int cloexec) {
    // SECCOMP_ADDFD_FLAG_SEND (Linux 5.14): the descriptor lands in the app and is the call's
    // answer in one step, so no second notification can slip in between.
    struct seccomp_notif_addfd add = { .id = id, .flags = SECCOMP_ADDFD_FLAG_SEND, .srcfd = (uint32_t)file,
                                       .newfd = 0, .newfd_flags = cloexec ? O_CLOEXEC : 0 };
    return ioctl(fd, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
}

ssize_t mam_read_memory(pid_t pid, uint64_t address, void *buffer, size_t size) {
    struct iovec local = { buffer, size }, remote = { (void *)(uintptr_t)address, size };
    ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (n == (ssize_t)size) return n;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/mem", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    n = pread(fd, buffer, size, (off_t)address);
    close(fd);
    if (n != (ssize_t)size) { errno = EFAULT; return -1; }
    return n;
}

ssize_t mam_write_memory(pid_t pid, uint64_t address, const void *buffer, size_t size) {
    struct iovec local = { (void *)buffer, size }, remote = { (void *)(uintptr_t)address, size };
    ssize_t n = process_vm_writev(pid, &local, 1, &remote, 1, 0);
    if (n != (ssize_t)size) { errno = EFAULT; return -1; }
    return n;
}

long long mam_file_size_limit(pid_t pid) {
    struct rlimit limit;
    if (prlimit(pid, RLIMIT_FSIZE, NULL, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return -1;
    return (long long)limit.rlim_cur;
}
