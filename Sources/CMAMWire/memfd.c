#define _GNU_SOURCE
#include "mam_wire.h"
#include <sys/mman.h>

int mam_memfd_sealable(const char *name) { return memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING); }
