// Linux calls that Swift's Glibc module does not expose (they need _GNU_SOURCE).
#ifndef MAM_WIRE_H
#define MAM_WIRE_H
/// A sealable, close-on-exec memfd, or -1 with errno.
int mam_memfd_sealable(const char *name);
#endif
