// mambenchpeer: the processes `mamlaunch bench-broker` measures the broker against. Not meant to
// be run by hand; `mamlaunch bench-broker --help` says what each comparison is.
#define _GNU_SOURCE
#include "peer.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static const char usage[] =
    "usage: mambenchpeer seqpacket-echo        (the socket is descriptor 0)\n"
    "       mambenchpeer seqpacket-answer      (answers each packet with the first one)\n"
    "       mambenchpeer dbus-echo ADDRESS\n"
    "       mambenchpeer guard PROGRAM [ARG...]\n"
    "The peers of `mamlaunch bench-broker`; each ends when the bench that started it ends.\n";

int main(int argc, char **argv) {
    // Whatever way the bench ends, even killed outright, its peers must not outlive it. The
    // parent-death signal survives exec, so `guard` lends it to programs we do not build
    // (dbus-daemon, mambroker). The bench names itself in MAMLAB_BENCH_PID: if our parent is
    // no longer that process, the bench ended before the signal was armed.
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0) { perror("mambenchpeer: prctl"); return 1; }
    const char *bench = getenv("MAMLAB_BENCH_PID");
    if (bench && atol(bench) != (long)getppid()) return 1;
    unsetenv("MAMLAB_BENCH_PID");

    if (argc == 2 && strcmp(argv[1], "seqpacket-echo") == 0) return peer_seqpacket_echo(0);
    if (argc == 2 && strcmp(argv[1], "seqpacket-answer") == 0) return peer_seqpacket_echo(1);
    if (argc == 3 && strcmp(argv[1], "dbus-echo") == 0) return peer_dbus_echo(argv[2]);
    if (argc >= 3 && strcmp(argv[1], "guard") == 0) {
        execvp(argv[2], argv + 2);
        fprintf(stderr, "mambenchpeer: cannot run %s: %s\n", argv[2], strerror(errno));
        return 127;
    }
    fputs(usage, stderr);
    return 2;
}
