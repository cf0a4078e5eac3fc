// C that bench-broker calls: the D-Bus client (sd-bus) and CPU pinning.
#ifndef MAM_BENCH_H
#define MAM_BENCH_H
#include <stddef.h>
#include <stdint.h>

/// Pins the calling thread, and what it starts from now on, to `cpu`. 0 or -1 with errno.
int mam_bench_pin_cpu(int cpu);

/// A client of mambenchpeer's D-Bus echo service.
typedef struct mam_bench_dbus mam_bench_dbus;

/// Connects to the bus at `address`. NULL on failure, with the reason in `why` (`why_size` bytes).
mam_bench_dbus *mam_bench_dbus_open(const char *address, char *why, size_t why_size);

/// One method call, Echo(ay) -> ay, and its reply: 0 when the same number of bytes came back,
/// else -1 with the reason in `why`.
int mam_bench_dbus_echo(mam_bench_dbus *client, const uint8_t *bytes, size_t size, char *why, size_t why_size);

void mam_bench_dbus_close(mam_bench_dbus *client);
#endif
