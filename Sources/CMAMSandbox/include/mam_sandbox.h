// The part of the sandbox that must run between fork and exec, where only system calls are
// safe. Swift prepares everything (paths, the compiled seccomp program, limits) in the parent;
// the child only applies it.
#ifndef MAM_SANDBOX_H
#define MAM_SANDBOX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <time.h>

/// The descriptor number the broker connection always lands on in the app.
#define MAM_BROKER_FD 3

typedef struct {
    int resource;
    rlim_t soft;
    rlim_t hard;
} mam_rlimit;

typedef struct {
    const char *path;
    uint64_t access;   // Landlock access rights for beneath this path
} mam_landlock_rule;

/// One file or folder of the host shown in the app's root, read-only unless `writable`;
/// `device`: a device node (not mounted nodev).
typedef struct {
    const char *source;  // its resolved path in the launcher's view
    const char *target;  // where the app sees it
    int writable;
    int device;
} mam_bind;

typedef struct {
    const char *executable;
    char *const *argv;
    char *const *envp;
    int stdin_fd, stdout_fd, stderr_fd;  // -1: inherit the launcher's
    int own_null_streams;                // bits 0-2: that stream is the app's own /dev/null instead (own root only)
    int broker_fd;                       // -1: none; else lands on MAM_BROKER_FD
    const char *container;               // the container in the launcher's view (the working directory without CLONE_NEWNS)
    int change_ids;                      // drop to uid/gid before confining
    uid_t uid;
    gid_t gid;
    const mam_rlimit *rlimits;
    int rlimit_count;
    int landlock_abi;                    // 0: no Landlock
    uint64_t landlock_handled_fs;
    uint64_t landlock_handled_net;
    uint64_t landlock_scoped;
    const mam_landlock_rule *landlock_rules;
    int landlock_rule_count;
    const void *seccomp_program;         // struct sock_filter[]; NULL: no filter
    unsigned short seccomp_length;       // instructions
    int clone_flags;                     // CLONE_NEW* namespaces of the app's own (0: none)
    // The app's own root (needs CLONE_NEWNS): a tmpfs holding only `binds`, `links`, its
    // container at `app_container`, and a /proc of its PID namespace; the launcher's root is
    // then pivoted away, so no mount the app can list names the launcher's folders.
    const mam_bind *binds;
    int bind_count;
    const char *const *link_paths;       // symbolic links made in the new root: path ...
    const char *const *link_targets;     // ... and what each points to
    int link_count;
    const char *const *hidden;           // folders beneath a bind covered by an empty tmpfs
    int hidden_count;
    const char *app_container;           // where the container is in the app's root (its working directory)
    const char *container_tmpfs;         // tmpfs options: the container becomes a tmpfs; NULL: the folder itself
    int container_fd;                    // O_PATH of the on-disk container (opened beneath its root), or -1
    // Called in the launcher right after the clone, while the child makes its mounts: puts the
    // child (by pid) in its cgroups. The child waits for it before it drops root. Nonzero: the
    // launch fails (the child is killed) with `error` filled. NULL: no cgroups.
    int (*place)(void *context, pid_t pid, char *error, size_t error_size);
    void *place_context;
    // cgroup v1 instead of `place`: the app's `tasks` files, opened by the launcher before the
    // clone. The child writes "0" to each, moving itself: a single thread moving itself is the
    // one move the kernel makes without the threadgroup lock, whose RCU grace period (5 ms on a
    // loaded machine) a move by pid waits for.
    const int *join_fds;
    int join_count;
    int net_namespace_fd;                // an empty network namespace the app joins (setns), or -1
    // Nonzero: the app is this open file (executable_fd), executed with execveat(AT_EMPTY_PATH),
    // the very file the launcher hashed; a name swapped since cannot change what runs.
    int exec_by_fd;
    int executable_fd;
    // Called in the launcher once the child's seccomp listener has arrived: the child's exec is
    // (or is about to be) its first notification, and waits for an answer on `listener`, which
    // this must give (or close the listener: the exec then fails). `pidfd` becomes readable when
    // the child is gone, so a wait for a notification can end if none comes. The listener stays
    // the caller's (result.notify_fd). NULL with a filter: nobody answers, and the exec fails.
    void (*serve_first)(void *context, pid_t pid, int listener, int pidfd);
    void *serve_context;
} mam_spawn_config;

typedef struct {
    pid_t pid;
    int notify_fd;   // seccomp user-notification listener, or -1
} mam_spawn_result;

/// Clones and confines a child, which then execs the app, and returns once the exec has
/// happened or failed. The child shares the launcher's memory until its exec (no copy of the
/// launcher's address space, the largest cost of a fork from a big process), so everything
/// `config` points to must stay valid until this returns, which it does.
/// Returns 0 (the app runs: wait for it with `result.pid`), 1 (the child failed before or at its
/// exec: `error` says why, and the child has been reaped), or -1 (nothing started: `error`).
int mam_spawn(const mam_spawn_config *config, mam_spawn_result *result, char *error, size_t error_size);


/// One seccomp notification: which thread asked for which system call with which arguments.
typedef struct {
    uint64_t id;
    uint32_t pid;
    int32_t nr;
    uint64_t args[6];
} mam_notification;

