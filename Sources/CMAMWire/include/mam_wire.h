// Linux calls that Swift's Glibc module does not expose (they need _GNU_SOURCE).
#ifndef MAM_WIRE_H
#define MAM_WIRE_H
/// A sealable, close-on-exec memfd, or -1 with errno.
int mam_memfd_sealable(const char *name);

/// accept4 with SOCK_CLOEXEC; the connection or -1 with errno.
int mam_accept(int listener);
/// The pid of the process at the other end of a Unix socket (SO_PEERCRED), or -1.
int mam_peer_pid(int fd);
#endif
