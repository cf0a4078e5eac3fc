// Whether this launcher can really give an app what `isolates` promises: its own namespaces,
// mounts and uid. Being uid 0 is not enough: root in a container usually lacks CAP_SYS_ADMIN
// (and its seccomp profile then refuses namespace flags), so a check of the uid alone made
// `doctor` say "full" where every launch then failed. The trial makes the same calls a launch
// makes (spawn.c's run_child), in a child that exits at once.
#define _GNU_SOURCE
#include "mam_sandbox.h"

#include <errno.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x80
#endif
const int mam_clone_newns = CLONE_NEWNS, mam_clone_newcgroup = CLONE_NEWCGROUP, mam_clone_newuts = CLONE_NEWUTS,
          mam_clone_newipc = CLONE_NEWIPC, mam_clone_newuser = CLONE_NEWUSER, mam_clone_newpid = CLONE_NEWPID,
          mam_clone_newnet = CLONE_NEWNET, mam_clone_newtime = CLONE_NEWTIME;

// The capabilities a launch uses, by bit, with what each is for.
static const struct { int bit; const char *name; } needed[] = {
    { 21, "CAP_SYS_ADMIN" },   // the app's namespaces and mounts
    { 19, "CAP_SYS_PTRACE" },  // the supervisor reads the app's memory (another uid)
    { 7, "CAP_SETUID" },       // the app's own uid
    { 6, "CAP_SETGID" },
    { 0, "CAP_CHOWN" },        // the container handed to that uid
};

int mam_probe_isolation(int clone_flags, unsigned int uid, char *why, size_t size) {
    if (size) why[0] = 0;
    struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    if (syscall(SYS_capget, &header, data) != 0) { snprintf(why, size, "capget: %s", strerror(errno)); return -1; }
    size_t n = 0;
    for (size_t i = 0; i < sizeof needed / sizeof *needed; i++) {
        int bit = needed[i].bit;
        if (data[bit / 32].effective & (1U << (bit % 32))) continue;
        n += (size_t)snprintf(why + n, n < size ? size - n : 0, "%s%s", n ? ", " : "missing capabilities: ", needed[i].name);
    }
    if (n) return -1;
    pid_t pid = (pid_t)syscall(SYS_clone, (unsigned long)(clone_flags | SIGCHLD), NULL, NULL, NULL, 0UL);
    if (pid < 0) { snprintf(why, size, "making the app's namespaces: %s", strerrorname_np(errno)); return -1; }
    if (pid == 0) {
        // Only system calls: the parent may have threads.
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) _exit(10);
        if ((clone_flags & CLONE_NEWPID) && mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) _exit(11);
        // The app's own root: a tmpfs pivoted to (spawn.c, setup_root).
        if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k") != 0 || chdir("/tmp") != 0
            || syscall(SYS_pivot_root, ".", ".") != 0 || umount2(".", MNT_DETACH) != 0) _exit(14);
        if (syscall(SYS_setgroups, 0, NULL) != 0 || syscall(SYS_setresgid, uid, uid, uid) != 0) _exit(12);
        if (syscall(SYS_setresuid, uid, uid, uid) != 0) _exit(13);
        _exit(0);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) { snprintf(why, size, "waitpid: %s", strerror(errno)); return -1; }
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    switch (code) {
    case 0: return 0;
    case 10: snprintf(why, size, "making the app's mounts private was refused"); break;
    case 11: snprintf(why, size, "mounting /proc for the app's PID namespace was refused (a container that masks parts of /proc)"); break;
    case 14: snprintf(why, size, "giving the app a root of its own (a tmpfs and pivot_root) was refused"); break;
    case 12: case 13: snprintf(why, size, "switching to an app uid (%u) was refused (a user namespace that does not map it)", uid); break;
    default: snprintf(why, size, "the trial child ended with status %d", code); break;
    }
    return -1;
}