/// Blocks for the next notification. 0, or -1 with errno (ENOENT: the asker died; EBADF: closed).
int mam_notify_receive(int fd, mam_notification *out);
/// Like mam_notify_receive, but gives up (-1, errno ESRCH) once `pidfd`'s process has ended:
/// a dead process that has not been reaped keeps its filter's listener open.
int mam_notify_receive_or_exit(int fd, int pidfd, mam_notification *out);
/// Lets the call run as if no filter stood in the way (Landlock and permissions still apply).
int mam_notify_continue(int fd, uint64_t id);
/// Fails the call with `error` (a positive errno).
int mam_notify_deny(int fd, uint64_t id, int error);
/// Whether the notification is still pending (the asker has not died or been interrupted).
int mam_notify_valid(int fd, uint64_t id);

/// Reads a NUL-terminated string at `address` in process `pid` (for a path argument).
ssize_t mam_read_string(pid_t pid, uint64_t address, char *buffer, size_t size);

/// What the absolute `path` names as process `pid` sees it (its root, its mount namespace, its
/// links; the last one followed when `follow`): the file's path written to `out`, or -1 with errno.
ssize_t mam_resolve_in_root(pid_t pid, const char *path, int follow, char *out, size_t size);

/// The thread of an app that made a confined call, as the supervisor needs it to perform the
/// call itself (perform.c): its identity for files, its process (pidfd), its root and cwd.
#define MAM_ASKER_GROUPS 64
typedef struct {
    pid_t tid, tgid;
    uid_t fsuid;
    gid_t fsgid;
    unsigned int umask;
    int ngroups;
    gid_t groups[MAM_ASKER_GROUPS];
    int pidfd, root, cwd;   // O_PATH of the thread's root and working directory
} mam_asker;

/// Gives the calling thread its own umask and working directory (unshare CLONE_FS): required
/// before any mam_do_* call, which sets the app's umask. 0 or -1 with errno.
int mam_private_fs(void);
/// Reads thread `tid`'s identity (its process, root and cwd are opened when first needed).
/// 0 or -1 with errno.
/// The caller checks the notification is still pending afterwards (the tid may have been reused).
int mam_asker_open(pid_t tid, mam_asker *a);
void mam_asker_close(mam_asker *a);
/// The thread's working directory (O_PATH, the asker's: not to be closed), or -1 with errno.
int mam_asker_cwd(const mam_asker *a);
/// A duplicate of the app's descriptor `number` (pidfd_getfd): the same open file, which no
/// later dup2 in the app can change. -1 with errno.
int mam_asker_descriptor(const mam_asker *a, int number);
/// What `path` (from the app's descriptor `dirfd`, or its cwd for AT_FDCWD) names as the app
/// sees it, as an O_PATH descriptor; the last link followed when `follow`. -1 with errno.
/// `resolve`: an openat2 caller's RESOLVE_* flags (0 otherwise).
int mam_asker_resolve(const mam_asker *a, int dirfd, const char *path, int follow, uint64_t resolve);
/// The same from a descriptor of the supervisor's own (a link's folder).
int mam_asker_resolve_at(const mam_asker *a, int base, const char *path, int follow, uint64_t resolve);
/// The folder `path`'s last name is in (O_PATH, a directory) and that name, with any trailing
/// slashes, in `name`. -1 with errno: EINVAL for a last name "." or "..", EBUSY for "/".
int mam_asker_parent(const mam_asker *a, int dirfd, const char *path, uint64_t resolve, char *name, size_t size);
int mam_asker_parent_at(const mam_asker *a, int base, const char *path, uint64_t resolve, char *name, size_t size);
/// The path of one of the supervisor's descriptors (its /proc link). -1 with errno.
ssize_t mam_descriptor_path(int fd, char *out, size_t size);

/// Calls performed for the app on files already judged, with the app's fsuid, fsgid, groups and
/// umask and no effective capability, on the calling thread only. The result, or -errno.
long mam_do_flock(const mam_asker *a, int fd, int operation);  // never waits (LOCK_NB added)
long mam_do_ofd_lock(const mam_asker *a, int fd, int command, struct flock *lock);
long mam_do_xattr(const mam_asker *a, int fd, const char *name, const void *value, size_t size, int flags, int remove);
long mam_do_utimens(const mam_asker *a, int fd, const struct timespec *times);
long mam_do_inotify(const mam_asker *a, int inotify, int fd, uint32_t mask);
long mam_do_truncate(const mam_asker *a, int fd, long long length);
long mam_do_mkdir(const mam_asker *a, int parent, const char *name, mode_t mode);
long mam_do_mknod(const mam_asker *a, int parent, const char *name, mode_t mode, dev_t dev);
long mam_do_unlink(const mam_asker *a, int parent, const char *name, int flags);
long mam_do_rename(const mam_asker *a, int from, const char *fromName, int to, const char *toName, unsigned flags);
long mam_do_symlink(const mam_asker *a, const char *target, int parent, const char *name);
long mam_do_link(const mam_asker *a, int file, int parent, const char *name);
/// Opens the judged file `fd` again with the app's open flags: a new descriptor or -errno.
long mam_do_reopen(const mam_asker *a, int fd, int flags, mode_t mode);
/// Creates and opens `name` in the judged folder, following no link: a descriptor or -errno.
long mam_do_create(const mam_asker *a, int parent, const char *name, int flags, mode_t mode);

