// Linux calls that Swift's Glibc module does not expose (they need _GNU_SOURCE).
#ifndef MAM_WIRE_H
#define MAM_WIRE_H
/// A sealable, close-on-exec memfd, or -1 with errno.
int mam_memfd_sealable(const char *name);

/// accept4 with SOCK_CLOEXEC; the connection or -1 with errno.
int mam_accept(int listener);
/// The pid of the process at the other end of a Unix socket (SO_PEERCRED), or -1.
int mam_peer_pid(int fd);
/// The uid of a connected Unix socket's peer (SO_PEERCRED), -1 with errno set on failure.
long mam_peer_uid(int fd);

/// openat2(2) beneath `dirfd`: no `..` out, no symlinks, no magic links, no other mounts'
/// tricks. The descriptor or -1 with errno.
int mam_wire_open_beneath(int dirfd, const char *path, int flags, unsigned int mode);
/// mkdirat beneath `dirfd` (one component); 0 when made or already a directory, else -1.
int mam_mkdir_beneath(int dirfd, const char *name, unsigned int mode);
/// renameat within one directory; 0 or -1 with errno.
int mam_rename_in(int dirfd, const char *from, const char *to);
/// unlinkat within one directory; 0 or -1 with errno.
int mam_unlink_in(int dirfd, const char *name);
/// Whether `fd` is a regular file; its size and allocated bytes through the pointers.
int mam_regular_file(int fd, long long *size, long long *allocated);
/// sendfile of `count` bytes from `in` at `offset` to `out`; bytes copied or -1.
long long mam_copy_range(int out, int in, long long offset, long long count);

/// epoll, level-triggered for reading (and hang-up); the ready descriptors are written to `fds`.
int mam_epoll_create(void);
int mam_epoll_add(int epoll, int fd);
int mam_epoll_del(int epoll, int fd);
int mam_epoll_wait(int epoll, int *fds, int max, int timeout_ms);
/// A non-blocking, close-on-exec eventfd.
int mam_eventfd(void);
/// A non-blocking, close-on-exec timerfd that becomes readable every `milliseconds`, or -1.
int mam_timerfd_every(int milliseconds);
/// Lowers the calling thread's CPU priority (Linux nice is per thread); 0 or -1.
int mam_thread_nice(int nice);
/// The audit log's committed length: stored after the record it commits (release), loaded
/// before the records it covers are read (acquire). One aligned 8-byte store, so a process
/// killed at any instant leaves the old value or the new one, never a mix.
static inline void mam_store_release_u64(void *p, unsigned long long v) { __atomic_store_n((unsigned long long *)p, v, __ATOMIC_RELEASE); }
static inline unsigned long long mam_load_acquire_u64(const void *p) { return __atomic_load_n((const unsigned long long *)p, __ATOMIC_ACQUIRE); }

#endif
