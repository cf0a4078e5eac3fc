// Whether Landlock's rules hold on a folder's file system. A rule holds an inode; on a file
// system that makes a new inode at every lookup of the same path (9p mounted without a cache,
// some FUSE file systems) a rule granted on the folder no longer matches the file opened a moment
// later beneath it, and every exec and open of the app's own program fails with EACCES.
#define _GNU_SOURCE
#include "mam_sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

struct mam_ll_probe_attr { uint64_t handled_access_fs; };
struct mam_ll_probe_beneath { uint64_t allowed_access; int32_t parent_fd; } __attribute__((packed));
#define MAM_LL_PROBE_READ_FILE (1ULL << 2)
#define MAM_LL_PROBE_READ_DIR (1ULL << 3)

int mam_landlock_rules_hold(const char *folder, const char *file, long *fs_type) {
    struct statfs fs;
    *fs_type = statfs(folder, &fs) == 0 ? (long)fs.f_type : 0;
    pid_t child = fork();
    if (child < 0) return -errno;
    if (child == 0) {
        // Only system calls here: the parent may have threads.
        struct mam_ll_probe_attr attr = { MAM_LL_PROBE_READ_FILE | MAM_LL_PROBE_READ_DIR };
        int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
        if (ruleset < 0) _exit(3);
        // As the launcher grants an app its program: a rule on the file itself, whose descriptor
        // is closed before the file is looked up again. A rule on the folder would match through
        // the folder's cached entry (pinned while any file beneath it is in use, the launcher's
        // own program included) and say "hold" where every app's exec fails.
        int fd = open(file, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) _exit(4);
        struct mam_ll_probe_beneath rule = { MAM_LL_PROBE_READ_FILE, fd };
        if (syscall(SYS_landlock_add_rule, ruleset, 1, &rule, 0) != 0) _exit(5);
        close(fd);
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) _exit(6);
        fd = open(file, O_RDONLY | O_CLOEXEC);
        _exit(fd >= 0 ? 0 : (errno == EACCES ? 1 : 7));
    }
    int status = 0;
    while (waitpid(child, &status, 0) < 0) if (errno != EINTR) return -errno;
    if (!WIFEXITED(status)) return -ECHILD;
    switch (WEXITSTATUS(status)) {
    case 0: return 1;
    case 1: return 0;
    case 3: return -EOPNOTSUPP;
    default: return -EIO;
    }
}