/// Process `pid`'s soft RLIMIT_FSIZE, or -1 when it has none.
long long mam_file_size_limit(pid_t pid);

/// Answers a notification with a return value, or with a failure (`error`, a positive errno).
int mam_notify_answer(int fd, uint64_t id, int64_t value, int error);
/// Puts `file` in the asker's descriptor table and answers the call with its number, at once.
/// The number, or -1 with errno.
int mam_notify_send_fd(int fd, uint64_t id, int file, int cloexec);
/// Reads exactly `size` bytes of process `pid`'s memory. -1 with errno.
ssize_t mam_read_memory(pid_t pid, uint64_t address, void *buffer, size_t size);
/// Writes exactly `size` bytes into process `pid`'s memory. -1 with errno.
ssize_t mam_write_memory(pid_t pid, uint64_t address, const void *buffer, size_t size);

/// The Landlock ABI the kernel offers, or a negative errno.
int mam_landlock_abi(void);
/// Whether a Landlock rule granted on `file` (in `folder`) still lets a child read it once the
/// descriptor the rule was made from is closed (it does not where the file system makes a new
/// inode at each lookup: 9p without a cache, some FUSE; `file` must not be in use, or its cached
/// entry keeps the inode):
/// 1 it holds, 0 it does not (EACCES), or a negative errno (-EOPNOTSUPP: no Landlock). Forks;
/// the child only makes system calls. `fs_type`: the folder's statfs f_type, or 0.
int mam_landlock_rules_hold(const char *folder, const char *file, long *fs_type);

/// Whether the caller can give an app its namespaces (`clone_flags`), mounts and uid `uid`: it
/// checks the capabilities a launch uses and tries the calls in a child that exits at once.
/// 0, or -1 with the reason in `why` (a missing capability, or the call that was refused).
int mam_probe_isolation(int clone_flags, unsigned int uid, char *why, size_t size);

/// Creates (if need be) and opens directory `name` directly beneath `root_fd`, never following a
/// symbolic link or `..` out of it (openat2 RESOLVE_BENEATH). The O_PATH descriptor, or -1 with errno.
int mam_open_beneath(int root_fd, const char *name, int create);
/// Removes everything inside directory `fd` without following symbolic links. 0 or -1 with errno.
int mam_remove_contents(int fd);

/// A new pseudo-terminal: its primary side and its secondary side, both close-on-exec and
/// neither the caller's controlling terminal. 0 or -1 with errno.
int mam_open_pty(int *primary, int *secondary);

/// Whether `fd` is a network namespace (an nsfs descriptor).
int mam_is_net_namespace(int fd);
/// Makes a new, empty network namespace and binds it onto the existing file `path`. 0 or -1 with errno.
int mam_pin_empty_net_namespace(const char *path);

/// Exports a libseccomp filter context as a classic BPF program into `buffer` (malloc'd).
int mam_seccomp_export(void *ctx, void **buffer, size_t *length);

#endif

/// libseccomp's version (a pointer to its static struct) and API level, for `doctor`.
const void *mam_seccomp_version(void);
unsigned int mam_seccomp_api_level(void);

/// Whether this process may install seccomp filters (PR_GET_SECCOMP answers).
int mam_seccomp_filters_supported(void);

/// clone(2)'s namespace flags, by the kernel's names (Namespaces in MAMSandbox; isolation.c).
extern const int mam_clone_newns, mam_clone_newcgroup, mam_clone_newuts, mam_clone_newipc, mam_clone_newuser,
    mam_clone_newpid, mam_clone_newnet, mam_clone_newtime;

static const int mam_rlimit_nproc = RLIMIT_NPROC;
static const int mam_rlimit_as = RLIMIT_AS;
static const int mam_rlimit_nofile = RLIMIT_NOFILE;
static const int mam_rlimit_fsize = RLIMIT_FSIZE;
static const int mam_rlimit_core = RLIMIT_CORE;

/// Connects a SOCK_SEQPACKET Unix socket to `path`; the descriptor or -1 with errno.
int mam_connect_seqpacket(const char *path);
/// Sends one message, with descriptor `fd` attached when `fd` >= 0. 0 or -1 with errno.
int mam_send_with_fd(int socket, const void *bytes, size_t length, int fd);
/// A connected SOCK_SEQPACKET pair (close-on-exec). 0 or -1 with errno.
int mam_seqpacket_pair(int fds[2]);

/// Binds and listens on a SOCK_SEQPACKET Unix socket at `path` (replacing a stale one).
int mam_listen_seqpacket(const char *path, int backlog);
/// Receives one message into `buffer`; a descriptor that came with it lands in `*fd` (else -1).
/// Returns the message length, 0 at end of stream, or -1 with errno.
ssize_t mam_receive_with_fd(int socket, void *buffer, size_t size, int *fd);
