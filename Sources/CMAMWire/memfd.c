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
