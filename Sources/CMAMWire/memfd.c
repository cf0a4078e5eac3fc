#define _GNU_SOURCE
#include "mam_wire.h"
#include <sys/mman.h>

int mam_memfd_sealable(const char *name) { return memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING); }

#include <stddef.h>
#include <sys/socket.h>

int mam_accept(int listener) { return accept4(listener, NULL, NULL, SOCK_CLOEXEC); }

int mam_peer_pid(int fd) {
    struct ucred cred;
    socklen_t len = sizeof cred;
    return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 ? cred.pid : -1;
}

long mam_peer_uid(int fd) {
    struct ucred cred;
    socklen_t len = sizeof cred;
    return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 ? (long)cred.uid : -1;
}

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int mam_wire_open_beneath(int dirfd, const char *path, int flags, unsigned int mode) {
    struct open_how how = {0};
    how.flags = (unsigned long long)(flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
    long fd;
    do { fd = syscall(SYS_openat2, dirfd, path, &how, sizeof how); } while (fd < 0 && errno == EINTR);
    return (int)fd;
}

int mam_mkdir_beneath(int dirfd, const char *name, unsigned int mode) {
    if (mkdirat(dirfd, name, mode) == 0) return 0;
    if (errno != EEXIST) return -1;
    int fd = mam_wire_open_beneath(dirfd, name, O_RDONLY | O_DIRECTORY, 0);
    if (fd < 0) return -1;
    close(fd);
    return 0;
}

int mam_rename_in(int dirfd, const char *from, const char *to) { return renameat(dirfd, from, dirfd, to); }

int mam_unlink_in(int dirfd, const char *name) { return unlinkat(dirfd, name, 0); }

int mam_regular_file(int fd, long long *size, long long *allocated) {
    struct stat st;
    if (fstat(fd, &st) != 0) return 0;
    if (size) *size = (long long)st.st_size;
    if (allocated) *allocated = (long long)st.st_blocks * 512;
    return S_ISREG(st.st_mode) ? 1 : 0;
}

long long mam_copy_range(int out, int in, long long offset, long long count) {
    off_t at = (off_t)offset;
    long long done = 0;
    while (done < count) {
        ssize_t n = sendfile(out, in, &at, (size_t)(count - done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return n < 0 ? -1 : done;
        done += n;
    }
    return done;
}

#include <sys/epoll.h>
#include <sys/eventfd.h>

int mam_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int mam_epoll_add(int epoll, int fd) {
    struct epoll_event ev = {0};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.fd = fd;
    return epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &ev);
}

int mam_epoll_del(int epoll, int fd) { return epoll_ctl(epoll, EPOLL_CTL_DEL, fd, NULL); }

int mam_epoll_wait(int epoll, int *fds, int max, int timeout_ms) {
    struct epoll_event events[64];
    if (max > 64) max = 64;
    int n;
    do { n = epoll_wait(epoll, events, max, timeout_ms); } while (n < 0 && errno == EINTR);
    for (int i = 0; i < n; i++) fds[i] = events[i].data.fd;
    return n;
}

int mam_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

#include <sys/timerfd.h>

int mam_timerfd_every(int milliseconds) {
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (fd < 0) return -1;
    struct itimerspec every = {0};
    every.it_interval.tv_sec = milliseconds / 1000;
    every.it_interval.tv_nsec = (long)(milliseconds % 1000) * 1000000L;
    every.it_value = every.it_interval;
    if (timerfd_settime(fd, 0, &every, NULL) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

#include <sys/resource.h>

int mam_thread_nice(int nice) { return setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice); }
