#define _GNU_SOURCE
#include "mam_sandbox.h"
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

// The kernel resolves the path from the process's own root, in its mount namespace, links and
// all (RESOLVE_IN_ROOT: an absolute link is taken from that root, as the process would), and
// the descriptor's name is the file's path in that namespace. The launcher's own view would
// miss what exists only in the app's namespace (a link in its tmpfs container).
ssize_t mam_resolve_in_root(pid_t pid, const char *path, int follow, char *out, size_t size) {
    char root_path[64];
    snprintf(root_path, sizeof root_path, "/proc/%d/root", (int)pid);
    int root = open(root_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0) return -1;
    struct open_how how = { .flags = O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW),
                            .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
    int fd = (int)syscall(SYS_openat2, root, path, &how, sizeof how);
    int e = errno;
    close(root);
    if (fd < 0) { errno = e; return -1; }
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(self, out, size - 1);
    e = errno;
    close(fd);
    if (n < 0) { errno = e; return -1; }
    out[n] = 0;
    return n;
}
